"""Rounds (--rounds N): N complete sweeps in one job, sizes in an order
shuffled per round, medians with every round kept, the interval of the
median and the spread; and the machine's state every Result records."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from fpgacomm import Result, _core
from fpgacomm.benchmarks.sweep import round_orders
from fpgacomm.cli.command import parse_arguments
from fpgacomm.results import rounds, stats
from fpgacomm.results.report import format_text
from fpgacomm.runtime import environment
from loaded import without_load_warning

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PYTHONUNBUFFERED="1")
HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------ statistics


def test_median_interval_from_order_statistics_by_hand():
    # n = 9: P(B <= 1) = 10/512, so [x(2), x(8)] covers the median with
    # 1 - 20/512 = 96.09 %; k = 3 would give 1 - 2 * 46/512 = 82 %.
    values = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0]
    assert stats.median(values) == 5.0
    assert stats.median_ci(values) == (2.0, 8.0, pytest.approx(1 - 20 / 512))
    # n = 6, the fewest for 95 %: the range, 1 - 2/64 = 96.875 %.
    assert stats.median_ci([4.0, 1.0, 3.0, 2.0, 6.0, 5.0]) == (1.0, 6.0, pytest.approx(0.96875))
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    # n = 5 cannot reach 95 %: the range, covering 1 - 2/32 = 93.75 %.
    low, high, coverage = stats.median_ci([5.0, 1.0, 2.0, 4.0, 3.0])
    assert (low, high) == (1.0, 5.0) and coverage == pytest.approx(0.9375) and coverage < 0.95
    assert stats.rounds_needed() == 6
    assert stats.spread([10.0, 12.0, 11.0]) == pytest.approx(2 / 11)
    with pytest.raises(ValueError):
        stats.median_ci([])


# ------------------------------------------------------------ Result


def _result_of_rounds(partial: bool = False) -> Result:
    """A hand-made Result of 3 rounds (the last row with 2 where partial)."""
    rows = [
        {
            "size": 1,
            "latency_avg": 2.0e-6,
            "iterations": 10,
            "validation": None,
            "rounds": {"latency_avg": [3.0e-6, 2.0e-6, 1.5e-6], "busbw": [None, 1.0, 2.0]},
            "busbw": 1.0,
        },
        {
            "size": 8,
            "latency_avg": 2.5e-6,
            "iterations": 10,
            "validation": None,
            "rounds": {
                "latency_avg": [2.0e-6, 3.0e-6] + ([] if partial else [2.5e-6]),
                "busbw": [4.0, 5.0] + ([] if partial else [6]),
            },
            "busbw": 5.0,
        },
    ]
    units = {"size": "B", "latency_avg": "s", "iterations": "", "validation": "", "busbw": "B/s"}
    return Result(
        "osu_latency",
        {"test": "latency", "send_kind": "H", "recv_kind": "H", "rounds": 3, "round_seed": 12},
        {"round_loads": [0.5, 0.7, 0.6], "round_orders": [[8, 1], [1, 8], [8, 1]]},
        rows,
        units,
        incomplete="interrupted by SIGINT: 2 of 3 rounds complete; round 3: 1 of 2 sizes" if partial else None,
    )


@pytest.mark.parametrize("partial", [False, True], ids=["complete", "partial"])
def test_rounds_go_through_json_and_csv_unchanged(tmp_path, partial):
    result = _result_of_rounds(partial)
    assert result.columns == ["size", "latency_avg", "iterations", "validation", "busbw"]
    assert result.round_columns == ["latency_avg", "busbw"]
    for name in ("r.json", "r.csv"):
        result.write(tmp_path / name)
        back = Result.read(tmp_path / name)
        assert back.to_dict() == result.to_dict(), name
        assert type(back.rows[1]["rounds"]["busbw"][-1]) is type(result.rows[1]["rounds"]["busbw"][-1])
    header = next(line for line in (tmp_path / "r.csv").read_text().splitlines() if not line.startswith("#"))
    assert header.endswith(
        "rounds[],latency_avg@r1[s],latency_avg@r2[s],latency_avg@r3[s]," "busbw@r1[B/s],busbw@r2[B/s],busbw@r3[B/s]"
    )
    assert result.to_numpy().dtype.names == tuple(result.columns)  # the rounds cell is no column


@pytest.mark.parametrize(
    "cell, message",
    [
        ({"latency_avg": []}, "non-empty list"),
        ({"latency_avg": [1.0, "x"]}, "numbers or None"),
        ({"latency_avg": [True]}, "got bool"),
        ({"nosuch": [1.0]}, "no measured column"),
        ({"latency_avg": [1.0, 2.0], "busbw": [1.0]}, "differ in length"),
        ([1.0, 2.0], "must be a non-empty dict"),
        ({"size": [1]}, "no measured column"),
    ],
)
def test_a_bad_rounds_cell_is_refused(cell, message):
    row = {"size": 1, "latency_avg": 1.0, "busbw": 1.0, "rounds": cell}
    with pytest.raises((TypeError, ValueError), match=message):
        Result("x", {}, {}, [row], {"size": "B", "latency_avg": "s", "busbw": "B/s"})
    with pytest.raises(TypeError, match="a row value must be int, float, str or None"):
        Result("x", {}, {}, [{"size": 1, "other": {"a": [1]}}], {"size": "B", "other": ""})


def test_merge_takes_medians_keeps_every_round_and_orders_by_size():
    units = {"size": "B", "bandwidth": "B/s", "iterations": "", "validation": "", "validation_errors": "B"}

    def round_of(*rows):
        return Result("osu_bw", {"test": "bw"}, {}, [dict(zip(units, row)) for row in rows], units)

    merged = rounds.merge(
        [
            round_of((8, 3.0, 5, "pass", 0), (1, 10.0, 5, "pass", 0)),
            round_of((1, 30.0, 5, "pass", 0), (8, 1.0, 5, "fail", 4)),
            round_of((8, 2.0, 5, "pass", 0), (1, 20.0, 5, "pass", 0)),
        ]
    )
    assert [row["size"] for row in merged.rows] == [1, 8]
    assert merged.rows[0]["bandwidth"] == 20.0 and merged.rows[1]["bandwidth"] == 2.0
    assert merged.rows[0]["rounds"] == {"bandwidth": [10.0, 30.0, 20.0], "validation_errors": [0, 0, 0]}
    assert merged.rows[1]["validation"] == "fail" and merged.rows[1]["validation_errors"] == 4
    assert merged.rows[1]["iterations"] == 5 and isinstance(merged.rows[1]["iterations"], int)


# ------------------------------------------------------------ text


def test_text_with_rounds_shows_medians_interval_and_spread_and_one_round_is_unchanged():
    result = _result_of_rounds()
    text = format_text(result).splitlines()
    assert text[2].startswith(
        "# Rounds: 3, sizes in shuffled order (seed 12); values are medians over rounds; "
        "too few rounds for a 95% interval of the median (6 needed)"
    )
    assert text[3].split() == ["#", "Size", "Avg", "Latency(us)", "Range", "Low(us)", "Range", "High(us)", "Spread(%)"]
    assert text[4].split() == ["1", "2.00", "1.50", "3.00", "75.00"]  # (3 - 1.5) / 2
    six = Result(
        "osu_latency",
        {"test": "latency", "send_kind": "H", "recv_kind": "H", "rounds": 6, "round_seed": 1},
        {},
        [{"size": 4, "latency_avg": 3.5e-6, "rounds": {"latency_avg": [1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6]}}],
        {"size": "B", "latency_avg": "s"},
    )
    lines = format_text(six).splitlines()
    assert "CI95: distribution-free 95% confidence interval of the median" in lines[2]
    assert "CI95 Low(us)" in lines[3] and lines[4].split() == ["4", "3.50", "1.00", "6.00", "142.86"]
    # One round: no line or column of rounds.
    one = Result(
        "osu_latency",
        {"test": "latency", "send_kind": "H", "recv_kind": "H"},
        {},
        [{"size": 4, "latency_avg": 3.5e-6}],
        {"size": "B", "latency_avg": "s"},
    )
    assert format_text(one) == (
        "# OSU MPI Latency Test vunknown (fpgacomm)\n# Datatype: MPI_CHAR.\n"
        f"{'# Size':<10}{'Avg Latency(us)':>20}\n{4:<10}{'3.50':>20}"
    )


def test_an_interrupted_run_shows_each_rows_rounds():
    text = format_text(_result_of_rounds(partial=True)).splitlines()
    assert text[3].split()[-1] == "Rounds" and text[4].split()[-1] == "3" and text[5].split()[-1] == "2"


# ------------------------------------------------------------ the machine


def test_every_result_records_the_machine_and_a_loaded_machine_is_one_warning_line():
    state = environment.machine(1.5, 2.5)
    assert state["cpu_model"] and isinstance(state["cpu_model"], str)
    assert state["cores"] == os.cpu_count() and (state["load_before"], state["load_after"]) == (1.5, 2.5)
    assert state["governor"] is None or isinstance(state["governor"], str)
    assert (
        environment.loaded_warning(3.14, 2)
        == "fpgacomm: warning: load average 3.1 exceeds the 2 cores: figures may be noisy"
    )
    assert environment.loaded_warning(2.0, 2) == "" and environment.loaded_warning(None, 2) == ""
    assert without_load_warning("a\n" + environment.loaded_warning(9, 2) + "\nb\n") == "a\nb\n"


# ------------------------------------------------------------ commands


def fpgacomm(*args, ranks=None, timeout=300, cwd=None):
    command = [sys.executable, "-m", "fpgacomm", *args]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=ENV, cwd=cwd)


@pytest.mark.parametrize("value", ["0", "1.5", "x", "-2"])
def test_bad_rounds_are_one_usage_error(value):
    for command in (["osu", "latency"], ["beff"]):
        run = fpgacomm(*command, "--rounds", value)
        assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
        message = f"--rounds takes a whole number, 1 or more, got '{value}'"
        assert run.stderr.count(message) == 1, run.stderr
    from fpgacomm.benchmarks.sweep import check_rounds

    for rounds_given in (0, 1.5, "3", True):
        with pytest.raises(_core.UsageError, match="rounds must be a whole number of complete sweeps"):
            check_rounds(rounds_given, None)


@pytest.mark.parametrize(
    "command, message",
    [
        (["gather", "--fabric", "vcsn", "--rounds", "2"], "gather: --rounds repeats measurements on real ranks"),
        (
            ["beff", "--comm-type", "sim", "--rounds", "2"],
            "the simulated ring (--comm-type sim) gives the same figures",
        ),
    ],
)
def test_rounds_of_a_simulator_are_refused(command, message):
    """A simulator gives the same figures every time: one usage error, not N equal rounds."""
    run = fpgacomm(*command)
    assert run.returncode == 2 and run.stderr.count(message) == 1 and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["osu", "latency"],
        ["osu", "mbw_mr"],
        ["osu", "allreduce"],
        ["osu", "put_bw"],
        ["beff"],
        ["gather"],
        ["devbw"],
        ["overhead"],
        ["suite", "out"],
    ],
)
def test_every_measuring_command_takes_rounds(argv):
    args = parse_arguments([*argv, "--rounds", "4", "--round-seed", "9"])
    assert (args.rounds, args.round_seed) == (4, 9)
    assert parse_arguments(argv).rounds == 1


SCRIPT = textwrap.dedent("""
    import json, sys
    from mpi4py import MPI
    from fpgacomm import collectives, onesided, osu
    from fpgacomm.benchmarks import beff, devbw, gather, overhead

    comm = MPI.COMM_WORLD
    seen = []  # (incomplete, sizes of the rows) of every Result so far
    runs = {
        "latency": lambda: osu.latency(sizes="1:64", iterations=5, warmup=1, rounds=3,
                                       on_row=lambda so_far: seen.append((so_far.incomplete,
                                                                          [row["size"] for row in so_far.rows]))),
        "mbw_mr": lambda: osu.mbw_mr(sizes="1:8", iterations=5, warmup=1, rounds=3, round_seed=5),
        "allreduce": lambda: collectives.allreduce(sizes="1:8", iterations=5, warmup=1, rounds=3),
        "get_bw": lambda: onesided.get_bw(sizes="1:8", iterations=5, warmup=1, rounds=3),
        "beff": lambda: beff.run(comm, max_size=3, upper=64, lower=8, repetitions=2, rounds=3),
        "gather": lambda: gather.run(comm, mem="H", sizes="1K:2K", iterations=2, warmup=1, rounds=3),
        "devbw": lambda: devbw.run(comm, sizes="1:4", iterations=3, warmup=1, directions=("h2d",),
                                   host_kinds=("H",), rounds=3),
        "overhead": lambda: overhead.run(comm, sizes="1:4", iterations=5, warmup=1, rounds=3),
    }
    out = {}
    for name, run in runs.items():
        result = run()
        every = comm.allgather((result.params["round_seed"], result.env["round_orders"]))
        out[name] = {"same_on_every_rank": all(seen == every[0] for seen in every), "result": result.to_dict()}
    if comm.Get_rank() == 0:
        out["seen"] = seen
        json.dump(out, open(sys.argv[1], "w"))
""")


@pytest.mark.mpi
def test_every_family_runs_its_rounds_in_shuffled_orders_the_same_on_every_rank(tmp_path):
    (tmp_path / "rounds.py").write_text(SCRIPT)
    run = subprocess.run(
        ["mpirun", "-np", "2", sys.executable, str(tmp_path / "rounds.py"), str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads((tmp_path / "o.json").read_text())
    # Rows so far: none before the last round, then those whose every round is done, in size order.
    seen = out.pop("seen")
    assert [state for state, _ in seen] == [
        f"round {r} of 3, {n} of 7 sizes measured" for r in (1, 2, 3) for n in range(1, 8)
    ]
    assert all(not sizes for _, sizes in seen[:14]) and seen[-1][1] == [1, 2, 4, 8, 16, 32, 64]
    last = out["latency"]["result"]["env"]["round_orders"][2]
    for n, (_, sizes) in enumerate(seen[14:], start=1):
        done = set(last[:n])
        assert sizes == [size for size in [1, 2, 4, 8, 16, 32, 64][: len(sizes)]] and set(sizes) <= done
        assert len(sizes) == 7 or [1, 2, 4, 8, 16, 32, 64][len(sizes)] not in done
    for name, record in out.items():
        assert record["same_on_every_rank"], name
        result = Result.from_dict(record["result"])
        planned = result.params["sizes"]
        orders = result.env["round_orders"]
        assert result.params["rounds"] == 3 and len(orders) == 3 and len(result.env["round_loads"]) == 3, name
        assert all(sorted(order) == sorted(planned) for order in orders), name
        assert orders == list(round_orders(planned, 3, result.params["round_seed"])), name
        assert result.rows and all(len(values) == 3 for row in result.rows for values in row["rounds"].values()), name
        sizes = [row["size"] for row in result.rows]
        assert sizes == sorted(sizes) or name in ("devbw",), name
        for row in result.rows:
            for column, values in row["rounds"].items():
                numbers = [value for value in values if value is not None]
                if numbers and row[column] is not None and column != "validation_errors":
                    assert row[column] == pytest.approx(stats.median(numbers)), (name, column)
        machine = result.env["machine"]
        assert machine["cores"] >= 1 and machine["load_before"] is not None and machine["load_after"] is not None
    assert out["mbw_mr"]["result"]["params"]["round_seed"] == 5
    assert len(out["beff"]["result"]["params"]["b_eff_rounds"]) == 3
    assert out["get_bw"]["result"]["rows"][0]["rounds"]["put_bandwidth"]


@pytest.mark.mpi
def test_rows_printed_with_rounds_are_the_text_of_the_result(tmp_path):
    run = fpgacomm(
        "osu",
        "bw",
        "-m",
        "1:256",
        "-i",
        "10",
        "-x",
        "1",
        "--rounds",
        "3",
        "--round-seed",
        "4",
        "--json",
        "bw.json",
        "--csv",
        "bw.csv",
        ranks=2,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    result = Result.read(tmp_path / "bw.json")
    assert run.stdout == format_text(result) + "\n"
    assert without_load_warning(run.stderr).replace("SYCL CPU RT Warning: Unknown host CPU.\n", "") == ""
    assert Result.read(tmp_path / "bw.csv").to_dict() == {**result.to_dict(), "samples": None}
    assert result.env["round_orders"] == list(round_orders(result.params["sizes"], 3, 4))


@pytest.mark.mpi
def test_an_interrupt_keeps_every_round_measured_and_says_how_far_it_got(tmp_path):
    """Round 2 of 2 (seed 1054) measures 1 B and 2 B early and 16 MiB and
    8 MiB late: SIGINT to rank 0 once the first row is printed leaves
    round 2 part done."""
    sys.path.insert(0, HERE)
    from processes import GONE_WITHIN, Job, rows_coming

    job = Job(
        "osu",
        "bw",
        "-m",
        "1:16M",
        "-i",
        "10",
        "-x",
        "1",
        "--rounds",
        "2",
        "--round-seed",
        "1054",
        "--json",
        "bw.json",
        cwd=tmp_path,
    )
    job.wait_for(rows_coming(1), timeout=120)
    ended, seconds, _ = job.signal_and_wait("rank0", signal.SIGINT)
    assert ended == 130 and seconds < GONE_WITHIN, job.stderr
    saved = Result.read(tmp_path / "bw.json")
    done = sum(len(row["rounds"]["bandwidth"]) == 2 for row in saved.rows)
    assert saved.incomplete == f"interrupted by SIGINT: 1 of 2 rounds complete; round 2: {done} of 25 sizes"
    assert 1 <= done < 25 and len(saved.rows) == 25
    assert {len(row["rounds"]["bandwidth"]) for row in saved.rows} == {1, 2}
    assert [row["size"] for row in saved.rows] == sorted(saved.params["sizes"])
    twice = [row["size"] for row in saved.rows if len(row["rounds"]["bandwidth"]) == 2]
    assert set(twice) == set(saved.env["round_orders"][1][:done])
    assert f"{saved.incomplete}; saved in bw.json, marked incomplete" in job.stderr


def _one_rank():
    """The communicator of a run on one rank (Rounds checks the rounds' host memory over it)."""
    from mpi4py import MPI

    return MPI.COMM_SELF


def test_an_interrupt_of_a_run_without_per_size_rows_keeps_its_complete_rounds():
    """b_eff, devbw and overhead report whole rounds: an interrupt keeps those complete, merged."""
    from fpgacomm.benchmarks.sweep import Rounds
    from fpgacomm.runtime import interrupts

    plan = Rounds(_one_rank(), [1, 8], rounds=3, round_seed=2)
    results = []
    with pytest.raises(interrupts.Interrupted) as stop:
        with plan.keeping(results):
            for index, order in enumerate(plan.orders()):
                if index == 2:
                    raise interrupts.interrupted(signal.SIGINT)
                results.append(
                    Result(
                        "osu_overhead",
                        {},
                        {},
                        [{"size": size, "send_overhead": size * (index + 1.0)} for size in order],
                        {"size": "B", "send_overhead": "s"},
                    )
                )
    kept = stop.value.result
    assert kept.incomplete == "interrupted by SIGINT: 2 of 3 rounds complete; round 3 not kept"
    assert [row["rounds"]["send_overhead"] for row in kept.rows] == [[1.0, 2.0], [8.0, 16.0]]
    assert kept.params == {"rounds": 3, "round_seed": 2} and len(kept.env["round_orders"]) == 3
    # Every round done (the block makes the run's Result too): kept whole, saying why the run did not end.
    plan = Rounds(_one_rank(), [1, 8])
    with pytest.raises(interrupts.Interrupted) as stop:
        with plan.keeping([Result("x", {}, {}, [{"size": 1}], {"size": "B"})]):
            raise interrupts.interrupted(signal.SIGINT)
    assert stop.value.result.rows == [{"size": 1}]
    assert stop.value.result.incomplete == (
        "interrupted by SIGINT: every size measured; the run was ending (its Result being made or written)"
    )
    # One round cut short: nothing to keep, as without rounds.
    with pytest.raises(interrupts.Interrupted) as stop:
        with plan.keeping([]):
            raise interrupts.interrupted(signal.SIGINT)
    assert getattr(stop.value, "result", None) is None
