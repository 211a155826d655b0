"""OSU Micro-Benchmarks 7.4's command line on every test fpgacomm shares
with it: each option OMB gives a test is taken with OMB's meaning or refused
by name with the reason (status 2, once), and the ones taken do what OMB's do.

OMB_OPTIONS is OMB 7.4's option letters per test, read from its
c/util/osu_util_options.h (the option strings, host and accelerator builds
together; -r is the CUDA-kernel builds' extra for collectives).
"""

import os
import subprocess
import sys

import pytest
from fpgacomm import Result, _core, collectives, osu
from fpgacomm.cli import osu as osu_cli
from fpgacomm.cli.command import parse_arguments

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

_LATENCY = set("hvmxibcuGDPTIzd")
_COLLECTIVE = set("hvfmixMacuGPTIzdr")  # and -D, -l, -k by test below
_ONE_SIDED = set("wshvmxiGIzPd")
OMB_OPTIONS = {
    "latency": _LATENCY,
    "multi_lat": _LATENCY,
    "bw": _LATENCY | {"t", "W"},
    "bibw": _LATENCY | {"t", "W"},
    "mbw_mr": set("pWRximVhvbcuGDPTIzd"),
    "gather": _COLLECTIVE | {"D", "l", "k"},
    "scatter": _COLLECTIVE | {"D", "l", "k"},
    "allgather": _COLLECTIVE | {"D", "l"},
    "alltoall": _COLLECTIVE | {"D", "l"},
    "bcast": _COLLECTIVE | {"D"},
    "reduce": _COLLECTIVE | {"l", "k"},
    "allreduce": _COLLECTIVE | {"l"},
    "reduce_scatter": _COLLECTIVE | {"l"},
    "barrier": set("hvfmixMauGPIzdr"),
    "put_latency": _ONE_SIDED,
    "get_latency": _ONE_SIDED,
    "put_bw": _ONE_SIDED | {"W"},
    "get_bw": _ONE_SIDED | {"W"},
    "put_bibw": _ONE_SIDED | {"W"},
}


def fpgacomm(*args, ranks=None, cwd=None, timeout=300):
    command = [sys.executable, "-m", "fpgacomm", *args]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=ENV, cwd=cwd)


def _test_parser(test):
    from fpgacomm.cli.command import build_parser

    osu_parser = build_parser()._subparsers._group_actions[0].choices["osu"]
    return osu_parser._subparsers._group_actions[0].choices[test]


def test_every_omb_option_of_every_shared_test_is_taken_or_refused_with_its_reason(capsys):
    assert set(OMB_OPTIONS) == set(osu_cli.registry.osu_tests())
    for test, letters in OMB_OPTIONS.items():
        parser = _test_parser(test)
        flags = {flag: action for action in parser._actions for flag in action.option_strings}
        for letter in sorted(letters):
            flag = f"-{letter}"
            assert flag in flags, (test, flag)
            if isinstance(flags[flag], osu_cli._Refuse):
                with pytest.raises(SystemExit) as stop:
                    parse_arguments(["osu", test, flag, "x"])
                assert stop.value.code == 2
                err = capsys.readouterr().err
                assert err.count("error:") == 1 and "OSU Micro-Benchmarks' option for" in err, (test, flag, err)
                assert "fpgacomm does not take it" in err and flags[flag].reason in err
                assert f"{flag}/" in parser.epilog, (test, flag)
    # The three the issue names are refused on every test OMB gives them, for their reasons.
    reasons = {"-P": "PAPI hardware counters", "-I": "MPI sessions", "-D": "derived datatypes"}
    for test, letters in OMB_OPTIONS.items():
        flags = {flag: action for action in _test_parser(test)._actions for flag in action.option_strings}
        for flag, reason in reasons.items():
            if flag[1] in letters:
                assert isinstance(flags[flag], osu_cli._Refuse) and reason in flags[flag].reason, (test, flag)


@pytest.mark.mpi
def test_refusal_under_mpirun_is_one_message_with_status_2():
    run = fpgacomm("osu", "latency", "-D", "vect:8:4", "-m", "8", ranks=2)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("-D/--ddt is OSU Micro-Benchmarks' option for derived datatypes") == 1, run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_v_prints_the_tests_title_and_version_and_exits_0():
    run = fpgacomm("osu", "mbw_mr", "-v", "-m", "8")
    assert run.returncode == 0, run.stderr
    assert run.stdout == (
        f"# OSU MPI Multiple Bandwidth / Message Rate Test v{_core.__version__} (fpgacomm, "
        "the method of OSU Micro-Benchmarks 7.4)\n"
    )


@pytest.mark.mpi
def test_mbw_mr_p_u_and_r0_on_four_ranks(tmp_path):
    """-p 1 of 4 ranks: one pair, ranks 2 and 3 wait; -c -u 2; -R 0: no message rate column."""
    target = tmp_path / "mbw.json"
    run = fpgacomm(
        "osu",
        "mbw_mr",
        "-p",
        "1",
        "-c",
        "-u",
        "2",
        "-R",
        "0",
        "-m",
        "4:8",
        "-i",
        "3",
        "-x",
        "1",
        "-W",
        "4",
        "--json",
        str(target),
        ranks=4,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "# [ pairs: 1 ] [ window size: 4 ]" in lines
    assert lines[lines.index("# Datatype: MPI_CHAR.") + 1].split() == ["#", "Size", "MB/s", "Validation"]
    assert [line.split()[0] for line in lines if line[:1].isdigit()] == ["4", "8"]
    assert all(line.split()[-1] == "Pass" for line in lines if line[:1].isdigit())
    result = Result.read_json(target)
    assert result.params["pairs"] == 1 and result.params["print_rate"] is False
    assert result.params["validation_warmup"] == 2 and result.params["window"] == 4
    assert any(note.startswith("-p 1 runs 1 pair (rank i with rank i+1") for note in result.params["omb_differences"])
    # The rows still hold the rate: bandwidth over size.
    for row in result.rows:
        assert row["message_rate"] == pytest.approx(row["bandwidth"] / row["size"])
    # What the JSON records of the MPI library carries no C terminator.
    assert "\x00" not in result.env["mpi_library"] and result.env["mpi_library"] == result.env["mpi_library"].strip()


@pytest.mark.mpi
def test_mbw_mr_p_beyond_the_ranks_and_u_beyond_10_are_refused():
    # Parameter errors need no ranks to show (one process); -p against the ranks does.
    cases = [
        (("osu", "mbw_mr", "-p", "3", "-m", "8"), 4, "-p 3 pairs rank i with rank i+3 and needs 6 ranks"),
        (("osu", "mbw_mr", "-p", "0", "-m", "8"), None, "-p takes the number of pairs, at least 1, got 0"),
        (("osu", "mbw_mr", "-V", "-W", "8", "-m", "8"), None, "-V cannot be used with -W"),
        (("osu", "latency", "-c", "-u", "11", "-m", "8"), None, "validation warm-up -u must be 0 to 10"),
        (("osu", "allreduce", "-M", "1K", "-m", "2M:2M"), None, "below the smallest size asked (2097152 bytes)"),
    ]
    for args, ranks, message in cases:
        run = fpgacomm(*args, ranks=ranks)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.count(message) == 1 and "Traceback" not in run.stderr, (args, run.stderr)


@pytest.mark.mpi
def test_mbw_mr_v_runs_every_size_at_omb_windows_and_g_draws_each(tmp_path):
    target = tmp_path / "mbw.json"
    run = fpgacomm(
        "osu",
        "mbw_mr",
        "-V",
        "-m",
        "4:4",
        "-i",
        "2",
        "-x",
        "0",
        "-G",
        "png,pdf",
        "--json",
        str(target),
        ranks=2,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    windows = list(osu.VARIED_WINDOWS)
    assert windows == [1, 2, 4, 8, 16, 32, 64, 128]  # OMB's WINDOW_SIZES
    result = Result.read_json(target)
    assert [(row["size"], row["window"]) for row in result.rows] == [(s, w) for s in (4,) for w in windows]
    assert result.params["vary_window"] is True and result.params["window"] == windows
    for row in result.rows:
        assert len(result.samples[osu.sample_key(row["size"], row["window"])]) == 2
    # OMB's text: a bandwidth matrix of sizes by windows, then the message rate profile.
    lines = run.stdout.splitlines()
    assert "# [ pairs: 1 ] [ window size: varied ]" in lines and "# Uni-directional Bandwidth (MB/sec)" in lines
    header = lines.index("# Uni-directional Bandwidth (MB/sec)") + 2
    assert lines[header].split()[1:] == [str(w) for w in windows]
    for offset, size in enumerate((4,)):
        cells = [float(value) for value in lines[header + 1 + offset].split()]
        assert cells[0] == size and len(cells) == 1 + len(windows)
        expected = [row["bandwidth"] / 1e6 for row in result.rows if row["size"] == size]
        assert cells[1:] == pytest.approx(expected, abs=0.006)
    rate = lines.index("# Message Rate Profile")
    assert [float(value) for value in lines[rate + 2].split()][1:] == pytest.approx(
        [row["message_rate"] for row in result.rows if row["size"] == 4], abs=0.006
    )
    # -G: a PNG per size and window, and one PDF with a page each.
    pngs = sorted(path.name for path in tmp_path.glob("*.png"))
    assert pngs == sorted(f"osu_mbw_mr-4-w{w}.png" for w in windows)
    assert all((tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in pngs)
    pdf = (tmp_path / "osu_mbw_mr.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") == len(windows)
    assert osu_cli.GRAPH_DIFFERENCE in result.params["omb_differences"]


@pytest.mark.mpi
def test_m_caps_the_largest_message_with_a_warning_as_omb(tmp_path):
    """gather holds a block per rank (cap -M / ranks), bcast one message (cap -M)."""
    for op, cap in (("gather", 1 << 19), ("bcast", 1 << 20)):
        target = tmp_path / f"{op}.json"
        run = fpgacomm("osu", op, "-M", "1M", "-m", "256K:4M", "-i", "2", "-x", "0", "--json", str(target), ranks=2)
        assert run.returncode == 0, (op, run.stderr)
        warning = f"fpgacomm: warning: limiting the largest message of osu {op} to {cap} bytes"
        assert run.stderr.count(warning) == 1, (op, run.stderr)
        result = Result.read_json(target)
        assert max(row["size"] for row in result.rows) == cap and result.params["mem_limit"] == 1 << 20
        assert [int(line.split()[0]) for line in run.stdout.splitlines() if line[:1].isdigit()][-1] == cap
    # Below OMB's floor of 1 MiB the floor holds, with OMB's warning.
    kept, limit, said = collectives.mem_limit_sizes("allreduce", [1 << 20, 2 << 20], 4, 1000)
    assert (kept, limit) == ([1 << 20], 1 << 20) and "below OSU Micro-Benchmarks' least memory limit" in said[0]
    # The default is OMB's 512 MiB; the barrier has nothing to cap.
    assert collectives.mem_limit_sizes("alltoall", [1 << 27, 1 << 28], 4, collectives.MEM_LIMIT)[0] == [1 << 27]
    assert collectives.mem_limit_sizes("barrier", [0], 64, collectives.MEM_LIMIT)[0] == [0]


@pytest.mark.mpi
def test_u_and_g_on_a_latency_and_a_collective(tmp_path):
    for test in ("latency", "allreduce"):
        target = tmp_path / f"{test}.json"
        run = fpgacomm(
            "osu",
            test,
            "-c",
            "-u",
            "3",
            "-m",
            "1:2",
            "-i",
            "3",
            "-x",
            "1",
            "-G",
            "png",
            "--json",
            str(target),
            ranks=2,
            cwd=tmp_path,
        )
        assert run.returncode == 0, (test, run.stderr)
        result = Result.read_json(target)
        assert result.params["validation_warmup"] == 3 and all(row["validation"] == "pass" for row in result.rows)
        assert any(
            "follows 3 untimed ones (-u 3), where OSU Micro-Benchmarks' -c repeats it 5 times" in note
            for note in result.params["omb_differences"]
        )
        assert sorted(path.name for path in tmp_path.glob(f"osu_{test}-*.png")) == [
            f"osu_{test}-1.png",
            f"osu_{test}-2.png",
        ]
    run = fpgacomm("osu", "latency", "-G", "tty", "-m", "8")
    assert run.returncode == 2 and run.stderr.count("-G tty is OSU Micro-Benchmarks' terminal plot") == 1


def test_k_fixed_is_the_root_and_k_rotate_is_refused(capsys):
    for words, root in ((["-k", "fixed:1"], 1), (["--root-rank", "fixed:0"], 0), (["--root", "1"], 1)):
        assert parse_arguments(["osu", "gather", *words]).root == root
    with pytest.raises(SystemExit) as stop:
        parse_arguments(["osu", "reduce", "-k", "rotate"])
    assert (
        stop.value.code == 2
        and "-k rotate (OSU Micro-Benchmarks' new root every iteration) is not implemented" in capsys.readouterr().err
    )


def test_the_options_reach_the_core():
    options = _core.Pt2ptOptions(test="mbw_mr", sizes=[8], pairs=2, vary_window=True, validation_warmup=0)
    options.validate()
    for wrong, message in (
        ({"test": "bw", "pairs": 1}, "-p \\(pairs\\) applies to osu mbw_mr only"),
        ({"test": "bibw", "vary_window": True}, "-V .* applies to osu mbw_mr only"),
        ({"test": "latency", "validation_warmup": -1}, "-u must be 0 to 10"),
    ):
        with pytest.raises(_core.UsageError, match=message):
            _core.Pt2ptOptions(sizes=[8], **wrong).validate()
    with pytest.raises(_core.UsageError, match="-u must be 0 to 10"):
        _core.CollectiveOptions(sizes=[8], validation_warmup=11).validate()
