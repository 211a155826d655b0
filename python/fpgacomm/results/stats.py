"""Summary statistics of per-iteration samples.

The measuring code keeps raw samples (latencies in seconds, per-window
bandwidths in B/s); this module reduces them to the numbers a report shows.
"""

from __future__ import annotations

from typing import Iterable

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
