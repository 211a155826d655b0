import math

import numpy as np
import pytest
from fpgacomm.results.stats import chi_square_median, summarize


def test_one_to_hundred():
    s = summarize(range(1, 101))
    assert s["avg"] == 50.5
    assert s["min"] == 1.0
    assert s["max"] == 100.0
    assert s["p50"] == 50.0
    assert s["p90"] == 90.0
    assert s["p99"] == 99.0
    # sample stdev of 1..100: sqrt(n(n+1)/12) with n=100
    assert s["stdev"] == pytest.approx(math.sqrt(100 * 101 / 12))


def test_three_samples_unsorted():
    s = summarize([3.0, 1.0, 2.0])
    assert s["avg"] == 2.0
    assert (s["min"], s["max"]) == (1.0, 3.0)
    assert s["stdev"] == pytest.approx(1.0)  # ddof=1: sum of squares 2 / (3-1)
    # ranks: ceil(1.5)=2 -> 2.0; ceil(2.7)=3 -> 3.0; ceil(2.97)=3 -> 3.0
    assert (s["p50"], s["p90"], s["p99"]) == (2.0, 3.0, 3.0)


def test_one_sample_has_zero_stdev():
    s = summarize([4.5e-6])
    assert s == {"avg": 4.5e-6, "min": 4.5e-6, "max": 4.5e-6, "stdev": 0.0, "p50": 4.5e-6, "p90": 4.5e-6, "p99": 4.5e-6}


def test_values_are_plain_floats():
    s = summarize(np.array([1, 2, 3, 4], dtype=np.int32))
    assert all(type(v) is float for v in s.values())
    assert s["p50"] == 2.0  # ceil(4*0.5)=2 -> second sample, not an interpolation


def test_empty_input_rejected():
    with pytest.raises(ValueError, match="empty"):
        summarize([])
    with pytest.raises(ValueError, match="empty"):
        summarize(np.array([]))


def test_percentiles_are_nearest_rank_samples():
    # sorted[ceil(n p / 100) - 1] for every n up to 300: a measured sample, never an interpolation
    for n in range(1, 301):
        samples = np.arange(n, 0, -1, dtype=float) * 1e-6
        ordered = np.sort(samples)
        s = summarize(samples)
        for key, percent in (("p50", 50), ("p90", 90), ("p99", 99)):
            assert s[key] == ordered[min(max(math.ceil(n * percent / 100) - 1, 0), n - 1)], (n, key)


@pytest.mark.parametrize("freedom, median", [(1, 0.4549), (2, 0.6931), (4, 0.8392), (9, 0.9265)])
def test_the_chi_square_median_is_within_the_approximation_s_bound(freedom, median):
    """The medians of chi-square over its degrees (tables: 0.4549, 1.3863 / 2, 3.3567 / 4, 8.3428 / 9)."""
    assert chi_square_median(freedom) == pytest.approx(median, rel=0.035)
