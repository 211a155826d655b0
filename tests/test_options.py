"""Benchmark options as the core's classes: built from keywords, validated
once in C++ with the agreed UsageError, and checked before any device opens."""

import pytest
from fpgacomm import _core, collectives, onesided, osu, params
from fpgacomm.benchmarks import beff, schema


def refused(options, message: str) -> None:
    with pytest.raises(_core.UsageError, match=message) as caught:
        options.validate()
    assert caught.value.agreed


def test_keywords_set_fields_and_the_rest_keep_their_defaults():
    counts = _core.IterationCounts(iterations=5, warmup=1, iterations_large=2, warmup_large=0)
    options = _core.Pt2ptOptions(
        test="bw", send_kind="D", sizes=[1, 8], counts=counts, transfer=_core.TransferOptions(path="staged", slots=2)
    )
    assert (options.test, options.send_kind, options.recv_kind, options.sizes) == ("bw", "D", "H", [1, 8])
    assert (options.counts.iterations, options.counts.large_threshold) == (5, _core.LARGE_MESSAGE)
    assert (options.transfer.path, options.transfer.slots, options.transfer.chunk_bytes) == ("staged", 2, 0)
    assert options.window == osu.DEFAULT_WINDOW == 64 and options.datatype == "MPI_CHAR"
    options.validate()
    with pytest.raises(TypeError, match="Pt2ptOptions has no field 'windows'"):
        _core.Pt2ptOptions(windows=4)


def test_large_message_and_memory_kinds_come_from_the_core():
    assert params.LARGE_MESSAGE == _core.LARGE_MESSAGE == 8192
    assert params.MEMORY_KINDS == ("H", "H!", "D", "B", "P") and params.HOST_KINDS == ("H", "H!")
    counts = params.iteration_counts((10, 1, 3, 0), None, None)
    assert [counts.timed(8192), counts.untimed(8192), counts.timed(8193), counts.untimed(8193)] == [10, 1, 3, 0]
    assert params.counts_params(params.iteration_counts((10, 1, 3, 0), 7, 2)) == {
        "iterations": 7,
        "warmup": 2,
        "iterations_large": 7,
        "warmup_large": 2,
    }


def test_a_bad_name_is_refused_when_set():
    with pytest.raises(_core.UsageError, match="unknown memory kind 'X'") as caught:
        _core.CollectiveOptions(kind="X")
    assert caught.value.agreed
    with pytest.raises(_core.UsageError, match="unknown transfer path 'fast'; choose staged, mapped or auto") as caught:
        _core.TransferOptions(path="fast")
    assert caught.value.agreed
    with pytest.raises(
        _core.UsageError, match=r"unknown datatype 'mpi_double'; choose mpi_char, mpi_int, mpi_float \(-T\)"
    ):
        _core.Pt2ptOptions(datatype="mpi_double")


def test_validate_names_the_problem_and_the_fix():
    refused(
        _core.Pt2ptOptions(test="pingpong", sizes=[8]),
        "unknown point-to-point test 'pingpong'; choose latency, multi_lat, bw, bibw, mbw_mr$",
    )
    refused(_core.Pt2ptOptions(window=0, sizes=[8]), "window size must be at least 1, got 0$")
    refused(_core.Pt2ptOptions(sizes=[]), "no message sizes to run")
    refused(_core.Pt2ptOptions(sizes=[1, 2], datatype="mpi_int"), r"holds one MPI_INT \(4 bytes\)")
    refused(_core.IterationCounts(iterations=0), "iterations -i must be at least 1")
    refused(
        _core.CollectiveOptions(op="allgather", root=0, sizes=[8]),
        f"osu allgather has no root; --root applies to {', '.join(collectives.ROOTED)}$",
    )
    refused(
        _core.CollectiveOptions(op="scan", sizes=[8]),
        f"unknown collective 'scan'; choose {', '.join(collectives.TESTS)}$",
    )
    refused(
        _core.OneSidedOptions(test="put_bibw", sync="lock", sizes=[8]),
        r"osu put_bibw takes -s pscw or fence \(both ranks put at once\), as OMB, not -s lock$",
    )
    refused(
        _core.OneSidedOptions(window_creation="shared", sizes=[8]),
        r"unknown window creation 'shared'; choose allocate, create, dynamic \(-w\)$",
    )
    refused(
        _core.GatherOptions(sizes=[8], stages=[], mpi_collective=""),
        "give either the stages of a schedule or an MPI collective",
    )
    refused(_core.BeffOptions(sizes=[1], loop_lengths=[1], target_time=0.0), "--target-time must be positive, got 0.0$")


def test_the_choices_are_the_cores():
    assert collectives.TESTS == tuple(_core.collective_ops())
    assert collectives.ROOTED == tuple(entry.name for entry in _core.collectives() if entry.rooted)
    assert onesided.SYNC == ("flush", "lock", "flush_local", "lock_all", "pscw", "fence")
    assert onesided.WINDOW_CREATION == ("allocate", "create", "dynamic")
    assert _core.OneSidedOptions(test="put_bibw").sync == "pscw"
    assert _core.OneSidedOptions(test="get_bw", sync="fence").sync == "fence"


@pytest.mark.parametrize(
    "run,message",
    [
        (lambda: osu.run("bw", mem=("D", "D"), window=0, sizes=[8]), "window size must be at least 1"),
        (lambda: osu.run("ping", mem=("D", "D"), sizes=[8]), "unknown point-to-point test 'ping'"),
        (lambda: collectives.run("allgather", mem="D", root=1, sizes=[8]), "osu allgather has no root"),
        (lambda: collectives.allgather(None, collectives.CollectiveOptions(mem="D", root=1, sizes=[8])), "no root"),
        (lambda: collectives.allreduce(mem="D", sizes=[8], validation_warmup=11), "-u must be 0 to 10"),
        (lambda: collectives.allreduce(mem="D", sizes=[1], datatype="mpi_int"), "holds one MPI_INT"),
        (lambda: onesided.run("put_bibw", mem="D", sync="flush", sizes=[8]), "osu put_bibw takes -s pscw or fence"),
        (lambda: beff.run(comm_type="pcie", max_size=4, repetitions=0), "repetitions -n must be at least 1, got 0$"),
        (lambda: beff.run(None, beff.BeffOptions(comm_type="kernel", target_time=0)), "--target-time must be positive"),
        (lambda: beff.run(comm_type="pcie", ring_order="rank"), r"unknown ring order 'rank'; choose random or natural"),
        # An options object and keywords alike.
        (lambda: osu.run("bw", None, osu.OsuOptions(mem=("D", "D"), window=0, sizes=[8])), "window size must be at"),
        (lambda: osu.bw(None, osu.OsuOptions(mem=("D", "D"), sizes=[8]), window=0), "window size must be at least 1"),
        (lambda: osu.mbw_mr(mem=("D", "D"), sizes=[8], pairs=0), "-p takes the number of pairs, at least 1, got 0$"),
        (lambda: osu.bw(mem=("D", "D"), sizes=[8], print_rate=False), r"-R \(print the message rate\) applies to"),
        (lambda: osu.latency(mem=("D", "D"), sizes=[8], validation_warmup=11), "-u must be 0 to 10"),
        (lambda: onesided.put_bibw(None, onesided.OneSidedOptions(mem="D", sizes=[8]), sync="flush"), "takes -s pscw"),
    ],
)
def test_options_are_refused_before_any_device_opens(monkeypatch, run, message):
    def no_device(*args, **kwargs):
        raise AssertionError("a device was opened before the options were validated")

    for module in (osu, collectives, onesided, beff):
        monkeypatch.setattr(module, "open_device_if", no_device)
    monkeypatch.setattr("fpgacomm.runtime.devices.open_device", no_device)
    with pytest.raises(_core.UsageError, match=message) as caught:
        run()
    assert caught.value.agreed


def test_each_osu_familys_options_are_one_schema():
    """OsuOptions, CollectiveOptions and OneSidedOptions declare each option
    once: their defaults are the core's, run() and every test function take
    one or its fields as keywords, and `fpgacomm osu`'s flags come from
    their fields."""
    import dataclasses
    import inspect

    from fpgacomm.cli import osu as cli_osu

    core = _core.Pt2ptOptions()
    defaults = osu.OsuOptions()
    assert (defaults.window, defaults.validation_warmup) == (core.window, core.validation_warmup)
    assert defaults.datatype == core.datatype.lower() == params.DATATYPES[0]
    assert (onesided.OneSidedOptions().window_creation, onesided.OneSidedOptions().mem) == ("allocate", "H")
    core, defaults = _core.CollectiveOptions(), collectives.CollectiveOptions()
    assert (defaults.root, defaults.validation_warmup, defaults.mem) == (core.root, core.validation_warmup, core.kind)
    assert defaults.datatype == core.datatype.lower() and defaults.mem_limit == collectives.MEM_LIMIT
    for options, functions in (
        (osu.OsuOptions, (osu.run, osu.bw, osu.mbw_mr)),
        (onesided.OneSidedOptions, (onesided.run, onesided.get_bw)),
        (collectives.CollectiveOptions, (collectives.run, collectives.allreduce, collectives.barrier)),
    ):
        fields = [field.name for field in dataclasses.fields(options)]
        for function in functions:
            keywords = inspect.signature(function).parameters
            assert [name for name in keywords if name in fields] == fields and "on_row" in keywords
            assert all(f"\n{name}" in function.__doc__ for name in fields), function
    pt2pt = {"window", "validate", "datatype", "validation_warmup", "pairs", "vary_window", "print_rate"}
    assert cli_osu._FLAGS["pt2pt"].keys() == pt2pt
    assert cli_osu._FLAGS["onesided"].keys() == {"window", "validate", "window_creation", "sync"}
    assert cli_osu._FLAGS["collective"].keys() == {"root", "validate", "datatype", "validation_warmup", "mem_limit"}
    with pytest.raises(TypeError, match="OsuOptions has no option 'windows'"):
        osu.run("bw", windows=4)
    with pytest.raises(TypeError, match="options must be a OsuOptions, got dict"):
        osu.run("bw", None, {"window": 4})
    with pytest.raises(TypeError, match="CollectiveOptions has no option 'kind'"):
        collectives.allreduce(kind="D")


def test_the_fields_reach_the_cores_options():
    from fpgacomm.runtime.devices import DeviceOptions

    options = osu.OsuOptions(sizes=[8], pairs=2, vary_window=True, validation_warmup=3, datatype="mpi_int", touch=True)
    core = osu._core_options("mbw_mr", options, DeviceOptions())
    assert (core.pairs, core.vary_window, core.validation_warmup, core.datatype, core.touch, core.print_rate) == (
        2,
        True,
        3,
        "MPI_INT",
        True,
        True,
    )
    assert (core.test, core.sizes, core.validation, core.window) == ("mbw_mr", [8], False, osu.DEFAULT_WINDOW)
    one = onesided.OneSidedOptions(sizes=[8], window=4, window_creation="create", sync="fence")
    core = schema.core_options(one, _core.OneSidedOptions, test="put_bw")
    assert (core.window, core.window_creation, core.sync, core.sizes) == (4, "create", "fence", [8])
    many = collectives.CollectiveOptions(sizes="8", root=1, datatype="mpi_float", validation_warmup=2, mem_limit=4)
    core = schema.core_options(many, _core.CollectiveOptions, op="bcast", sizes=[8])
    assert (core.root, core.datatype, core.validation_warmup, core.kind) == (1, "MPI_FLOAT", 2, "H")


def test_beffs_options_are_one_schema():
    """beff.BeffOptions declares each b_eff option once: the defaults the
    core's BeffOptions holds are its, run() takes the object or its fields
    as keywords, `fpgacomm beff`'s flags are its fields, and the comm type
    has one check, the core's, with one message."""
    import dataclasses
    import inspect

    from fpgacomm.cli.beff import _FLAGGED
    from fpgacomm.cli.command import build_parser
    from fpgacomm.runtime.devices import DeviceOptions

    core, defaults = _core.BeffOptions(), beff.BeffOptions()
    assert (defaults.target_time, defaults.repetitions, defaults.validation_iterations, defaults.upper) == (
        core.target_time,
        core.repetitions,
        core.validation_iterations,
        core.max_loop_length,
    )
    assert beff.COMM_TYPES == (*_core.beff_types(), "sim")
    fields = [field.name for field in dataclasses.fields(beff.BeffOptions)]
    keywords = inspect.signature(beff.run).parameters
    assert [name for name in keywords if name in fields] == fields and "on_progress" in keywords
    assert all(f"\n{name}" in beff.run.__doc__ for name in fields)
    # `fpgacomm beff`'s flags: every field but these, each with its default on the command line.
    assert set(fields) - set(_FLAGGED) == {"rounds", "round_seed", "limits", "device"}
    args = build_parser().parse_args(["beff"])
    assert {name: getattr(args, name) for name in _FLAGGED} == {
        name: schema.cli_default(field) for name, field in _FLAGGED.items()
    }
    assert (args.chunk_bytes, args.slots, args.repetitions) == ("auto", "auto", core.repetitions)
    message = "unknown b_eff communication type 'gpu'; choose cpu, pcie, kernel, iec or sim$"
    for run in (lambda: beff.run(comm_type="gpu"), lambda: _core.BeffOptions(type="gpu")):
        with pytest.raises(_core.UsageError, match=message) as caught:
            run()
        assert caught.value.agreed
    with pytest.raises(TypeError, match="BeffOptions has no option 'ring'"):
        beff.run(ring="natural")
    with pytest.raises(TypeError, match="options must be a BeffOptions, got dict"):
        beff.run(None, {"max_size": 4})
    core, rule = beff._core_options(beff.BeffOptions(comm_type="sim", max_size=2, upper=64, lower=8), DeviceOptions())
    assert (core.type, core.sizes, core.max_loop_length, rule) == ("cpu", [1, 2, 4], 64, "adaptive")
