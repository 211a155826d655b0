"""bench/omb_side.py: the flags both sides get, the commands compare --run
launches, the targets judged on intervals and the section it writes (hand-made
reports); and OMB 7.4 itself, built from its tarball, its text read as
Results and compared with fpgacomm's (skipped only where it cannot build)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fpgacomm  # noqa: E402
import omb_side  # noqa: E402
from omb_side import Case, Target  # noqa: E402

MIB = 1 << 20
ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def test_both_sides_get_the_same_flags():
    assert omb_side.common_flags(Case("bw", 4 * MIB), quick=False) == [
        "-m",
        "4194304:4194304",
        "-i",
        "20",
        "-x",
        "2",
        "-W",
        "64",
    ]
    assert omb_side.common_flags(Case("latency", 8), quick=True) == ["-m", "8:8", "-i", "2000", "-x", "100"]
    assert omb_side.common_flags(Case("barrier", 0), quick=False)[:1] == ["-i"]
    assert omb_side.common_flags(Case("put_bibw", 8), quick=False)[-4:] == ["-w", "allocate", "-s", "fence"]
    assert omb_side.common_flags(Case("get_latency", 8), quick=False)[-4:] == ["-w", "allocate", "-s", "flush"]
    assert omb_side.ranks_for("bw", 8) == 2 and omb_side.ranks_for("allreduce", 8) == 8


def test_every_shared_test_has_a_case_and_a_program():
    assert set(omb_side.TESTS) == set(omb_side.PT2PT + omb_side.COLLECTIVES + omb_side.ONESIDED)
    programs = omb_side.omb_programs(Path("/b"))
    assert programs["put_bibw"] == Path("/b/src/c/mpi/one-sided/osu_put_bibw")
    assert programs["mbw_mr"] == Path("/b/src/c/mpi/pt2pt/standard/osu_mbw_mr")


def test_tests_and_groups_selected_and_unknown_names_refused():
    assert omb_side.select("latency,onesided,latency") == ["latency", *omb_side.ONESIDED]
    with pytest.raises(omb_side.UsageError, match="unknown test 'lat' in --tests"):
        omb_side.select("lat")


def test_a_section_replaces_its_previous_version_and_no_other(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Measured speed\n\nbefore\n")
    begin, end = omb_side.marks("2 cores")
    omb_side.write_section(path, f"{begin}\nfirst\n{end}\n", "2 cores")
    other_begin, other_end = omb_side.marks("H100")
    omb_side.write_section(path, f"{other_begin}\nother\n{other_end}\n", "H100")
    path.write_text(path.read_text() + "\nafter\n")
    omb_side.write_section(path, f"{begin}\nsecond\n{end}\n", "2 cores")
    text = path.read_text()
    assert "first" not in text and text.count(begin) == 1 and "other" in text
    assert (
        text == f"# Measured speed\n\nbefore\n\n{begin}\nsecond\n{end}\n\n{other_begin}\nother\n{other_end}\n\nafter\n"
    )


def report(rows, rehearsal="", started="2026-11-24 16:00 UTC"):
    """A run's report as measure() writes it, with hand-made rows."""
    return {
        "command": ".venv/bin/python bench/omb_side.py --tests latency",
        "json": "omb_side-vm.json",
        "started": started,
        "seconds": 12.0,
        "machine": {
            "host": "vm",
            "cpu": "x86",
            "cores": 2,
            "os": "Debian 12",
            "mpi": "Open MPI 4.1.4",
            "load": [1.5, 2.25],
        },
        "setup": {
            "section": "vm",
            "rounds": 7,
            "ranks": 2,
            "quick": False,
            "rehearsal": rehearsal,
            "note": "",
            "mpirun_args": "",
            "two_hosts": None,
            "out": "/tmp/o",
        },
        "rows": rows,
    }


def row(test, size, ratio, low, high, target=None, verdict="no difference"):
    return {
        "test": test,
        "size": size,
        "ranks": 2,
        "quantity": "latency_avg",
        "target": {"low": target.low, "high": target.high} if target else None,
        "ratio": ratio,
        "ratio_low": low,
        "ratio_high": high,
        "p": 0.01,
        "p_holm": 0.01,
        "verdict": verdict,
        "median_base": 1e-6,
        "median_candidate": ratio * 1e-6,
        "n_base": 7,
        "n_candidate": 7,
        "under_load": {"fpgacomm": ["x (launch 2, load 3.1 on 2 cores)"]},
    }


def test_a_target_is_judged_on_the_whole_interval():
    within = Target(high=1.03)
    assert within.verdict(0.98, 1.02, 1.0) == "met"
    assert within.verdict(1.04, 1.10, 1.07) == "missed"
    assert within.verdict(1.00, 1.05, 1.02) == "undecided"
    assert Target(low=0.9, high=1.1).verdict(None, None, 1.2) == "missed (no interval)"


def test_reports_merge_in_the_cases_order_and_a_later_run_wins(tmp_path):
    first = report(
        [row("put_bw", 8, 1.0, 0.98, 1.02), row("latency", 8, 1.2, 1.1, 1.3, Target(high=1.03), "slower")],
        rehearsal="quick mode",
    )
    second = report([row("latency", 8, 1.0, 0.99, 1.01, Target(high=1.03))], started="2026-11-24 17:00 UTC")
    rows = omb_side.merged_rows([first, second])
    assert [(r["test"], r["part"], omb_side.target_verdict(r)) for r in rows] == [
        ("latency", 2, "met"),
        ("put_bw", 1, ""),
    ]
    paths = [tmp_path / "first.json", tmp_path / "second.json"]
    for path, part in zip(paths, (first, second)):
        path.write_text(json.dumps(part))
    results = tmp_path / "RESULTS.md"
    assert omb_side.main(["--report", *map(str, paths), "--results", str(results)]) == 0
    text = results.read_text()
    assert "## fpgacomm against OSU Micro-Benchmarks 7.4, side by side (vm)" in text
    assert "**Rehearsal, not the record** (quick mode)" in text and "Run 2 of 2: 2026-11-24 17:00 UTC" in text
    assert f"the comparisons in `{paths[1]}`" in text
    assert "Targets: 1 met, 0 missed, 0 undecided, of 1." in text
    assert "load average 1.5 at the start and 2.2 at the end" in text
    assert (
        "| latency | 8 B | 2 | latency_avg | 1.000 | 0.990 to 1.010 | 0.01 | no difference | 1 of 14 | <= 1.03 "
        "| met |" in text
    )
    assert omb_side.main(["--report", str(paths[0]), "--results", ""]) == 1  # its latency misses


def test_the_commands_of_a_case_are_omb_and_fpgacomm_with_the_same_flags(tmp_path):
    args = omb_side.parse_arguments(["--tests", "latency", "--python", sys.executable, "--out", str(tmp_path / "o")])
    omb, ours = omb_side.commands(Case("latency", 8), args, {"latency": Path("/b/osu_latency")})
    flags = "-m 8:8 -i 20000 -x 1000"
    assert omb == f"timeout 120 mpirun -np 2 --bind-to core /b/osu_latency {flags}"
    assert ours == f"mpirun -np 2 --bind-to core {sys.executable} -m fpgacomm --timeout 120 osu latency {flags}"
    assert args.rounds == 7


def test_report_refuses_measuring_options(capsys, tmp_path):
    assert omb_side.main(["--report", str(tmp_path / "none.json"), "--rounds", "3"]) == 2
    assert "--report measures nothing, so --rounds would do nothing" in capsys.readouterr().err
    assert omb_side.main(["--report", str(tmp_path / "none.json")]) == 2
    assert "no report at" in capsys.readouterr().err
    assert omb_side.main(["--report", str(tmp_path / "none.json"), "--section", "a -- b"]) == 2
    assert "--section 'a -- b': use letters" in capsys.readouterr().err


def test_extra_arguments_that_bind_replace_the_binding_to_cores():
    assert omb_side.mpirun_command(2, ["--bind-to", "none", "--map-by", "node"]) == [
        "mpirun",
        "-np",
        "2",
        "--bind-to",
        "none",
        "--map-by",
        "node",
    ]
    assert omb_side.mpirun_command(1, [])[3:5] == ["--bind-to", "core"]


def test_two_hosts_takes_the_beds_mpirun_options_and_needs_the_bed(tmp_path, monkeypatch):
    monkeypatch.setattr(omb_side, "TWO_HOSTS_STATE", tmp_path)
    with pytest.raises(omb_side.UsageError, match="no two-host test bed 'nobed'.*scripts/two_hosts.sh up nobed"):
        omb_side.parse_arguments(["--two-hosts", "nobed"])
    (tmp_path / "bed").mkdir()
    (tmp_path / "bed" / "mpirun-options").write_text("--host 10.77.5.2:2,10.77.5.3:2 --bind-to none\n")
    args = omb_side.parse_arguments(["--two-hosts", "bed", "--tests", "latency", "--python", sys.executable])
    assert args.mpirun_args == "--host 10.77.5.2:2,10.77.5.3:2 --bind-to none --map-by node"
    assert args.section == f"two hosts on {omb_side.cores()} cores"


# ---------------------------------------------------------------- OMB itself

TARBALLS = [
    ROOT.parent / "shared" / "peers" / "omb-7.4.tar.gz",
    ROOT.parent.parent / "shared" / "peers" / "omb-7.4.tar.gz",
]


@pytest.fixture(scope="module")
def omb():
    """OMB 7.4's osu_latency, osu_bw, osu_allreduce and osu_put_bw, built
    once from the tarball (bench/omb_side.py's build, reused later)."""
    tarball = next((path for path in TARBALLS if path.is_file()), None)
    if tarball is None:
        pytest.skip(f"no OMB 7.4 tarball at {' or '.join(map(str, TARBALLS))}: nothing to build")
    try:
        return omb_side.build_omb(
            tarball, omb_side.DEFAULT_BUILD, 2, ("latency", "bw", "allreduce", "put_bw"), log=lambda *_: None
        )
    except omb_side.UsageError as error:
        pytest.skip(f"OMB 7.4 does not build here: {error}")


def run_text(command, path):
    run = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=120)
    assert run.returncode == 0, run.stderr
    path.write_text(run.stdout)
    return str(path)


@pytest.mark.mpi
def test_omb_text_reads_as_results(omb, tmp_path):
    mpirun = ["mpirun", "-np", "2", "--oversubscribe"]
    cases = {
        "latency": (["-m", "1:16"], "osu_latency", "latency_avg", "s"),
        "bw": (["-m", "1:16", "-W", "4"], "osu_bw", "bandwidth", "B/s"),
        "allreduce": (["-m", "4:16", "-f"], "osu_allreduce", "latency_avg", "s"),
        "put_bw": (["-m", "1:16", "-W", "4"], "osu_put_bw", "bandwidth", "B/s"),
    }
    for test, (flags, benchmark, column, unit) in cases.items():
        path = run_text([*mpirun, str(omb[test]), *flags, "-i", "20", "-x", "2"], tmp_path / f"{test}.txt")
        result = fpgacomm.Result.read(path)
        assert result.benchmark == benchmark and result.units[column] == unit
        assert result.params["omb_version"] == "7.4" and result.params["datatype"].startswith("MPI_")
        sizes = [row["size"] for row in result.rows]
        assert sizes == ([4, 8, 16] if test == "allreduce" else [1, 2, 4, 8, 16])
        assert all(row[column] > 0 for row in result.rows)
        if test == "allreduce":  # -f: OMB's min, max and iterations too
            assert all(
                row["latency_min"] <= row["latency_avg"] <= row["latency_max"] and row["iterations"] == 20
                for row in result.rows
            )
        if test == "put_bw":
            assert result.params["window_creation"] == "MPI_Win_allocate"


@pytest.mark.mpi
def test_compare_omb_text_with_fpgacomm_and_compare_run_of_both(omb, tmp_path):
    flags = ["-m", "1:16", "-i", "200", "-x", "20"]
    omb_text = run_text(["mpirun", "-np", "2", str(omb["latency"]), *flags], tmp_path / "omb.txt")
    ours = subprocess.run(
        [
            "mpirun",
            "-np",
            "2",
            sys.executable,
            "-m",
            "fpgacomm",
            "osu",
            "latency",
            *flags,
            "--json",
            str(tmp_path / "ours.json"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert ours.returncode == 0, ours.stderr
    run = subprocess.run(
        [sys.executable, "-m", "fpgacomm", "compare", omb_text, str(tmp_path / "ours.json")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    # One job a side (one OMB run, one fpgacomm run): ratios, and no verdict on the set-ups.
    assert sum(line.endswith("  one job a side") for line in run.stdout.splitlines()) == 5
    assert "# one job a side at 5 sizes" in run.stdout
    commands = [
        f"mpirun -np 2 {omb['latency']} {' '.join(flags)}",
        f"mpirun -np 2 {sys.executable} -m fpgacomm osu latency {' '.join(flags)}",
    ]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "fpgacomm",
            "compare",
            "--run",
            commands[0],
            "--run",
            commands[1],
            "--rounds",
            "3",
            "--out",
            str(tmp_path / "runs"),
            "--json",
            str(tmp_path / "c.json"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    comparison = fpgacomm.Result.read(tmp_path / "c.json")
    assert [(row["size"], row["n_base"], row["n_candidate"]) for row in comparison.rows] == [
        (size, 3, 3) for size in (1, 2, 4, 8, 16)
    ]
    assert sorted(os.listdir(tmp_path / "runs" / "A")) == [
        "01.err",
        "01.txt",
        "02.err",
        "02.txt",
        "03.err",
        "03.txt",
        "launches.json",
    ]


# ------------------------------------------------------------ bench/pt2pt_instructions.py

import pt2pt_instructions  # noqa: E402

ANNOTATED = """\
--------------------------------------------------------------------------------
82,552,742 (100.0%)  PROGRAM TOTALS
--------------------------------------------------------------------------------
79,969,161 (96.87%)  osu_bw.c:main [/omb/osu_bw]
36,190,104 (43.84%)  ???:PMPI_Isend [/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4]
 4,533,870 ( 5.49%)  ???:PMPI_Waitall [/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4]
 4,436,375 ( 5.37%)  ???:PMPI_Recv [/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4]
 3,902,868 ( 4.73%)  ???:opal_progress [/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.2]
"""


def test_instruction_counts_leave_out_the_calls_that_wait():
    # callgrind_annotate's lines, as OMB's osu_bw gave them: MPI_Waitall and the acknowledgement's MPI_Recv out.
    assert pt2pt_instructions.counts_of(ANNOTATED) == {"total": 82552742, "waits": 4533870 + 4436375}


def test_a_message_costs_the_difference_over_the_messages(monkeypatch, tmp_path):
    # Per launch: a constant start-up, 500 instructions a message of a 64-message window, and polling
    # that differs from launch to launch (inside the waits; the fewest is kept for "all").
    polls = iter([9000, 1000, 50_000, 7000])

    def launch(program, rank, toggle, env, folder):
        iterations = program[-1]
        waits = next(polls)
        return {"total": 10**6 + iterations * 64 * 500 + waits, "waits": waits}

    monkeypatch.setattr(pt2pt_instructions, "counted_launch", launch)
    cost = pt2pt_instructions.per_message("bw", lambda n: [n], 0, None, {}, (200, 1200), 2, tmp_path)
    assert cost["outside_waits"] == 500
    assert cost["total"] == ((10**6 + 1200 * 64 * 500 + 7000) - (10**6 + 200 * 64 * 500 + 1000)) / (1000 * 64)
    assert pt2pt_instructions.messages_per_iteration("latency") == 1


@pytest.mark.mpi
def test_the_instruction_section_judges_the_ten_percent_target():
    row = {
        "test": "bw",
        "size": 8,
        "rank": 0,
        "OMB": {"outside_waits": 491, "total": 3139},
        "fpgacomm": {"outside_waits": 508, "total": 3526},
        "ratio": 508 / 491,
        "met": 508 / 491 <= 1.10,
    }
    text = pt2pt_instructions.section([row], ["--tests", "bw"])
    assert "| bw | 8 B | 0 | 491 | 508 | 1.035 | 3139 | 3526 | met |" in text
    assert text.startswith("<!-- bench/pt2pt_instructions.py, Instructions per message: begin")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--tests", "bw,osu_bw"], "unknown test ['osu_bw'] in --tests"),
        (["--iterations", "200"], "--iterations takes two different counts"),
        (["--iterations", "a,b"], "--iterations takes two counts such as 200,1200, got 'a,b'"),
    ],
)
def test_instruction_benchmark_bad_input_is_one_message_and_status_2(argv, message):
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "pt2pt_instructions.py"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("pt2pt_instructions.py: ") and len(run.stderr.splitlines()) == 1
    assert message in run.stderr
