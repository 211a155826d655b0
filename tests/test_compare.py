"""fpgacomm compare: the statistics (Hodges-Lehmann interval, Mann-Whitney
U, Holm), sides pooled from rounds, files and folders, the verdicts, the
text, figure and exit statuses, every bad input; and load() of any mix of
Results. Files with rounds are written here as JSON directly, in the layout
`--rounds` writes (row["rounds"], env round_loads and machine)."""

import itertools
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import fpgacomm
from fpgacomm import Result
from fpgacomm.results import compare_stats, peers
from fpgacomm.results.compare import compare, format_comparison

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
SIZES = [1 << k for k in range(23)]


def cli(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "fpgacomm", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, timeout=timeout)


def rounds_file(path, values_per_size: dict, benchmark="osu_latency", column="latency_avg", unit="s",
                round_loads=None, cores=2, load_before=0.1):
    """A Result file with rounds: each row's median and its values per round."""
    rows = []
    for size, values in values_per_size.items():
        row = {"size": size, column: float(np.median(values))}
        if len(values) > 1:
            row["rounds"] = {column: [float(v) for v in values]}
        rows.append(row)
    count = max(len(values) for values in values_per_size.values())
    env = {"machine": {"cpu_model": "test", "cores": cores, "governor": None, "load_before": load_before,
                       "load_after": load_before}}
    if count > 1:
        env["round_loads"] = round_loads or [0.1] * count
    data = {"schema": "fpgacomm.result/1", "benchmark": benchmark, "params": {"rounds": count}, "env": env,
            "units": {"size": "B", column: unit}, "rows": rows, "samples": None}
    path.write_text(json.dumps(data))
    return str(path)


def spread(rng, centre, count, cv=0.03):
    return centre * rng.lognormal(0.0, cv, count)


# ------------------------------------------------------------ statistics

def test_u_distribution_is_the_count_of_orderings_by_enumeration():
    for m, n in [(1, 1), (2, 3), (3, 4), (4, 4)]:
        counts = np.zeros(m * n + 1)
        for chosen in itertools.combinations(range(m + n), m):  # the ranks of the a's
            u = sum(1 for i in range(m + n) if i not in chosen for a in chosen if i > a)
            counts[u] += 1
        np.testing.assert_allclose(compare_stats.u_distribution(m, n), counts / math.comb(m + n, m))
    assert compare_stats.u_distribution(7, 7)[0] == pytest.approx(1 / math.comb(14, 7))


def test_the_interval_is_two_order_statistics_of_the_pairwise_log_ratios():
    rng = np.random.default_rng(1)
    a, b = spread(rng, 1.0, 7), spread(rng, 1.2, 7)
    found = compare_stats.shift(a, b)
    differences = np.sort(np.log(b)[:, None] - np.log(a)[None, :], axis=None)
    assert found.exact and found.ratio == pytest.approx(math.exp(np.median(differences)))
    # 7 against 7: P(U <= 9) = 0.0265 > 0.025 >= P(U <= 8) = 0.0189, so the interval is the 9th smallest
    # to the 9th largest difference (96.2 % coverage), as the tables of U's critical values give.
    assert found.low == pytest.approx(math.exp(differences[8])) and found.high == pytest.approx(
        math.exp(differences[49 - 9]))
    assert found.p == pytest.approx(2 / math.comb(14, 7))  # completely apart: the smallest p there is


def test_large_sets_use_the_normal_approximation_and_keep_the_exact_order_statistics():
    rng = np.random.default_rng(2)
    a, b = spread(rng, 1.0, 300), spread(rng, 1.01, 280)
    found = compare_stats.shift(a, b)
    differences = np.sort(np.log(b)[:, None] - np.log(a)[None, :], axis=None)
    assert not found.exact
    assert found.ratio == pytest.approx(math.exp(0.5 * (differences[41999] + differences[42000])))
    assert found.low in np.exp(differences) and found.low < found.ratio < found.high


def test_ties_use_the_tie_corrected_normal_test():
    found = compare_stats.shift([1.0, 1.0, 2.0, 2.0], [1.0, 2.0, 2.0, 2.0])
    assert not found.exact and 0.3 < found.p <= 1.0
    alike = compare_stats.shift([1.0, 1.0], [1.0, 1.0])
    assert (alike.ratio, alike.p) == (1.0, 1.0)


def test_holm_steps_down_and_keeps_untested_rows_out():
    adjusted = compare_stats.holm([0.01, 0.04, 0.03, math.nan, 0.005])
    np.testing.assert_allclose(adjusted[[0, 1, 2, 4]], [0.03, 0.06, 0.06, 0.02])
    assert math.isnan(adjusted[3])


def test_the_coverage_and_false_positive_rate_hold_on_simulated_rounds():
    rng = np.random.default_rng(3)
    covered = flagged = 0
    for _ in range(300):
        a, b = spread(rng, 1.0, 7, 0.1), spread(rng, 1.1, 7, 0.1)
        found = compare_stats.shift(a, b)
        covered += found.low <= 1.1 <= found.high
        flagged += compare_stats.shift(a, spread(rng, 1.0, 7, 0.1)).p < 0.05
    assert covered / 300 >= 0.93 and flagged / 300 <= 0.07


# ------------------------------------------------------------ comparisons

def test_seven_rounds_a_side_flag_a_clear_difference_at_all_23_sizes_after_holm(tmp_path):
    rng = np.random.default_rng(4)
    base = rounds_file(tmp_path / "a.json", {s: spread(rng, 1e-6 + s * 1e-10, 7) for s in SIZES})
    slower = rounds_file(tmp_path / "b.json", {s: spread(rng, 1.3 * (1e-6 + s * 1e-10), 7) for s in SIZES})
    result = compare([base, slower])
    assert result.benchmark == "comparison" and len(result.rows) == 23
    assert all(row["verdict"] == "slower" and row["ratio_low"] > 1 for row in result.rows)
    assert all(row["p_holm"] == pytest.approx(min(1, 23 * 2 / math.comb(14, 7))) for row in result.rows)
    assert result.params["quantity"] == "latency" and result.params["lower_is_better"]
    # The other way round it is faster; as bandwidth, higher is better.
    assert {row["verdict"] for row in compare([slower, base]).rows} == {"faster"}


def test_a_side_pools_the_rounds_of_every_file_of_a_folder_or_glob(tmp_path):
    rng = np.random.default_rng(5)
    (tmp_path / "a").mkdir()
    for i in range(3):
        rounds_file(tmp_path / "a" / f"{i}.json", {8: spread(rng, 1e-6, 4), 16: spread(rng, 1e-6, 4)})
    for i in range(5):  # launches without rounds: one value each
        rounds_file(tmp_path / f"b{i}.json", {8: [1e-6 * (1 + i / 100)], 16: [1e-6]})
    result = compare([str(tmp_path / "a"), str(tmp_path / "b*.json")])
    assert [(row["n_base"], row["n_candidate"]) for row in result.rows] == [(12, 5), (12, 5)]
    assert result.params["files"] == {"A": 3, "B": 5}


def test_threshold_hides_small_differences_and_fail_on_regression_exits_1(tmp_path):
    rng = np.random.default_rng(6)
    base = rounds_file(tmp_path / "a.json", {s: spread(rng, 1e-6, 9, 0.005) for s in (8, 16)})
    slower = rounds_file(tmp_path / "b.json", {8: spread(rng, 1.03e-6, 9, 0.005), 16: spread(rng, 1.2e-6, 9, 0.005)})
    verdicts = [row["verdict"] for row in compare([base, slower]).rows]
    assert verdicts == ["slower", "slower"]
    verdicts = [row["verdict"] for row in compare([base, slower], threshold=0.05).rows]
    assert verdicts == ["no difference", "slower"]
    run = cli("compare", base, slower, "--threshold", "25%", "--fail-on-regression")
    assert run.returncode == 0 and "differences within 25 % count as no difference" in run.stdout
    run = cli("compare", base, slower, "--threshold", "5%", "--fail-on-regression", "--json",
              str(tmp_path / "c.json"), "-o", str(tmp_path / "c.png"))
    assert run.returncode == 1, run.stderr
    written = Result.read(tmp_path / "c.json")
    assert written.benchmark == "comparison" and [row["verdict"] for row in written.rows] == [
        "no difference", "slower"]
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    drawn = cli("plot", str(tmp_path / "c.json"), "-o", str(tmp_path / "again.png"))
    assert drawn.returncode == 0 and (tmp_path / "again.png").stat().st_size > 0, drawn.stderr
    assert cli("compare", slower, base, "--fail-on-regression").returncode == 0  # faster is no regression


def test_one_value_a_side_prints_ratios_and_says_no_test_was_possible(tmp_path):
    base = rounds_file(tmp_path / "a.json", {8: [1e-6], 16: [2e-6]})
    other = rounds_file(tmp_path / "b.json", {8: [1.5e-6], 16: [2e-6]})
    result = compare([base, other])
    assert [(row["ratio"], row["verdict"], row["p"]) for row in result.rows] == [(1.5, "no test", None),
                                                                              (1.0, "no test", None)]
    assert "ratios only, no test was possible" in format_comparison(result)


def test_rounds_and_runs_under_load_are_named(tmp_path):
    rng = np.random.default_rng(7)
    loaded = rounds_file(tmp_path / "a.json", {8: spread(rng, 1e-6, 3)}, round_loads=[0.5, 2.5, 1.0], cores=2)
    busy_run = rounds_file(tmp_path / "b.json", {8: [1e-6]}, cores=2, load_before=4.0)
    text = format_comparison(compare([loaded, busy_run]))
    assert f"A: taken while the load exceeded the cores: {loaded} round 2 (load 2.5 on 2 cores)" in text
    assert f"B: taken while the load exceeded the cores: {busy_run} (load 4.0 on 2 cores)" in text
    busy = rounds_file(tmp_path / "c.json", {8: spread(np.random.default_rng(9), 1e-6, 3)}, round_loads=[3, 5, 1])
    assert f"B: taken while the load exceeded the cores: {busy} rounds 1, 2 (load 3.0 to 5.0 on 2 cores)" in \
        format_comparison(compare([loaded, busy]))


def test_python_compare_is_a_result_with_table_html_and_text(tmp_path):
    rng = np.random.default_rng(8)
    a = rounds_file(tmp_path / "a.json", {8: spread(rng, 1e-9, 5)}, benchmark="osu_bw", column="bandwidth",
                    unit="B/s")
    b = rounds_file(tmp_path / "b.json", {8: spread(rng, 2e-9, 5)}, benchmark="osu_bw", column="bandwidth",
                    unit="B/s")
    result = fpgacomm.compare([a, b], labels=["before", "after"])
    assert result.rows[0]["verdict"] == "faster" and result.params["inputs"] == {"before": a, "after": b}
    assert "<caption>comparison" in result._repr_html_() and "median_candidate" in result.table()
    assert fpgacomm.report.format_text(result).startswith("# fpgacomm compare: bandwidth (bandwidth, higher is")


# ------------------------------------------------------------ bad input

def test_bad_inputs_exit_2_with_one_message(tmp_path):
    latency = rounds_file(tmp_path / "lat.json", {8: [1e-6], 16: [2e-6]})
    bandwidth = rounds_file(tmp_path / "bw.json", {8: [1e9]}, benchmark="osu_bw", column="bandwidth", unit="B/s")
    large = rounds_file(tmp_path / "large.json", {1 << 20: [1e-4], 4 << 20: [4e-4]})
    (tmp_path / "notes.txt").write_text("nothing a benchmark printed\n")
    cases = [
        ((latency, str(tmp_path / "notes.txt")), "not a format fpgacomm reads; it reads Result JSON and CSV files and "
         f"the text output of {', '.join(peers.FORMATS)}"),
        ((latency, bandwidth), "measures bandwidth and A (" + latency + ", osu_latency) latency; compare runs of one "
         "quantity"),
        ((latency, large), f"the sizes of A and B do not overlap: A ({latency}) has 8 B to 16 B, B ({large}) has "
         "1 MiB to 4 MiB"),
        ((latency, str(tmp_path / "none.json")), "none.json: no such file or folder"),
        ((latency,), "compare needs two inputs at least, got 1"),
        (("--run", "true", "--rounds", "0"), "argument --rounds: --rounds takes a whole number, 1 or more, got '0'"),
        (("--run", "true", "--rounds", "1.5"), "got '1.5'"),
        (("--run", "true", "--rounds", "x"), "got 'x'"),
        ((latency, "--threshold", "five"), "--threshold takes a percentage"),
        ((latency, latency, "--level", "100%"), "--level takes a percentage from 50 to below 100"),
        ((latency, latency, "--run", "true"), "compare takes Result files or --run commands, not both"),
        (("--run", "true", "--run", "true", "-o", "fig.gif"), "unknown extension .gif"),
    ]
    for arguments, message in cases:
        run = cli("compare", *arguments, cwd=tmp_path)
        assert run.returncode == 2, (arguments, run.stderr)
        assert message in run.stderr and run.stderr.count("error") == 1 and not run.stdout, (arguments, run.stderr)
    assert not any(path.name.startswith("compare-") for path in tmp_path.iterdir())  # nothing launched


def test_a_failing_run_stops_with_its_status_and_last_line_keeping_what_ran(tmp_path):
    good = f"{sys.executable} -c 'print(\"# OSU MPI Latency Test v7.4\\n# Size       Avg Latency(us)\\n8  1.5\")'"
    bad = f"{sys.executable} -c 'import sys; print(\"warming up\", file=sys.stderr); sys.exit(\"no device\")'"
    run = cli("compare", "--run", good, "--run", bad, "--rounds", "3", "--out", str(tmp_path / "out"))
    assert run.returncode == 2
    assert f"--run {bad!r} failed in launch 1 of 3 with status 1: no device; the outputs of the launches so " \
           f"far are kept in {tmp_path / 'out'}" in run.stderr
    assert (tmp_path / "out" / "A" / "01.txt").read_text().startswith("# OSU MPI Latency Test")
    assert json.loads((tmp_path / "out" / "B" / "launches.json").read_text())["launches"][0]["status"] == 1
    again = cli("compare", "--run", good, "--run", good, "--out", str(tmp_path / "out"))
    assert again.returncode == 2 and "holds files already; give a new or empty folder" in again.stderr


def test_run_launches_take_turns_and_read_omb_text(tmp_path):
    # Each launch appends its command's letter to one log: the order the launches ran in.
    log = tmp_path / "order.log"
    commands = [f"echo {letter} >> {log} && printf '# OSU MPI Latency Test v7.4\\n# Size       Avg Latency(us)\\n"
                f"8 {value}\\n16 {value}\\n'" for letter, value in (("A", "1.00"), ("B", "2.00"))]
    run = cli("compare", "--run", commands[0], "--run", commands[1], "--rounds", "3", "--out", str(tmp_path / "o"))
    assert run.returncode == 0, run.stderr
    assert log.read_text().split() == ["A", "B", "A", "B", "A", "B"]
    assert "# A: " + str(tmp_path / "o" / "A") + " (osu_latency, 3 files): echo A" in run.stdout
    assert "  2.000" in run.stdout and "3/3" in run.stdout  # three launches of OMB text a side


# ------------------------------------------------------------ load

def _result(benchmark, params, rows, units):
    return Result(benchmark, params, {}, rows, units)


def test_load_joins_a_run_with_a_flag_another_family_and_a_column_in_other_units(tmp_path):
    _result("osu_bw", {"send_kind": "H", "recv_kind": "H", "validate": True},
            [{"size": 8, "bandwidth": 1e9, "validation": "pass"}],
            {"size": "B", "bandwidth": "B/s", "validation": ""}).write(tmp_path / "bw.json")
    _result("osu_latency", {"send_kind": "H", "recv_kind": "H", "validate": False},
            [{"size": 8, "latency_avg": 1e-6}], {"size": "B", "latency_avg": "s"}).write(tmp_path / "lat.json")
    joined = fpgacomm.load([tmp_path / "bw.json", tmp_path / "lat.json"])
    assert [(row["benchmark"], row["validate"], row["bandwidth"], row["latency_avg"]) for row in joined.rows] == [
        ("osu_bw", "true", 1e9, None), ("osu_latency", "false", None, 1e-6)]
    # The suite's folder: a gather's model column is a time, a fit's a name.
    _result("gather", {"mem": "D"}, [{"size": 8, "time": 1e-6, "model": 2e-6}],
            {"size": "B", "time": "s", "model": "s"}).write(tmp_path / "gather.json")
    _result("fit_hockney", {"points": 3}, [{"parameter": "alpha", "value": 1e-6, "model": "hockney"}],
            {"parameter": "", "value": "", "model": ""}).write(tmp_path / "fit.json")
    joined = fpgacomm.load(str(tmp_path / "*.json"))
    assert joined.units["model (gather)"] == "s" and joined.units["model (fit_hockney)"] == ""
    assert [row["model (fit_hockney)"] for row in joined.rows if row["benchmark"] == "fit_hockney"] == ["hockney"]
    joined.write(tmp_path / "joined.csv")
    assert Result.read(tmp_path / "joined.csv").rows == joined.rows


def test_a_joined_result_draws_one_line_per_run_named_by_what_tells_them_apart(tmp_path):
    from fpgacomm import plot

    for kinds, scale in (("HH", 1.0), ("DD", 3.0)):
        _result("osu_latency", {"send_kind": kinds[0], "recv_kind": kinds[1], "iterations": 100},
                [{"size": 1 << i, "latency_avg": scale * (1e-6 + i * 1e-7)} for i in range(17)],
                {"size": "B", "latency_avg": "s"}).write(tmp_path / f"osu_latency_{kinds}.json")
    figure = plot.latency([fpgacomm.load(str(tmp_path / "osu_latency_*.json"))])
    lines = figure.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["send_kind=D recv_kind=D", "send_kind=H recv_kind=H"]
    for line in lines:
        sizes = line.get_xdata()
        assert list(sizes) == sorted(sizes) and len(sizes) == 17  # no zig-zag back to 1 B


def test_peer_text_reads_through_result_read_and_load(tmp_path):
    (tmp_path / "omb.txt").write_text("# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n"
                                      "# Size       Avg Latency(us)\n1                       0.21\n")
    assert Result.read(tmp_path / "omb.txt").rows == [{"size": 1, "latency_avg": 2.1e-07}]
    assert fpgacomm.load([tmp_path / "omb.txt"]).rows[0]["latency_avg"] == 2.1e-07


def test_the_model_against_measurement_result_is_fit_not_compare():
    from fpgacomm.models.hockney import Hockney

    against = Hockney(alpha=1e-6, beta=1e9).against((np.array([8.0, 16.0]), np.array([1e-6, 1.1e-6])))
    assert against.benchmark == "fit_hockney" and not hasattr(Hockney, "compare")


def test_a_clear_shift_with_too_few_values_for_the_corrected_test_is_undecided(tmp_path):
    # 5 against 5 over 21 sizes: the smallest exact p, 2 / C(10, 5) = 0.0079, times 21 is 0.17, so however far
    # apart the sides are no size can be flagged; the intervals (0.2, far from 1) say there is a difference.
    sizes = [1 << k for k in range(21)]
    base = rounds_file(tmp_path / "a.json", {s: [1e-6 * (1 + i / 100) for i in range(5)] for s in sizes})
    faster = rounds_file(tmp_path / "b.json", {s: [2e-7 * (1 + i / 100) for i in range(5)] for s in sizes})
    result = compare([base, faster])
    assert {row["verdict"] for row in result.rows} == {"undecided"}
    assert all(row["ratio_high"] < 0.25 and row["p_holm"] > 0.05 for row in result.rows)
    text = format_comparison(result)
    assert "# undecided at 21 sizes: the interval excludes 1, but corrected over the sizes the test is not " \
           "significant: run more rounds or launches (--rounds, compare --run)" in text
    # Two more a side decide it.
    base = rounds_file(tmp_path / "a.json", {s: [1e-6 * (1 + i / 100) for i in range(7)] for s in sizes})
    faster = rounds_file(tmp_path / "b.json", {s: [2e-7 * (1 + i / 100) for i in range(7)] for s in sizes})
    assert {row["verdict"] for row in compare([base, faster]).rows} == {"faster"}
