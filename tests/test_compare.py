"""fpgacomm compare: the statistics (Hodges-Lehmann interval, Mann-Whitney
U, Holm), sides pooled from rounds, files and folders, the verdicts, the
text, figure and exit statuses, every bad input; and load() of any mix of
Results. Files with rounds are written here as JSON directly, in the layout
`--rounds` writes (row["rounds"], env round_loads and machine)."""

import itertools
import json
import math
import os
import re
import subprocess
import sys
import time

import fpgacomm
import numpy as np
import pytest
from fpgacomm import Result
from fpgacomm.results import compare_stats, peers
from fpgacomm.results.compare import compare, format_comparison

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
SIZES = [1 << k for k in range(23)]


def cli(*args, cwd=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "fpgacomm", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=timeout
    )


def rounds_file(
    path,
    values_per_size: dict,
    benchmark="osu_latency",
    column="latency_avg",
    unit="s",
    round_loads=None,
    cores=2,
    load_before=0.1,
):
    """A Result file with rounds: each row's median and its values per round."""
    rows = []
    for size, values in values_per_size.items():
        row = {"size": size, column: float(np.median(values))}
        if len(values) > 1:
            row["rounds"] = {column: [float(v) for v in values]}
        rows.append(row)
    count = max(len(values) for values in values_per_size.values())
    env = {
        "machine": {
            "cpu_model": "test",
            "cores": cores,
            "governor": None,
            "load_before": load_before,
            "load_after": load_before,
        }
    }
    if count > 1:
        env["round_loads"] = round_loads or [0.1] * count
    data = {
        "schema": "fpgacomm.result/1",
        "benchmark": benchmark,
        "params": {"rounds": count},
        "env": env,
        "units": {"size": "B", column: unit},
        "rows": rows,
        "samples": None,
    }
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
        math.exp(differences[49 - 9])
    )
    assert found.p == pytest.approx(2 / math.comb(14, 7))  # completely apart: the smallest p there is


def test_out_of_the_levels_reach_the_interval_is_the_widest_with_its_own_coverage():
    found = compare_stats.shift([1.0, 2.0], [3.0, 4.0])  # 2 against 2: no interval reaches 95 %
    assert (found.low, found.high) == pytest.approx((1.5, 4.0))  # the smallest and largest pairwise ratio
    assert found.coverage == pytest.approx(1 - 2 / math.comb(4, 2))
    rng = np.random.default_rng(11)
    seven = compare_stats.shift(spread(rng, 1.0, 7), spread(rng, 1.0, 7))
    assert seven.coverage == pytest.approx(1 - 2 * compare_stats.u_distribution(7, 7)[:9].sum())  # 96.2 %
    assert compare_stats.shift(spread(rng, 1.0, 7), spread(rng, 1.0, 7), level=0.999999).coverage < 0.999999


def test_the_launches_that_would_decide_grow_with_the_spread_and_the_sizes():
    rng = np.random.default_rng(12)
    a, b = np.log(spread(rng, 1.0, 5, 0.05)), np.log(spread(rng, 1.1, 5, 0.05))
    one_size = compare_stats.launches_to_decide(a, b, 0.0, 0.05)
    assert compare_stats.launches_to_decide(a, b, 0.0, 0.05 / 23) > one_size >= 6  # 5 a side are not enough
    wider = [np.median(x) + 4 * (x - np.median(x)) for x in (a, b)]  # the same shift, four times the spread
    assert compare_stats.launches_to_decide(*wider, 0.0, 0.05) > one_size
    # Estimates of exactly 1 and no band to show equivalence in: nothing decides.
    assert compare_stats.launches_to_decide([0.0, 0.1], [0.0, 0.1], 0.0, 0.05) is None
    # The count also reaches what the exact test needs: 2 / C(2n, n) below alpha.
    n = compare_stats.launches_to_decide([0.0, 0.0, 0.0], [5.0, 5.0, 5.0], 0.0, 0.05 / 23)
    assert compare_stats.smallest_p(n, n) < 0.05 / 23 <= compare_stats.smallest_p(n - 1, n - 1)


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


def launches(folder, count, centre, rng, rounds=3, sizes=SIZES, cv=0.03, **options):
    """`count` Result files (launches) of `rounds` rounds each in `folder`, the
    values of size s spread around centre(s); returns the folder."""
    folder.mkdir()
    for number in range(1, count + 1):
        rounds_file(folder / f"{number:02d}.json", {s: spread(rng, centre(s), rounds, cv) for s in sizes}, **options)
    return str(folder)


def latency_of(s):
    return 1e-6 + s * 1e-10


def test_seven_launches_a_side_with_b_twice_a_are_slower_at_every_size_and_fail_with_1(tmp_path):
    rng = np.random.default_rng(4)
    base = launches(tmp_path / "a", 7, latency_of, rng)
    slower = launches(tmp_path / "b", 7, lambda s: 2 * latency_of(s), rng)
    result = compare([base, slower])
    assert result.benchmark == "comparison" and len(result.rows) == 23
    assert all(
        row["verdict"] == "slower"
        and row["ratio_low"] > 1.8
        and row["ratio_high"] < 2.2
        and (row["n_base"], row["n_candidate"]) == (7, 7)
        for row in result.rows
    )
    # 7 launches a side wholly apart: p = 2 / C(14, 7) at every size, times 23 by Holm.
    assert all(row["p_holm"] == pytest.approx(min(1, 23 * 2 / math.comb(14, 7))) for row in result.rows)
    assert result.params["quantity"] == "latency" and result.params["lower_is_better"]
    # The other way round it is faster; as bandwidth, higher is better.
    assert {row["verdict"] for row in compare([slower, base]).rows} == {"faster"}
    run = cli("compare", base, slower, "--fail-on-regression")
    assert run.returncode == 1, run.stderr
    assert len(re.findall(r" 7/7 .*  slower$", run.stdout, re.M)) == 23 and "(osu_latency, 7 launches)" in run.stdout
    assert cli("compare", slower, base, "--fail-on-regression").returncode == 0  # faster is no regression


def test_three_launches_a_side_with_b_twice_a_are_undecided_and_fail_with_3(tmp_path):
    # 3 against 3 can never reach p below 0.1: no test decides, however far apart, and the widest interval
    # there is (every pairwise ratio, 90 % confidence) lies wholly on the slower side.
    rng = np.random.default_rng(5)
    base = launches(tmp_path / "a", 3, latency_of, rng)
    slower = launches(tmp_path / "b", 3, lambda s: 2 * latency_of(s), rng)
    result = compare([base, slower])
    assert {row["verdict"] for row in result.rows} == {"undecided"}
    assert all(
        row["ratio_low"] > 1.8 and row["coverage"] == pytest.approx(1 - 2 / math.comb(6, 3)) for row in result.rows
    )
    # 6 a side reach 2 / C(12, 6) = 0.00216 below 0.05 / 23 = 0.00217, Holm's first step.
    assert {row["launches_needed"] for row in result.rows} == {6}
    run = cli("compare", base, slower, "--fail-on-regression")
    assert run.returncode == 3, run.stderr
    assert (
        "# undecided at 23 sizes: neither a difference (the test, corrected over the sizes) nor its absence "
        "(the interval inside the threshold band) is shown; about 6 launches a side would decide"
        in run.stdout
        and "1.800" not in run.stdout
        and "(90 %)" in run.stdout
    )
    # Faster and undecided is no regression: exit 0.
    assert cli("compare", slower, base, "--fail-on-regression").returncode == 0


def test_undecided_on_the_slower_side_follows_the_quantitys_direction(tmp_path):
    from fpgacomm.results.compare import exit_status

    rng = np.random.default_rng(13)
    options = {"benchmark": "osu_bw", "column": "bandwidth", "unit": "B/s", "sizes": [8, 16]}
    base = launches(tmp_path / "a", 3, lambda s: 1e9, rng, **options)
    half = launches(tmp_path / "b", 3, lambda s: 0.5e9, rng, **options)
    double = launches(tmp_path / "c", 3, lambda s: 2e9, rng, **options)
    assert exit_status(compare([base, half])) == 3  # half the bandwidth: undecided, on the slower side
    assert exit_status(compare([base, double])) == 0
    # Within the threshold band the interval points at no regression worth failing for.
    assert exit_status(compare([base, half], threshold=0.6)) == 0


def test_one_job_a_side_compares_the_two_jobs_rounds_with_no_verdict_on_the_set_ups(tmp_path):
    rng = np.random.default_rng(6)
    base = rounds_file(tmp_path / "a.json", {s: spread(rng, latency_of(s), 1000) for s in SIZES})
    slower = rounds_file(tmp_path / "b.json", {s: spread(rng, 1.3 * latency_of(s), 1000) for s in SIZES})
    started = time.perf_counter()
    result = compare([base, slower])
    assert time.perf_counter() - started < 1.0 * LOADED  # 1000 rounds a side, 23 sizes
    # The rounds of the two jobs tell them apart; nothing is said of the set-ups.
    assert {row["verdict"] for row in result.rows} == {"jobs differ"}
    assert all(row["ratio_low"] > 1.25 and (row["n_base"], row["n_candidate"]) == (1, 1) for row in result.rows)
    run = cli("compare", base, slower, "--fail-on-regression")
    assert run.returncode == 0 and not re.search("  (slower|faster)$", run.stdout, re.M), run.stderr
    assert "# one job a side at 23 sizes: the interval is of the rounds of these two jobs" in run.stdout
    assert "use compare --run (several launches a side) for one" in run.stdout
    # The same job's figures against another of its kind: no claim either way.
    again = rounds_file(tmp_path / "c.json", {s: spread(rng, latency_of(s), 1000) for s in SIZES})
    assert {row["verdict"] for row in compare([base, again]).rows} <= {"one job a side", "jobs differ"}
    # One value a side (one OMB run each): the ratio alone.
    single = [rounds_file(tmp_path / f"{name}.json", {8: [value]}) for name, value in (("x", 1e-6), ("y", 1.5e-6))]
    (row,) = compare(single).rows
    assert (row["ratio"], row["verdict"], row["ratio_low"], row["p"]) == (1.5, "one job a side", None, None)


# A time limit of this machine's tests, scaled where its load exceeds its cores.
LOADED = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def test_a_side_takes_each_file_as_a_launch_reduced_to_its_median(tmp_path):
    (tmp_path / "a").mkdir()
    for i in range(3):  # three launches of four rounds: medians 1.0, 1.1, 1.2 us
        rounds_file(
            tmp_path / "a" / f"{i}.json", {8: [(1 + i / 10) * 1e-6 * k for k in (0.5, 1, 1, 9)], 16: [1e-6] * 4}
        )
    for i in range(5):  # launches without rounds: one value each
        rounds_file(tmp_path / f"b{i}.json", {8: [1e-6 * (1 + i / 100)], 16: [1e-6]})
    result = compare([str(tmp_path / "a"), str(tmp_path / "b*.json")])
    assert [(row["n_base"], row["n_candidate"]) for row in result.rows] == [(3, 5), (3, 5)]
    assert result.rows[0]["median_base"] == pytest.approx(1.1e-6)  # the median of the launches' medians
    assert result.params["files"] == {"A": 3, "B": 5}


def test_every_pairwise_difference_is_found_by_its_rank_where_the_sets_touch():
    # Logs of microsecond latencies (about -14) where the smallest difference b_j - a_i is 0: the searches
    # round at the values' magnitude, and a rank past the differences counted once stopped the comparison.
    generator = np.random.default_rng(5)
    for _ in range(50):
        a = np.log(generator.choice([1.9e-7, 2.0e-7, 2.1e-7, 2.2e-7], size=3))
        b = np.log(generator.choice([2.2e-7, 2.3e-7, 2.4e-7], size=3))
        b[0] = a.max()  # the sets touch: the smallest difference is exactly 0
        every = np.sort((b[None, :] - a[:, None]).ravel())
        found = [compare_stats._difference(a, b, rank) for rank in range(len(every))]
        np.testing.assert_allclose(found, every, rtol=0, atol=1e-12)


def test_no_difference_only_where_the_interval_lies_inside_the_threshold(tmp_path):
    rng = np.random.default_rng(7)
    sizes = [8, 16]
    base = launches(tmp_path / "a", 9, lambda s: 1e-6, rng, sizes=sizes, cv=0.002)
    close = launches(tmp_path / "b", 9, lambda s: 1e-6 if s == 8 else 1.2e-6, rng, sizes=sizes, cv=0.002)
    # Without a threshold no difference can never be shown: undecided where the test finds none.
    assert [row["verdict"] for row in compare([base, close]).rows] == ["undecided", "slower"]
    for threshold in (0.05, "5%", " 5 % ".replace(" ", "")):
        verdicts = [row["verdict"] for row in compare([base, close], threshold=threshold).rows]
        assert verdicts == ["no difference", "slower"]
    for spelled in ("5%", "0.05"):  # one meaning on the command line and in Python
        run = cli("compare", base, close, "--threshold", spelled, "--json", str(tmp_path / "c.json"))
        assert run.returncode == 0 and "# no difference: an interval inside 5 % of 1 (--threshold)" in run.stdout
        assert Result.read(tmp_path / "c.json").params["threshold"] == 0.05
    # Too few launches to show it, or a level no data reach: undecided, never no difference.
    few = compare([str(tmp_path / "a" / "01.json"), str(tmp_path / "b" / "01.json")], threshold=0.05)
    assert "no difference" not in {row["verdict"] for row in few.rows}
    strict = compare([base, close], threshold=0.05, level=0.999999999)
    assert [row["verdict"] for row in strict.rows] == ["undecided", "undecided"]
    run = cli("compare", base, close, "--threshold", "5%", "--level", "99.9999999", "--fail-on-regression")
    assert run.returncode == 3, run.stdout  # 16 B: 1.2 times, undecided on the slower side


def test_a_comparison_is_written_and_drawn_with_a_log_ratio_axis_naming_its_inputs(tmp_path):
    rng = np.random.default_rng(8)
    launches(tmp_path / "a", 7, latency_of, rng, sizes=[8, 16, 32])
    launches(tmp_path / "b", 7, lambda s: 20 * latency_of(s), rng, sizes=[8, 16, 32])
    run = cli("compare", "a", "b", "--json", "c.json", "-o", "c.png", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from fpgacomm import plot

    figure = plot.figure_for([Result.read(tmp_path / "c.json")])
    ax = figure.axes[0]
    assert ax.get_yscale() == "log"
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["B/A: b / a"]
    assert ax.get_ylim()[1] > 20 and "ratio of latency_avg to A" in ax.get_ylabel()
    drawn = cli("plot", str(tmp_path / "c.json"), "-o", str(tmp_path / "again.png"))
    assert drawn.returncode == 0 and (tmp_path / "again.png").stat().st_size > 0, drawn.stderr


def test_what_matched_nothing_and_values_printed_as_zero_are_named(tmp_path):
    base = rounds_file(tmp_path / "a.json", {8: [1e-6], 16: [0.0], 32: [1e-6]})
    other = rounds_file(tmp_path / "b.json", {8: [1e-6], 16: [1e-6], 64: [2e-6], 128: [2e-6]})
    result = compare([base, other])
    assert [row["size"] for row in result.rows] == [8]
    assert result.params["unmatched"] == {"B": ["A only: 1 size, 32 B", "B only: 3 sizes, 16 B to 128 B"]}
    text = format_comparison(result)
    assert "# matched nothing: A only: 1 size, 32 B\n# matched nothing: B only: 3 sizes, 16 B to 128 B" in text
    assert "# A: values printed as 0, below the printed precision, left out of the ratios at 16 B" in text
    # A peer's text says its printed step: OMB's MB/s with two decimals.
    (tmp_path / "bw.txt").write_text(
        "# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n"
        "1                       0.00\n2                       1.50\n"
    )
    text = format_comparison(compare([str(tmp_path / "bw.txt")] * 2))
    assert "# B: values printed as 0, below the printed precision (10.0 kB/s), left out of the ratios at 1 B" in text


def test_nccl_tests_are_compared_by_their_time_the_most_precise_column_and_say_so():
    posted = os.path.join(os.path.dirname(__file__), "data", "peers", "rccl_tests_all_reduce.txt")
    result = compare([posted, posted])
    assert result.params["column"] == "time" and result.params["lower_is_better"]
    assert all(row["median_base"] > 0 for row in result.rows)  # busbw prints 0.00 at small sizes; time never does
    assert format_comparison(result).startswith(
        "# fpgacomm compare: time, the most precise of time and busbw " "(latency, lower is better)"
    )


def test_rounds_and_runs_under_load_are_named(tmp_path):
    rng = np.random.default_rng(7)
    loaded = rounds_file(tmp_path / "a.json", {8: spread(rng, 1e-6, 3)}, round_loads=[0.5, 2.5, 1.0], cores=2)
    busy_run = rounds_file(tmp_path / "b.json", {8: [1e-6]}, cores=2, load_before=4.0)
    text = format_comparison(compare([loaded, busy_run]))
    assert f"A: taken while the load exceeded the cores: {loaded} round 2 (load 2.5 on 2 cores)" in text
    assert f"B: taken while the load exceeded the cores: {busy_run} (load 4.0 on 2 cores)" in text
    busy = rounds_file(tmp_path / "c.json", {8: spread(np.random.default_rng(9), 1e-6, 3)}, round_loads=[3, 5, 1])
    assert (
        f"B: taken while the load exceeded the cores: {busy} rounds 1, 2 (load 3.0 to 5.0 on 2 cores)"
        in format_comparison(compare([loaded, busy]))
    )


def test_python_compare_is_a_result_with_table_html_and_text(tmp_path):
    rng = np.random.default_rng(8)
    options = {"benchmark": "osu_bw", "column": "bandwidth", "unit": "B/s"}
    a = launches(tmp_path / "a", 7, lambda s: 1e9, rng, sizes=[8], **options)
    b = launches(tmp_path / "b", 7, lambda s: 2e9, rng, sizes=[8], **options)
    result = fpgacomm.compare([a, b], labels=["before", "after"])
    assert result.rows[0]["verdict"] == "faster" and result.params["inputs"] == {"before": a, "after": b}
    assert "<caption>comparison" in result._repr_html_() and "median_candidate" in result.table()
    assert fpgacomm.report.format_text(result).startswith("# fpgacomm compare: bandwidth (bandwidth, higher is")


# ------------------------------------------------------------ bad input


@pytest.mark.slow
def test_bad_inputs_exit_2_with_one_message(tmp_path):
    latency = rounds_file(tmp_path / "lat.json", {8: [1e-6], 16: [2e-6]})
    bandwidth = rounds_file(tmp_path / "bw.json", {8: [1e9]}, benchmark="osu_bw", column="bandwidth", unit="B/s")
    large = rounds_file(tmp_path / "large.json", {1 << 20: [1e-4], 4 << 20: [4e-4]})
    (tmp_path / "notes.txt").write_text("nothing a benchmark printed\n")
    cases = [
        (
            (latency, str(tmp_path / "notes.txt")),
            "not a format fpgacomm reads; it reads Result JSON and CSV files and "
            f"the text output of {', '.join(peers.FORMATS)}",
        ),
        (
            (latency, bandwidth),
            "measures bandwidth and A (" + latency + ", osu_latency) latency; compare runs of one " "quantity",
        ),
        (
            (latency, large),
            f"the sizes of A and B do not overlap: A ({latency}) has 8 B to 16 B, B ({large}) has " "1 MiB to 4 MiB",
        ),
        ((latency, str(tmp_path / "none.json")), "none.json: no such file or folder"),
        ((latency,), "compare needs two inputs at least, got 1"),
        (("--run", "true", "--rounds", "0"), "argument --rounds: --rounds takes a whole number, 1 or more, got '0'"),
        (("--run", "true", "--rounds", "1.5"), "got '1.5'"),
        (("--run", "true", "--rounds", "x"), "got 'x'"),
        (
            (latency, latency, "--threshold", "five"),
            "--threshold takes a fraction below 1 or a percentage: 0.05 " "and 5% both mean 5 %; got 'five'",
        ),
        ((latency, latency, "--threshold", "5"), "got '5'"),
        ((latency, latency, "--level", "100%"), "--level takes a percentage from 50 to below 100"),
        ((latency, latency, "--run", "true"), "compare takes Result files or --run commands, not both"),
        (("--run", "true", "--run", "true", "-o", "fig.gif"), "unknown extension .gif"),
    ]
    for arguments, message in cases:
        run = cli("compare", *arguments, cwd=tmp_path)
        assert run.returncode == 2, (arguments, run.stderr)
        assert message in run.stderr and run.stderr.count("error") == 1 and not run.stdout, (arguments, run.stderr)
    assert not any(path.name.startswith("compare-") for path in tmp_path.iterdir())  # nothing launched


def test_inputs_of_different_series_name_them_rather_than_their_sizes(tmp_path):
    rows = [{"test": "PingPong", "processes": 2, "size": size, "time": 1e-6} for size in (0, 4 << 20)]
    Result("imb_mpi1", {}, {}, rows, {"test": "", "processes": "", "size": "B", "time": "s"}).write(tmp_path / "i.json")
    other = [{**row, "test": "PingPing"} for row in rows]
    Result("imb_mpi1", {}, {}, other, {"test": "", "processes": "", "size": "B", "time": "s"}).write(
        tmp_path / "j.json"
    )
    run = cli("compare", "i.json", "j.json", cwd=tmp_path)
    assert run.returncode == 2 and "do not overlap" not in run.stderr
    assert (
        "no series of A (i.json) is one of B (j.json); sizes are compared within a series (test, processes"
        in run.stderr
        and "A only: test=PingPong processes=2, 2 sizes, 0 B to 4 MiB; B only: test=PingPing "
        "processes=2, 2 sizes, 0 B to 4 MiB"
        in run.stderr
    )


def test_an_input_holds_launches_of_one_experiment_never_pooled_with_another(tmp_path):
    (tmp_path / "mixed").mkdir()
    for name, kinds in (("hh.json", "H"), ("dd.json", "D")):
        Result(
            "osu_latency",
            {"send_kind": kinds, "recv_kind": kinds},
            {},
            [{"size": 8, "latency_avg": 1e-6}],
            {"size": "B", "latency_avg": "s"},
        ).write(tmp_path / "mixed" / name)
    run = cli("compare", "mixed", "mixed/hh.json", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("error") == 1
    assert (
        "A: mixed/dd.json (osu_latency send_kind=D recv_kind=D) and mixed/hh.json (osu_latency send_kind=H "
        "recv_kind=H) are different experiments, and the files of an input are launches of one; give them as "
        "separate inputs" in run.stderr
    )


def test_a_failing_run_stops_with_its_status_and_last_line_keeping_what_ran(tmp_path):
    good = f"{sys.executable} -c 'print(\"# OSU MPI Latency Test v7.4\\n# Size       Avg Latency(us)\\n8  1.5\")'"
    bad = f'{sys.executable} -c \'import sys; print("warming up", file=sys.stderr); sys.exit("no device")\''
    run = cli("compare", "--run", good, "--run", bad, "--rounds", "3", "--out", str(tmp_path / "out"))
    assert run.returncode == 2
    assert (
        f"--run {bad!r} failed in launch 1 of 3 with status 1: no device; the outputs of the launches so "
        f"far are kept in {tmp_path / 'out'}" in run.stderr
    )
    assert (tmp_path / "out" / "A" / "01.txt").read_text().startswith("# OSU MPI Latency Test")
    assert json.loads((tmp_path / "out" / "B" / "launches.json").read_text())["launches"][0]["status"] == 1
    again = cli("compare", "--run", good, "--run", good, "--out", str(tmp_path / "out"))
    assert again.returncode == 2 and "holds files already; give a new or empty folder" in again.stderr


def test_run_launches_take_turns_and_read_omb_text(tmp_path):
    # Each launch appends its command's letter to one log: the order the launches ran in.
    log = tmp_path / "order.log"
    commands = [
        f"echo {letter} >> {log} && printf '# OSU MPI Latency Test v7.4\\n# Size       Avg Latency(us)\\n"
        f"8 {value}\\n16 {value}\\n'"
        for letter, value in (("A", "1.00"), ("B", "2.00"))
    ]
    run = cli("compare", "--run", commands[0], "--run", commands[1], "--rounds", "3", "--out", str(tmp_path / "o"))
    assert run.returncode == 0, run.stderr
    assert log.read_text().split() == ["A", "B", "A", "B", "A", "B"]
    assert "# A: " + str(tmp_path / "o" / "A") + " (osu_latency, 3 launches): echo A" in run.stdout
    assert "  2.000" in run.stdout and "3/3" in run.stdout  # three launches of OMB text a side


# ------------------------------------------------------------ load


def _result(benchmark, params, rows, units):
    return Result(benchmark, params, {}, rows, units)


def test_load_joins_a_run_with_a_flag_another_family_and_a_column_in_other_units(tmp_path):
    _result(
        "osu_bw",
        {"send_kind": "H", "recv_kind": "H", "validate": True},
        [{"size": 8, "bandwidth": 1e9, "validation": "pass"}],
        {"size": "B", "bandwidth": "B/s", "validation": ""},
    ).write(tmp_path / "bw.json")
    _result(
        "osu_latency",
        {"send_kind": "H", "recv_kind": "H", "validate": False},
        [{"size": 8, "latency_avg": 1e-6}],
        {"size": "B", "latency_avg": "s"},
    ).write(tmp_path / "lat.json")
    joined = fpgacomm.load([tmp_path / "bw.json", tmp_path / "lat.json"])
    assert [(row["benchmark"], row["validate"], row["bandwidth"], row["latency_avg"]) for row in joined.rows] == [
        ("osu_bw", "true", 1e9, None),
        ("osu_latency", "false", None, 1e-6),
    ]
    # The suite's folder: a gather's model column is a time, a fit's a name.
    _result(
        "gather", {"mem": "D"}, [{"size": 8, "time": 1e-6, "model": 2e-6}], {"size": "B", "time": "s", "model": "s"}
    ).write(tmp_path / "gather.json")
    _result(
        "fit_hockney",
        {"points": 3},
        [{"parameter": "alpha", "value": 1e-6, "model": "hockney"}],
        {"parameter": "", "value": "", "model": ""},
    ).write(tmp_path / "fit.json")
    joined = fpgacomm.load(str(tmp_path / "*.json"))
    assert joined.units["model (gather)"] == "s" and joined.units["model (fit_hockney)"] == ""
    assert [row["model (fit_hockney)"] for row in joined.rows if row["benchmark"] == "fit_hockney"] == ["hockney"]
    joined.write(tmp_path / "joined.csv")
    assert Result.read(tmp_path / "joined.csv").rows == joined.rows


def test_a_joined_result_draws_one_line_per_run_named_by_what_tells_them_apart(tmp_path):
    from fpgacomm import plot

    for kinds, scale in (("HH", 1.0), ("DD", 3.0)):
        _result(
            "osu_latency",
            {"send_kind": kinds[0], "recv_kind": kinds[1], "iterations": 100},
            [{"size": 1 << i, "latency_avg": scale * (1e-6 + i * 1e-7)} for i in range(17)],
            {"size": "B", "latency_avg": "s"},
        ).write(tmp_path / f"osu_latency_{kinds}.json")
    figure = plot.latency([fpgacomm.load(str(tmp_path / "osu_latency_*.json"))])
    lines = figure.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["send_kind=D recv_kind=D", "send_kind=H recv_kind=H"]
    for line in lines:
        sizes = line.get_xdata()
        assert list(sizes) == sorted(sizes) and len(sizes) == 17  # no zig-zag back to 1 B


def test_peer_text_reads_through_result_read_and_load(tmp_path):
    (tmp_path / "omb.txt").write_text(
        "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n"
        "# Size       Avg Latency(us)\n1                       0.21\n"
    )
    assert Result.read(tmp_path / "omb.txt").rows == [{"size": 1, "latency_avg": 2.1e-07}]
    assert fpgacomm.load([tmp_path / "omb.txt"]).rows[0]["latency_avg"] == 2.1e-07


def test_the_model_against_measurement_result_is_fit_not_compare():
    from fpgacomm.models.hockney import Hockney

    against = Hockney(alpha=1e-6, beta=1e9).against((np.array([8.0, 16.0]), np.array([1e-6, 1.1e-6])))
    assert against.benchmark == "fit_hockney" and not hasattr(Hockney, "compare")


def test_an_undecided_comparison_is_decided_by_the_launches_it_names(tmp_path):
    # 5 against 5 over 21 sizes: the smallest exact p, 2 / C(10, 5) = 0.0079, times 21 is 0.17, so however far
    # apart the sides are no size can be flagged; 6 a side reach 2 / C(12, 6) = 0.0022 < 0.05 / 21.
    rng = np.random.default_rng(10)
    sizes = [1 << k for k in range(21)]
    base = launches(tmp_path / "a", 5, latency_of, rng, sizes=sizes)
    faster = launches(tmp_path / "b", 5, lambda s: 0.2 * latency_of(s), rng, sizes=sizes)
    result = compare([base, faster])
    assert {row["verdict"] for row in result.rows} == {"undecided"}
    assert all(row["ratio_high"] < 0.25 and row["p_holm"] > 0.05 for row in result.rows)
    needed = {row["launches_needed"] for row in result.rows}
    assert needed == {6}
    for side, centre in (("a", latency_of), ("b", lambda s: 0.2 * latency_of(s))):
        rounds_file(tmp_path / side / "06.json", {s: spread(rng, centre(s), 3) for s in sizes})
    assert {row["verdict"] for row in compare([base, faster]).rows} == {"faster"}
