"""The fpgacomm command in one process and, where MPI is needed, under mpirun."""

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from fpgacomm import Result, _core, collectives, onesided
from processes import ENV, command, fpgacomm


def test_devices_lists_every_device_with_its_kinds(tmp_path):
    run = fpgacomm("devices", "--json", str(tmp_path / "devices.json"))
    assert run.returncode == 0, run.stderr
    table = [row for row in json.loads((tmp_path / "devices.json").read_text()) if row["api"] == "opencl"]
    assert table, "no OpenCL device found"
    for row in table:
        assert f"platform {row['platform_index']} '{row['platform']}'" in run.stdout
        assert f"device {row['device_index']}: {row['name']}" in run.stdout
        assert row["kinds"][:1] == ["H"] and f"memory kinds: {' '.join(row['kinds'])}" in run.stdout
    # PoCL and NVIDIA's OpenCL give host, pinned and device memory, and no banks.
    assert any(row["kinds"] == ["H", "H!", "D"] for row in table)


def test_console_script_and_version():
    script = Path(sys.executable).parent / "fpgacomm"
    run = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("fpgacomm ")


@pytest.mark.mpi
def test_bad_arguments_exit_2_with_one_message():
    run = fpgacomm("osu", "nosuch")
    assert run.returncode == 2 and "invalid choice: 'nosuch'" in run.stderr
    run = fpgacomm("osu", "bw", "D", ranks=2)
    assert run.returncode == 2
    assert run.stderr.count("give both memory kinds") == 1


@pytest.mark.mpi
def test_osu_bw_prints_omb_text_and_writes_json_and_csv(tmp_path):
    run = fpgacomm(
        "osu",
        "bw",
        "H",
        "D",
        "-m",
        "1K:64K",
        "-i",
        "3",
        "-x",
        "1",
        "-W",
        "4",
        "-c",
        "--json",
        str(tmp_path / "bw.json"),
        "--csv",
        str(tmp_path / "bw.csv"),
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("# OSU MPI-OpenCL Bandwidth Test v")
    assert lines[1] == "# Send Buffer on HOST (H) and Receive Buffer on DEVICE (D)"
    assert "Bandwidth (MB/s)" in lines[3] and "Validation" in lines[3]
    assert [line.split()[0] for line in lines[4:]] == ["1024", "2048", "4096", "8192", "16384", "32768", "65536"]
    assert all(line.split()[-1] == "Pass" for line in lines[4:])
    result = Result.read_json(tmp_path / "bw.json")
    assert result.benchmark == "osu_bw" and result.params["send_kind"] == "H"
    # OSU Micro-Benchmarks' level: what MPI_Init gives.
    assert result.env["mpi_thread_level"] == {"requested": "single", "provided": "single"}
    assert Result.read_csv(tmp_path / "bw.csv").rows == result.rows


@pytest.mark.mpi
def test_kinds_go_before_or_after_the_options_as_in_omb(tmp_path):
    """OSU Micro-Benchmarks takes options first, then the kinds; fpgacomm
    takes them in any order, and still names an unknown option."""
    orders = [
        ("H", "D", "-m", "8:16", "-i", "5"),
        ("-m", "8:16", "-i", "5", "H", "D"),
        ("H", "-m", "8:16", "-i", "5", "D"),
    ]
    for number, order in enumerate(orders):
        target = tmp_path / f"latency{number}.json"
        run = fpgacomm("osu", "latency", *order, "-c", "--json", str(target), ranks=2)
        assert run.returncode == 0, (order, run.stderr)
        result = Result.read_json(target)
        assert (result.params["send_kind"], result.params["recv_kind"]) == ("H", "D"), order
        assert [row["size"] for row in result.rows] == [8, 16]
        assert any("outside the timed region" in note for note in result.params["omb_differences"])
    run = fpgacomm("osu", "latency", "-m", "8", "H", "D", "--bogus", ranks=2)
    assert run.returncode == 2 and "unrecognized arguments: --bogus" in run.stderr


@pytest.mark.mpi
def test_thread_level_is_asked_for_and_recorded(tmp_path):
    target = tmp_path / "bw.json"
    run = fpgacomm("osu", "bw", "-m", "8", "-i", "3", "--thread-level", "funneled", "--json", str(target), ranks=2)
    assert run.returncode == 0, run.stderr
    levels = Result.read_json(target).env["mpi_thread_level"]
    assert levels["requested"] == "funneled" and levels["provided"] in ("funneled", "serialized", "multiple")
    run = fpgacomm("osu", "bw", "--thread-level", "many", ranks=2)
    assert run.returncode == 2 and "invalid choice: 'many'" in run.stderr


def test_another_thread_level_once_mpi_runs_names_both_levels():
    """MPI cannot change its thread level once started: asking is a usage error naming both."""
    code = (
        "import mpi4py; mpi4py.rc.thread_level = 'funneled'\n"
        "from mpi4py import MPI\n"
        "from fpgacomm import _core, mpi\n"
        "assert mpi.init() is MPI  # no level asked for: whatever runs\n"
        "try:\n"
        "    mpi.init(thread_level='single')\n"
        "except _core.UsageError as error:\n"
        "    print(error)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=ENV)
    assert run.returncode == 0, run.stderr
    assert "MPI already runs at thread level" in run.stdout
    assert "cannot give the thread level single asked for" in run.stdout


@pytest.mark.mpi
def test_errors_are_clear_and_leave_no_json(tmp_path):
    target = tmp_path / "out.json"
    too_large = str(2 * _core.select_devices()[0].max_alloc_bytes)  # 4G fits a GPU
    cases = [
        (("osu", "latency", "D", "X"), 2, "unknown memory kind 'X'"),
        (("osu", "latency", "D", "B"), 2, "HBM (B) needs"),
        (("osu", "latency", "-m", "1:2X"), 2, "unknown suffix"),
        (("osu", "bw", "D", "D", "-m", too_large), 2, "largest allocation is"),
    ]
    for args, status, message in cases:
        run = fpgacomm(*args, "--json", str(target), ranks=2)
        assert run.returncode == status, (args, run.stderr)
        assert message in run.stderr and run.stderr.count(message) == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr
        assert not target.exists()


@pytest.mark.mpi
def test_timeline_is_written_for_staged_bandwidth_tests_and_read_by_the_analysis(tmp_path):
    target = tmp_path / "timeline.json"
    run = fpgacomm(
        "osu",
        "bibw",
        "D",
        "D",
        "--path",
        "staged",
        "--chunk",
        "64K",
        "-m",
        "100K:100K",
        "-i",
        "2",
        "-x",
        "1",
        "-W",
        "3",
        "-c",
        "--timeline",
        str(target),
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    timeline = Result.read_json(target)
    assert timeline.benchmark == "osu_bibw_timeline" and timeline.params["chunk_bytes"] == 65536
    # 100 KiB in 64 KiB chunks is 2 per message; 3 messages each way on each rank.
    directions = sorted((row["rank"], row["direction"]) for row in timeline.rows)
    assert directions == sorted([(rank, way) for rank in (0, 1) for way in ("send", "recv")] * 6)
    analysis = fpgacomm("timeline", str(target))
    assert analysis.returncode == 0, analysis.stderr
    for rank in (0, 1):
        assert f"rank {rank}  size 102400 B  12 chunks" in analysis.stdout
    assert analysis.stdout.count("limit: ") == 2 and analysis.stdout.count("d2h  busy") == 2


@pytest.mark.mpi
def test_latency_timeline_records_each_ranks_two_copies_of_the_last_round_trip(tmp_path):
    target = tmp_path / "timeline.json"
    run = fpgacomm(
        "osu",
        "latency",
        "D",
        "D",
        "--path",
        "staged",
        "-m",
        "4:8",
        "-i",
        "3",
        "-x",
        "1",
        "-c",
        "--timeline",
        str(target),
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    timeline = Result.read_json(target)
    assert timeline.benchmark == "osu_latency_timeline"
    # One chunk per message: each rank stages its send to the host and its receive to the device.
    legs = sorted((row["size"], row["rank"], row["direction"]) for row in timeline.rows)
    assert legs == sorted((size, rank, way) for size in (4, 8) for rank in (0, 1) for way in ("send", "recv"))
    for row in timeline.rows:
        assert row["bytes"] == row["size"] and row["offset"] == 0
        assert 0 <= row["copy_enqueued"] <= row["copy_done"] and 0 <= row["mpi_posted"] <= row["mpi_done"]
        # A send copies before MPI takes the chunk; a receive copies after MPI delivered it.
        if row["direction"] == "send":
            assert row["copy_done"] <= row["mpi_posted"]
        else:
            assert row["mpi_done"] <= row["copy_enqueued"]


@pytest.mark.mpi
def test_timeline_is_refused_where_nothing_is_staged(tmp_path):
    target = tmp_path / "timeline.json"
    cases = [
        (("osu", "allreduce", "--mem", "D"), "unrecognized arguments: --timeline"),  # point-to-point only
        (("osu", "bw", "H", "H!"), "neither side stages here (direct to direct); use a device kind"),
        (("osu", "bw", "D", "D", "--path", "mapped"), "neither side stages here (mapped to mapped)"),
    ]
    for args, message in cases:
        run = fpgacomm(*args, "-m", "8", "--timeline", str(target), ranks=2)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.count(message) == 1 and "Traceback" not in run.stderr, (args, run.stderr)
        assert not target.exists()


@pytest.mark.mpi
def test_mapping_errors_under_mpirun():
    env_run = subprocess.run(
        ["mpirun", "-np", "2", sys.executable, "-m", "fpgacomm", "osu", "latency", "D", "D"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(ENV, FPGA_MAPPING="0:7"),
    )
    assert env_run.returncode == 2
    matching = len(_core.select_devices())
    assert f"FPGA_MAPPING maps node-local rank 1 to device 7, but only {matching} device(s) match" in env_run.stderr
    run = fpgacomm("osu", "latency", "D", "D", "--device-map", "0:x", ranks=2)
    assert run.returncode == 2 and "--device-map='0:x' has a non-numeric entry 'x'" in run.stderr


@pytest.mark.mpi
def test_wrong_rank_counts_are_refused():
    run = fpgacomm("osu", "latency", "-m", "8", ranks=3)
    assert run.returncode == 2 and "needs exactly 2 ranks, and this run has 3" in run.stderr
    run = fpgacomm("osu", "mbw_mr", "-m", "8", ranks=3)
    assert run.returncode == 2 and "needs an even number of ranks" in run.stderr


def assert_png(path):
    """A whole PNG: signature, a header chunk of positive size, an end chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    assert width > 100 and height > 100 and data[-8:-4] == b"IEND", path


@pytest.mark.mpi
def test_suite_writes_every_result_figures_fits_and_a_summary(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "stale.json").write_text("{}")  # not fpgacomm's: left alone, never mixed with the run's files
    run = fpgacomm(
        "suite",
        str(results),
        "--full",
        "-m",
        "1:64K",
        "-i",
        "3",
        "-x",
        "1",
        "--beff-max-size",
        "6",
        "--beff-repetitions",
        "1",
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    out = results / "latest"  # the run's own folder
    assert sorted(p.name for p in results.iterdir()) == sorted(["latest", "stale.json", os.readlink(out)])
    names = sorted(p.name for p in out.iterdir() if p.name != "fpgacomm-run.txt")
    assert "stale.json" not in names
    osu_names = ["osu_bw_D_D.json", "osu_bw_H_H.json", "osu_latency_D_D.json", "osu_latency_H_H.json"]
    collective_names = [f"osu_{test}_{mem}.json" for test in collectives.TESTS + onesided.TESTS for mem in "HD"]
    beff_names = ["beff_cpu.json", "beff_kernel.json"]
    gather_names = ["gather_tree_D.json"]
    assert set(osu_names + collective_names + beff_names + gather_names) <= set(names)
    assert names[-1] == "summary.txt"
    figures = [name for name in names if name.endswith(".png")]
    # H H latency grows with the size even over 1 B .. 64 KiB; D D on PoCL may
    # not, and then the suite says so instead of writing a fit.
    fits = [
        name
        for name in ["fit_hockney_osu_latency_D_D.json", "fit_hockney_osu_latency_H_H.json"]
        if name in names or "H_H" in name
    ]
    if "fit_hockney_osu_latency_D_D.json" not in fits:
        assert "Hockney fit of osu_latency_D_D: not drawn: " in run.stdout, run.stdout
    simulated = [name for name in names if name.startswith("sim")]
    measured = osu_names + collective_names + beff_names + gather_names
    assert len(simulated) == len(names) - len(measured + figures + fits) - 1 >= 7
    # One figure per benchmark that sweeps sizes (the barrier has none; each simulated fabric_latency and
    # fabric_bw is one point); the Hockney fits of the latency Results beside them.
    expected = {
        f"{name}.png"
        for name in ["osu_latency", "osu_bw", "beff", "gather", "gather_sim", "fabric_beff", "fabric_put", "fabric_get"]
        + [f"osu_{test}" for test in collectives.TESTS + onesided.TESTS if test != "barrier"]
    }
    assert set(figures) == expected, set(figures) ^ expected
    for name in figures:
        assert_png(out / name)
    assert sorted(name for name in names if name.startswith("fit_")) == fits
    for name in fits:
        fit = Result.read_json(out / name)
        assert [row["parameter"] for row in fit.rows] == ["alpha", "beta"] and fit.params["model"] == "hockney"
        assert 0 < fit.rows[0]["value"] < 1e-3 and "hockney fit over" in (out / "summary.txt").read_text()
    for name in beff_names:
        result = Result.read_json(out / name)
        assert [row["size"] for row in result.rows] == [1 << m for m in range(7)]
    summary = (out / "summary.txt").read_text()
    assert "osu_latency D D" in summary and "# OSU MPI-OpenCL Bandwidth Test" in summary
    assert f"OpenCL device {_core.select_devices()[0].name} on " in summary and "(simulated)" in summary
    assert "# OSU MPI-OpenCL Allreduce Latency Test" in summary and "# Synchronization: MPI_Win_flush" in summary
    assert "b_eff = " in summary and "MSize" in summary
    gathered = Result.read_json(out / "gather_tree_D.json")
    assert [(row["size"], row["stages"]) for row in gathered.rows] == [(65536, 1), (1 << 20, 1)]
    for name in osu_names + collective_names + beff_names + gather_names:
        result = Result.read_json(out / name)
        assert all(row["validation"] == "pass" for row in result.rows)
    assert all(Result.read_json(out / name).env["simulated"] for name in simulated)


def test_a_closed_pipe_ends_the_command_quietly():
    """`fpgacomm model vcsn | head -1`: the reader leaves before the output ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "fpgacomm", "model", "vcsn"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    process.stdout.close()  # no reader at all: every write meets a closed pipe
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and err == b""


@pytest.mark.parametrize(
    "environment, argv, message",
    [
        ({"FPGACOMM_TIMEOUT": "abc"}, ["devices"], "argument --timeout: 'abc' is not a number of seconds"),
        ({}, ["--timeout", "-5", "devices"], "argument --timeout: '-5': give seconds above 0, or 0 for no limit"),
        ({}, ["--timeout", "nan", "devices"], "argument --timeout: 'nan': give seconds above 0, or 0 for no limit"),
    ],
)
def test_a_bad_time_limit_is_one_clear_usage_error(environment, argv, message):
    run = subprocess.run(
        [sys.executable, "-m", "fpgacomm", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(ENV, **environment),
    )
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr


@pytest.mark.mpi
@pytest.mark.parametrize(
    "option, name, message",
    [
        ("--json", "nodir/bw.json", "--json {path}: its directory does not exist; create it or give another path"),
        ("--json", "adir", "--json {path}: --json writes a JSON file; give a name ending in .json"),
        ("--json", "adir.json", "--json {path}: that is a directory; give a file name"),
        ("--csv", "o.json", "--csv {path}: --csv writes a CSV file; give a name ending in .csv"),
        ("--json", "/proc/bw.json", "--json {path}: cannot write in /proc"),
    ],
)
def test_outputs_are_checked_on_every_rank_before_anything_is_measured(tmp_path, option, name, message):
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir.json").mkdir()
    path = name if name.startswith("/") else str(tmp_path / name)
    run = subprocess.run(
        ["mpirun", "-np", "2", sys.executable, "-m", "fpgacomm", "osu", "bw", "-m", "8", "-i", "2", option, path],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""  # nothing measured: no table
    assert run.stderr.count("fpgacomm: error: ") == 1 and message.format(path=path) in run.stderr


def test_the_suite_refuses_a_file_or_an_unwritable_place_for_its_folder(tmp_path):
    (tmp_path / "afile").write_text("")
    for folder, message in ((tmp_path / "afile", "a file, not a folder"), ("/proc/results", "cannot write in /proc")):
        run = subprocess.run(
            [sys.executable, "-m", "fpgacomm", "suite", str(folder), "-m", "8"],
            capture_output=True,
            text=True,
            timeout=120,
            env=ENV,
        )
        assert run.returncode == 2 and message in run.stderr and run.stdout == "", run.stderr


def test_suite_sizes_bound_the_collectives_and_one_sided_tests_too():
    from fpgacomm import suite

    assert suite.short_sizes("1:16") == [8]
    assert suite.short_sizes("1:4K") == [8]
    assert suite.short_sizes("16:128K") == [65536]
    assert suite.short_sizes("1:4M") == [8, 65536, 1 << 20]
    assert suite.short_sizes("2") == [2]  # none of the short set within: the largest size given
    allreduce = next(b for b in suite.registry.of_family("collective") if b.name == "osu_allreduce")
    assert suite._arguments(allreduce, {"mem": "H", "sizes": [8, 65536, 1 << 20]}, {"sizes": "1:4K"})["sizes"] == [8]


def test_timeout_stands_before_or_after_the_command():
    from fpgacomm.cli import command

    for argv in (
        ["--timeout", "7", "model", "vcsn"],
        ["model", "vcsn", "--timeout", "7"],
        ["model", "--timeout=7", "vcsn"],
    ):
        args = command.parse_arguments(argv)
        assert args.timeout == 7.0 and args.command == "model"


@pytest.mark.mpi
def test_suite_checks_every_parts_options_before_measuring(tmp_path):
    run = fpgacomm("suite", str(tmp_path / "s5"), "-m", "8", "--beff-max-size", "99", ranks=2)
    assert run.returncode == 2 and run.stdout == ""
    assert "b_eff message sizes are log2 exponents with 0 <= --min-size <= -m <= 30" in run.stderr
    assert not (tmp_path / "s5").exists() and list(tmp_path.iterdir()) == []


@pytest.mark.mpi
def test_rows_printed_as_measured_read_as_the_text_of_the_whole_result(tmp_path):
    """The rows come one by one as the sizes end; together with the header
    they are exactly format_text of the finished Result. stderr is no
    terminal here, so it holds no progress line."""
    from fpgacomm.results.report import format_text

    run = fpgacomm("osu", "bw", "-m", "1:2M", "-i", "30", "-x", "2", "--json", str(tmp_path / "bw.json"), ranks=2)
    assert run.returncode == 0, run.stderr
    result = Result.read(tmp_path / "bw.json")
    assert result.incomplete is None and "incomplete" not in json.loads((tmp_path / "bw.json").read_text())
    assert run.stdout == format_text(result) + "\n"
    assert "sizes measured" not in run.stderr and "\r" not in run.stderr


@pytest.mark.mpi
def test_a_bad_progress_delay_is_one_usage_error_before_measuring():
    run = subprocess.run(
        ["mpirun", "-np", "2", sys.executable, "-m", "fpgacomm", "osu", "latency", "-m", "8"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**ENV, "FPGACOMM_PROGRESS_AFTER": "soon"},
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr and run.stdout == ""
    assert (
        run.stderr.count(
            "FPGACOMM_PROGRESS_AFTER='soon': give the seconds a sweep runs before its progress "
            "line shows, 0 or more (default 0)"
        )
        == 1
    )


@pytest.mark.mpi
def test_tune_measures_again_shows_its_choices_and_caches_them(tmp_path, monkeypatch):
    monkeypatch.setitem(ENV, "XDG_CACHE_HOME", str(tmp_path))
    report = tmp_path / "tune.json"
    run = fpgacomm("tune", "--platform", "Portable", "--json", str(report), ranks=2)
    assert run.returncode == 0, run.stderr
    reports = json.loads(report.read_text())
    assert [entry["rank"] for entry in reports] == [0, 1]
    for entry in reports:
        sizing = entry["sizing"]
        assert sizing["source"] == "measured" and sizing["measured_at"]
        chosen = (
            f"chose: chunk {sizing['chunk_bytes'] >> 20} MiB, {sizing['slots']} slots"
            if sizing["chunk_bytes"] % (1 << 20) == 0
            else "chose: chunk "
        )
        assert chosen in run.stdout
        assert entry["key"]["ranks_sharing_device"] == 2 and entry["key"]["driver"]
        cached = json.loads(Path(entry["cache"]).read_text())
        assert cached["sizing"]["chunk_bytes"] == sizing["chunk_bytes"] and cached["how"]["turns"]
        assert Path(entry["cache"]).is_relative_to(tmp_path)
    # Why: every small copy, every chunk and slot count measured, the one chosen marked.
    assert run.stdout.count("copies 1 KiB: to device") == 2
    assert run.stdout.count("<- fastest") == 2 and run.stdout.count("<- fewest within") == 2
    assert "runs on this device keep the defaults" in run.stdout  # PoCL copies on the host's cores


@pytest.mark.mpi
def test_tune_needs_two_ranks():
    run = fpgacomm("tune", "--platform", "Portable", ranks=1)
    assert run.returncode == 2
    assert run.stderr.count("this run has 1 rank; start it as the benchmarks run") == 1
    assert "Traceback" not in run.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("mechanism", [None, "none", "emulated"])
def test_the_shared_memory_copy_open_mpi_ran_is_recorded(tmp_path, mechanism):
    """What a message costs the host's memory (calibrate fit's bus): the value
    Open MPI's vader transport ran with, from its tool interface, whether set
    (as the lent containers set none) or chosen by Open MPI itself."""
    target = tmp_path / "bw.json"
    options = () if mechanism is None else ("--mca", "btl_vader_single_copy_mechanism", mechanism)
    line = command("osu", "bw", "-m", "8", "-i", "3", "--json", str(target), ranks=2, mpirun_options=options)
    run = subprocess.run(line, capture_output=True, text=True, timeout=300, env=ENV)
    assert run.returncode == 0, run.stderr
    env = Result.read_json(target).env
    found = env["shared_memory_single_copy"]
    assert found == mechanism if mechanism else found in ("cma", "xpmem", "knem", "emulated", "none")
    # mpirun's --mca reaches the ranks as an OMPI_MCA_ variable: the Result keeps what chose the copy.
    assert env["variables"].get("OMPI_MCA_btl_vader_single_copy_mechanism") == mechanism
