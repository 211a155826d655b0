"""bench/omb_side.py: parsing OMB's tables and fpgacomm's Results, the ratios
and verdicts, the flags both sides get and the section it writes, on
hand-made text with known answers (neither OMB nor a build of it needed)."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import omb_side  # noqa: E402
from omb_side import Case, Target  # noqa: E402

MIB = 1 << 20

LATENCY_TEXT = """# HOST/POSIX_MEMALIGN: allocated 8 bytes at 0x1000

# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
8                     0.4700
16                    0.5125
"""


def test_latency_table_in_seconds_with_its_datatype():
    parsed = omb_side.parse_omb(LATENCY_TEXT, "latency")
    assert parsed["datatype"] == "MPI_CHAR"
    assert parsed["rows"] == {8: pytest.approx(0.47e-6), 16: pytest.approx(0.5125e-6)}


def test_bandwidth_in_bytes_per_second_and_message_rate_from_its_own_column():
    bw = omb_side.parse_omb("# Size      Bandwidth (MB/s)\n4194304      11340.5000\n", "put_bw")
    assert bw["rows"] == {4 * MIB: pytest.approx(11340.5e6)} and bw["datatype"] is None
    text = "# [ pairs: 2 ] [ window size: 64 ]\n# Size  MB/s  Messages/s\n8  62.0000  7750000.0000\n"
    assert omb_side.parse_omb(text, "mbw_mr")["rows"] == {8: pytest.approx(7.75e6)}


def test_barrier_prints_no_size_and_comes_back_as_size_zero():
    text = "# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n           1.2500\n"
    assert omb_side.parse_omb(text, "barrier")["rows"] == {0: pytest.approx(1.25e-6)}


def test_text_without_rows_or_without_a_rate_is_an_error():
    with pytest.raises(ValueError, match="no table rows in osu_bw"):
        omb_side.parse_omb("# Size      Bandwidth (MB/s)\nmpirun noticed that ... exited\n", "bw")
    with pytest.raises(ValueError, match="no message rate for 8 B"):
        omb_side.parse_omb("8   62.0\n", "mbw_mr")


def test_fpgacomm_figure_and_context_from_a_result_json():
    result = {"rows": [{"size": 8, "latency_avg": 5e-7}, {"size": MIB, "latency_avg": 1e-4}],
              "params": {"datatype": "MPI_CHAR"},
              "env": {"mpi_library": "Open MPI v4.1.6, package: Open MPI\x00\nmore", "ranks": 4,
                      "mpi_thread_level": {"requested": "single", "provided": "single"},
                      "fpgacomm_version": "0.1", "git_revision": "abc123"}}
    assert omb_side.fpgacomm_figure(result, "allreduce", MIB) == 1e-4
    with pytest.raises(ValueError, match="no row of 16 B"):
        omb_side.fpgacomm_figure(result, "allreduce", 16)
    context = omb_side.fpgacomm_context(result)
    assert context["mpi_library"] == "Open MPI v4.1.6"
    assert context["thread_level"] == "single (asked single)" and context["datatype"] == "MPI_CHAR"
    assert context["version"] == "fpgacomm 0.1 (git abc123)"
    assert omb_side.fpgacomm_figure({"rows": [{"size": 8, "message_rate": 3e6}]}, "mbw_mr", 8) == 3e6


def test_latency_ratio_is_ours_over_theirs_and_lower_is_better():
    case = Case("latency", 8, Target(high=1.03))
    # Medians 1.0 and 1.0 us; the middle round's pair is 1.1 / 0.9.
    row = omb_side.compare(case, [1.0e-6, 1.1e-6, 0.9e-6], [1.0e-6, 0.9e-6, 1.2e-6])
    assert row["fpgacomm"] == pytest.approx(1.0e-6) and row["omb"] == pytest.approx(1.0e-6)
    assert row["ratio"] == pytest.approx(1.0) and row["verdict"] == "met"
    assert row["round_ratios"] == [pytest.approx(0.75), pytest.approx(1.1 / 0.9)]
    assert omb_side.compare(case, [1.04e-6], [1.0e-6])["verdict"] == "missed"
    assert omb_side.lower_is_better("latency") and omb_side.lower_is_better("barrier")


def test_bandwidth_targets_from_below_and_within_a_band():
    assert omb_side.compare(Case("bw", 8, Target(low=0.95)), [9.4e9], [1e10])["verdict"] == "missed"
    assert omb_side.compare(Case("bw", 8, Target(low=0.95)), [9.6e9], [1e10])["verdict"] == "met"
    band = Target(low=0.90, high=1.10)
    assert [band.met(r) for r in (0.89, 0.9, 1.1, 1.11)] == [False, True, True, False]
    assert (str(band), str(Target(low=0.95)), str(Target(high=1.03))) == ("0.9 to 1.1", ">= 0.95", "<= 1.03")
    assert not omb_side.lower_is_better("put_bw") and omb_side.metric("mbw_mr") == "message_rate"


def test_a_failed_side_leaves_its_rounds_out_of_the_ratio():
    row = omb_side.compare(Case("bw", 8, Target(low=0.95)), [2.0, None, 4.0], [2.0, 2.0, None])
    assert row["fpgacomm"] == 3.0 and row["omb"] == 2.0 and row["ratio"] == 1.5
    assert row["round_ratios"] == [1.0, 1.0]
    failed = omb_side.compare(Case("bw", 8, Target(low=0.95)), [None], [2.0])
    assert failed["ratio"] is None and failed["verdict"] == "failed"
    assert omb_side.compare(Case("scatter", 8), [1.0], [2.0])["verdict"] is None


def test_a_failure_is_told_in_one_line():
    output = ("fpgacomm: rank 1: time limit of 0.3 s exceeded (--timeout); aborting-----\n"
              "mpirun detected that one or more processes exited with non-zero status\n  Exit code:    124\n-----\n")
    assert omb_side.failure(124, output, 0.3) == "exit 124: fpgacomm: rank 1: time limit of 0.3 s exceeded " \
                                                 "(--timeout); aborting"
    assert omb_side.failure(1, "a\nb\nc\nd\n", 5) == "exit 1: b | c | d"
    assert omb_side.failure(None, "", 5) == "time limit of 5 s"


def test_both_sides_get_the_same_flags():
    assert omb_side.common_flags(Case("bw", 4 * MIB), quick=False) == ["-m", "4194304:4194304", "-i", "20", "-x",
                                                                       "2", "-W", "64"]
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
    assert text == f"# Measured speed\n\nbefore\n\n{begin}\nsecond\n{end}\n\n{other_begin}\nother\n{other_end}\n\nafter\n"


def report(rows, rehearsal="", started="2026-11-24 16:00 UTC"):
    """A run's report as measure() writes it, with hand-made rows."""
    context = {"mpi_library": "Open MPI v4.1.4", "thread_level": "single (asked single)", "datatypes": "MPI_CHAR",
               "version": "fpgacomm 0.1 (git abc123)"}
    return {"command": ".venv/bin/python bench/omb_side.py --tests latency", "json": "omb_side-vm.json",
            "started": started, "seconds": 12.0,
            "machine": {"host": "vm", "cpu": "x86", "cores": 2, "os": "Debian 12", "mpi": "Open MPI 4.1.4",
                        "mpicc": "/usr/bin/mpicc", "load": [1.5, 2.25]},
            "contexts": {"fpgacomm": context, "omb": dict(context, thread_level="single (MPI_Init, no level asked)")},
            "setup": {"section": "vm", "rounds": 5, "rounds_run": 5, "ranks": 2, "quick": False, "rehearsal": rehearsal, "note": "",
                      "mpirun_args": ""},
            "rows": rows}


def row(test, size, fpgacomm, omb, target=None):
    case = Case(test, size, target)
    return {"test": test, "size": size, "ranks": 2, "iterations": "100 / 10", "failures": [],
            "target": {"low": target.low, "high": target.high} if target else None,
            **omb_side.compare(case, [fpgacomm], [omb])}


def test_reports_merge_in_the_cases_order_and_a_later_run_wins(tmp_path):
    first = report([row("put_bw", 8, 1.0, 1.0), row("latency", 8, 2e-6, 1e-6, Target(high=1.03))],
                   rehearsal="quick mode")
    second = report([row("latency", 8, 1e-6, 1e-6, Target(high=1.03))], started="2026-11-24 17:00 UTC")
    rows = omb_side.merged_rows([first, second])
    assert [(r["test"], r["part"], r["verdict"]) for r in rows] == [("latency", 2, "met"), ("put_bw", 1, None)]
    paths = [tmp_path / "first.json", tmp_path / "second.json"]
    for path, part in zip(paths, (first, second)):
        path.write_text(json.dumps(part))
    results = tmp_path / "RESULTS.md"
    assert omb_side.main(["--report", *map(str, paths), "--results", str(results)]) == 0
    text = results.read_text()
    assert "## fpgacomm against OSU Micro-Benchmarks 7.4, side by side (vm)" in text
    assert "**Rehearsal, not the record** (quick mode)" in text and "Run 2 of 2: 2026-11-24 17:00 UTC" in text
    assert "| 2 | fpgacomm 0.1 (git abc123) | Open MPI v4.1.4 | single (asked single) | MPI_CHAR |" in text
    assert f"every round's figures in `{paths[1]}`" in text
    assert "Targets met: 1 of 1." in text and "load average 1.5 at the start and 2.2 at the end" in text
    assert "| latency | 8 B | 2 | 100 / 10 | latency (lower is better) | 1.000 us | 1.000 us | 1.000 |" in text
    assert omb_side.main(["--report", str(paths[0]), "--results", ""]) == 1  # its latency misses


def test_report_refuses_measuring_options(capsys, tmp_path):
    assert omb_side.main(["--report", str(tmp_path / "none.json"), "--rounds", "3"]) == 2
    assert "--report measures nothing, so --rounds would do nothing" in capsys.readouterr().err
    assert omb_side.main(["--report", str(tmp_path / "none.json")]) == 2
    assert "no report at" in capsys.readouterr().err
    assert omb_side.main(["--report", str(tmp_path / "none.json"), "--section", "a -- b"]) == 2
    assert "--section 'a -- b': use letters" in capsys.readouterr().err


def test_extra_arguments_that_bind_replace_the_binding_to_cores():
    assert omb_side.mpirun_command(2, ["--bind-to", "none", "--map-by", "node"]) == \
        ["mpirun", "-np", "2", "--bind-to", "none", "--map-by", "node"]
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


def test_small_bandwidths_print_in_mb_per_second():
    assert omb_side.format_figure("bw", 2.175e9) == "2.175 GB/s"
    assert omb_side.format_figure("bibw", 3.5e5) == "0.350 MB/s"
