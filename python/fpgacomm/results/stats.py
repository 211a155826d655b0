"""Summary statistics of per-iteration samples.

The measuring code keeps raw samples (latencies in seconds, per-window
bandwidths in B/s); this module reduces them to the numbers a report shows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: The percentiles every summary carries, as (key, percent).
PERCENTILES = (("p50", 50), ("p90", 90), ("p99", 99))


def summarize(samples: Iterable[float]) -> dict:
    """Reduce samples to avg, min, max, stdev, p50, p90, p99 (plain floats).

    stdev is the sample standard deviation (ddof=1): the samples are a sample
    of the process being measured, not the whole population. One sample has
    no spread to estimate, so its stdev is reported as 0.0 rather than NaN.
    Percentiles are by the nearest rank, sorted[ceil(n p / 100) - 1]:
    always a measured sample, never an interpolation between two, which is
    what a tail latency should be (OMB reports samples too). NumPy's
    "inverted_cdf" method is that definition. OMB's omb_calculate_tail_lat
    truncates n p / 100 where this rounds up: the two agree whenever it is
    whole (e.g. 100 samples) and differ by at most one rank otherwise.
    """
    if not isinstance(samples, np.ndarray):
        samples = list(samples)  # accept generators and ranges too
    values = np.asarray(samples, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("summarize() needs at least one sample, got an empty sequence")
    ordered = np.sort(values)
    summary = {
        "avg": float(np.mean(ordered)),
        "min": float(ordered[0]),
        "max": float(ordered[-1]),
        "stdev": float(np.std(ordered, ddof=1)) if ordered.size > 1 else 0.0,
    }
    for key, percent in PERCENTILES:
        summary[key] = float(np.percentile(ordered, percent, method="inverted_cdf"))
    return summary


# ------------------------------------------------------------ rounds

#: The confidence of the interval of a median over rounds.
CONFIDENCE = 0.95


def median(values: Iterable[float]) -> float:
    """The median of values (the mean of the middle two for an even count)."""
    values = np.asarray(list(values), dtype=np.float64)
    if values.size == 0:
        raise ValueError("median() needs at least one value, got an empty sequence")
    return float(np.median(values))


def median_ci(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(low, high, coverage): a distribution-free confidence interval of the
    median, from order statistics (docs/METHODS.md, "Rounds").

    For n sorted values x(1) <= ... <= x(n), [x(k), x(n+1-k)] holds the
    true median with probability 1 - 2 P(B <= k - 1), B ~ Binomial(n, 1/2),
    whatever the distribution (continuous, independent rounds). k is the
    largest whose coverage still reaches `confidence`; the coverage
    returned is that exact probability, at least `confidence`. Below 6
    values no k reaches 95 % (n = 5 gives 93.75 % at most): the interval is
    then the range [min, max] and the coverage returned, 1 - 2^(1-n), is
    below `confidence`, so callers can say so.
    """
    ordered = np.sort(np.asarray(list(values), dtype=np.float64))
    n = ordered.size
    if n == 0:
        raise ValueError("median_ci() needs at least one value, got an empty sequence")
    k, coverage = 1, _order_coverage(n, 1)
    while k + 1 <= (n + 1) // 2 and _order_coverage(n, k + 1) >= confidence:
        k += 1
        coverage = _order_coverage(n, k)
    return float(ordered[k - 1]), float(ordered[n - k]), coverage


def _order_coverage(n: int, k: int) -> float:
    """P(x(k) <= median <= x(n+1-k)) = 1 - 2 P(Binomial(n, 1/2) <= k - 1)."""
    below = sum(math.comb(n, i) for i in range(k))
    return 1.0 - 2.0 * below / 2.0**n


def rounds_needed(confidence: float = CONFIDENCE) -> int:
    """The fewest rounds whose range already covers the median with `confidence`."""
    n = 1
    while _order_coverage(n, 1) < confidence:
        n += 1
    return n


def spread(values: Iterable[float]) -> float:
    """How far the rounds lie apart: (max - min) / median, a fraction
    (docs/METHODS.md, "Rounds"); NaN where the median is 0."""
    values = np.asarray(list(values), dtype=np.float64)
    if values.size == 0:
        raise ValueError("spread() needs at least one value, got an empty sequence")
    middle = float(np.median(values))
    return float((values.max() - values.min()) / middle) if middle else math.nan


def chi_square_median(freedom: int) -> float:
    """The median of a chi-square variable of `freedom` degrees over
    `freedom` (Wilson and Hilferty's cube-root normal approximation: within
    3.5 % at one degree, 1.3 % at two, 0.5 % at four): what a sample
    variance of that many degrees is, at its median, of the true one."""
    return (1 - 2 / (9 * freedom)) ** 3
