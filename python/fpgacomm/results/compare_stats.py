"""The statistics of a comparison of two sets of measurements: the
Hodges-Lehmann estimate of their ratio with its distribution-free interval,
the Mann-Whitney U test, and Holm's correction over the sizes of one
comparison (docs/METHODS.md, "Comparing runs").

One distribution serves both the test and the interval: that of U, the
number of pairs (a_i, b_j) with b_j above a_i, when both sets come from one
distribution. It is computed exactly while both sets are small and hold no
ties, and approximated by the normal distribution (with the correction for
ties) otherwise. NumPy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: The confidence of the intervals and the family-wise error rate of the tests.
LEVEL = 0.95
#: Beyond this many values on either side, U's distribution is taken as
#: normal (its error there is far below the sets' own noise), and the exact
#: one is not built.
EXACT_LIMIT = 50


@dataclass(frozen=True)
class Shift:
    """B against A on a log scale. ratio: exp of the Hodges-Lehmann
    estimate of log(B / A), the median of every pairwise log(b_j / a_i).
    low, high: the ratio's interval, at `level` where the sets can reach it,
    else the widest there is (the smallest to the largest pairwise ratio).
    coverage: that interval's own confidence (at least `level`, or below it
    where the sets are too small: 3 against 3 reach 90 %). p: the two-sided
    Mann-Whitney p value. exact: whether U's exact distribution gave p and
    the interval."""

    ratio: float
    low: float
    high: float
    coverage: float
    p: float
    exact: bool


def _z(level: float) -> float:
    """The standard normal quantile of (1 + level) / 2, by bisection of erf
    (no SciPy)."""
    target, low, high = (1 + level) / 2, 0.0, 10.0
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * (1 + math.erf(middle / math.sqrt(2))) < target else (low, middle)
    return (low + high) / 2


@lru_cache(maxsize=256)
def u_distribution(m: int, n: int) -> np.ndarray:
    """P(U = u) for u = 0 .. m n under the null hypothesis, without ties.

    The recursion p(m, n, u) = m/(m+n) p(m-1, n, u) + n/(m+n) p(m, n-1, u-m)
    (the largest of the m + n values is an a or a b) adds positive terms
    only, so the tails keep their full relative precision."""
    # table[j] holds the distribution for (i, j) while row i is built.
    table = [np.ones(1) for _ in range(n + 1)]  # i = 0: U is 0
    for i in range(1, m + 1):
        row = [np.ones(1)]  # j = 0: U is 0
        for j in range(1, n + 1):
            both = np.zeros(i * j + 1)
            both[: len(table[j])] = table[j] * (i / (i + j))  # the largest is an a: below no b
            both[i : i + len(row[j - 1])] += row[j - 1] * (j / (i + j))  # the largest is a b: above all i a's
            row.append(both)
        table = row
    return table[n]


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p values: the family-wise error rate of
    rejecting every hypothesis whose adjusted p is below alpha is at most
    alpha, whatever the dependence between the tests. NaN stays NaN."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    k = len(order)
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * (k - np.arange(k))))
    adjusted[order] = stepped
    return adjusted


def shift(a, b, level: float = LEVEL) -> Shift:
    """The ratio of b to a (positive values), its interval at `level` and
    the Mann-Whitney p value: a and b need two values each at least."""
    log_a, log_b = np.log(np.asarray(a, dtype=float)), np.log(np.asarray(b, dtype=float))
    m, n = len(log_a), len(log_b)
    if m < 2 or n < 2:
        raise ValueError(f"a test needs two values a side at least; got {m} and {n}")
    pairs = m * n
    combined = np.concatenate([log_a, log_b])
    ranks = _midranks(combined)
    u = float(ranks[m:].sum() - n * (n + 1) / 2)  # pairs with b above a, ties counting half
    tied = len(np.unique(combined)) < m + n
    exact = not tied and max(m, n) <= EXACT_LIMIT
    if exact:
        distribution = u_distribution(m, n)
        cdf = np.cumsum(distribution)
        lower_tail = cdf[int(round(u))]
        upper_tail = 1.0 - (cdf[int(round(u)) - 1] if u >= 1 else 0.0)
        p = min(1.0, 2 * min(lower_tail, upper_tail))
        # The interval [d_(c), d_(mn+1-c)] (1-based) covers with probability
        # 1 - 2 P(U <= c - 1): c is the count of u with P(U <= u) <= alpha/2.
        c = max(1, int(np.searchsorted(cdf, (1 - level) / 2 * (1 + 1e-12), side="right")))
        coverage = 1.0 - 2 * float(cdf[c - 1])
    else:
        _, counts = np.unique(combined, return_counts=True)
        total = m + n
        variance = m * n / 12 * ((total + 1) - float(np.sum(counts**3 - counts)) / (total * (total - 1)))
        sd = math.sqrt(variance)
        if sd == 0:  # every value alike: nothing tells the sets apart
            return Shift(1.0, 1.0, 1.0, 1.0, 1.0, False)
        z = (abs(u - pairs / 2) - 0.5) / sd  # with the continuity correction
        p = min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
        c = max(1, int(math.floor(pairs / 2 - _z(level) * sd)))
        # The interval misses when U falls below c or above m n - c.
        coverage = math.erf((pairs / 2 - c + 0.5) / (sd * math.sqrt(2)))
    # Of the pairwise differences b_j - a_i, the estimate is the median and
    # the interval two order statistics (0-based ranks here).
    middle = pairs // 2 - (1 - pairs % 2), pairs // 2
    estimate = 0.5 * (_difference(log_a, log_b, middle[0]) + _difference(log_a, log_b, middle[1]))
    low, high = math.exp(_difference(log_a, log_b, c - 1)), math.exp(_difference(log_a, log_b, pairs - c))
    return Shift(math.exp(estimate), low, high, coverage, float(p), exact)


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p value m against n values can give: both
    sets wholly apart, 2 / C(m + n, m)."""
    return min(1.0, 2 / math.comb(m + n, m))


def launches_to_decide(log_a, log_b, threshold: float, alpha: float) -> int | None:
    """An estimate of the values a side (launches) that would decide a
    comparison left undecided: enough for the smallest exact p to fall below
    `alpha` (the first step of Holm's correction, 0.05 / sizes), and for an
    interval of the present spread to shrink, as one over the square root of
    the count, to the distance that decides: from the estimate to 1 (a
    difference), or from it to the threshold band's edge (no difference).
    None where nothing can decide: the estimate is 1 exactly and there is no
    band (threshold 0) to show equivalence in."""
    log_a, log_b = np.asarray(log_a, dtype=float), np.asarray(log_b, dtype=float)
    shift_estimate = abs(float(np.median(log_b) - np.median(log_a)))
    band = math.log1p(threshold)
    distance = max(shift_estimate, band - shift_estimate)
    if distance <= 0:
        return None
    deviations = [values - np.median(values) for values in (log_a, log_b) if len(values) > 1]
    spread = float(np.sqrt(np.mean(np.concatenate(deviations) ** 2))) if deviations else 0.0
    # Two sides of n values: the estimate's spread is about spread * sqrt(2 / n).
    needed = math.ceil(2 * (_z(1 - alpha) * spread / distance) ** 2)
    enough_for_the_test = next(n for n in range(2, 10_000) if smallest_p(n, n) < alpha)
    return max(needed, enough_for_the_test, max(len(log_a), len(log_b)) + 1)


def _difference(a: np.ndarray, b: np.ndarray, rank: int) -> float:
    """The difference b_j - a_i of 0-based `rank` among all m n of them,
    without building them all (a thousand rounds a side make a million):
    bisection on the value, counting the differences below it with one
    search per b, until few enough lie in the bracket to sort them."""
    a, b = np.sort(a), np.sort(b)  # sorted queries search faster

    def at_most(t: float) -> int:  # how many b_j - a_i <= t, i.e. a_i >= b_j - t
        return int(len(a) * len(b) - np.searchsorted(a, b - t, side="left").sum())

    # Strictly below the smallest difference and at or above the largest, as the searches compute them: the
    # margin scales with the values (b_j - t rounds at their magnitude, not the difference's; where the
    # smallest difference was 0, a margin of its size let it count as below and the rank run past the end).
    margin = 1e-9 * (float(np.abs(a).max()) + float(np.abs(b).max())) + 1e-300
    low, high = float(b.min() - a.max()) - margin, float(b.max() - a.min()) + margin
    below = at_most(low)  # 0; counted, so that the ranks below the bracket are the searches' own
    for _ in range(200):
        if at_most(high) - below <= 32768:
            break
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        count = at_most(middle)
        if count > rank:
            high = middle
        else:
            low, below = middle, count
    # The differences in (low, high]: for each b_j, the a_i in [b_j - high, b_j - low).
    starts = np.searchsorted(a, b - high, side="left")
    ends = np.searchsorted(a, b - low, side="left")
    lengths = ends - starts
    owner = np.repeat(np.arange(len(b)), lengths)
    offset = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    inside = b[owner] - a[starts[owner] + offset]
    return float(np.partition(inside, rank - below)[rank - below])


def _midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..N, tied values sharing the mean of their ranks."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    mean_rank = (starts + ends + 1) / 2  # ranks start+1 .. end, 1-based
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks
