"""Hockney's model of a message's time, and its piecewise form that finds
where an MPI library switches protocol.

Hockney (1994): T(n) = alpha + n / beta, latency alpha (s) and asymptotic
bandwidth beta (B/s); the half-performance size n_1/2 = alpha * beta is the
message size that reaches half of beta.

An MPI library changes protocol with the size (eager copies, rendezvous,
pipelined staging), and each protocol has its own alpha and beta: OMB-FPGA
sees the latency dip between 4 and 8 MB. PiecewiseHockney fits contiguous
size ranges with a Hockney model each and picks the number of ranges by the
Bayesian information criterion under Laplace errors, its penalty doubled
(docs/METHODS.md, "Models").
"""

from __future__ import annotations

import math

import numpy as np

from ..results.result import Result
from .base import Fit, Model, figures, r_squared, uncertainties, usage_error
from .least_squares import Solution

# BIC's penalty, doubled: the switch sizes are searched over every size, so
# plain BIC accepts spurious ranges (in 26 of 60 synthetic single-range sets
# of 1 B .. 64 MiB with 1 % noise); doubled, in 3 of 60, and it places a true
# switch at 8 MB exactly in 58 of 60 (docs/METHODS.md, "Models").
PENALTY = 2.0
TIME_COLUMNS = ("latency_avg", "latency", "time")  # osu_latency, fabric_latency, fabric_bw


class Hockney(Model):
    """T(n) = alpha + n / beta."""

    name = "hockney"
    parameters = ("alpha", "beta")
    positive = ("beta",)
    non_negative = ("alpha",)
    units = {"alpha": "s", "beta": "B/s"}

    @classmethod
    def data(cls, result: Result) -> tuple:
        """(size, time) from an OSU latency, fabric latency or fabric bandwidth Result."""
        column = next((c for c in TIME_COLUMNS if c in result.columns), None)
        if "size" not in result.columns or column is None:
            raise usage_error(
                f"{cls.name} model needs columns 'size' and one of {', '.join(TIME_COLUMNS)} "
                f"(a latency Result, e.g. fpgacomm osu latency); {result.benchmark} has "
                f"{', '.join(result.columns)}"
            )
        return cls.measured(result, "size", column)

    def predict(self, x):
        return self.alpha + np.asarray(x, dtype=float) / self.beta

    def bandwidth(self, x):
        """n / T(n) in B/s."""
        x = np.asarray(x, dtype=float)
        return x / self.predict(x)

    @property
    def half_bandwidth_size(self) -> float:
        """n_1/2 = alpha * beta: bandwidth(n_1/2) = beta / 2."""
        return self.alpha * self.beta

    @classmethod
    def _solve(cls, x, y, sigma, fixed=None, **options) -> Solution:
        """T is linear in (alpha, 1/beta): bounded weighted linear least
        squares (alpha at or above 0), the covariance of beta from that of
        1/beta by the delta method."""
        fixed = fixed or {}
        known = fixed.get("alpha", 0.0) + (x / fixed["beta"] if "beta" in fixed else 0.0)
        names = [name for name in cls.parameters if name not in fixed]
        columns = {"alpha": np.ones_like(x), "beta": x}
        solution = cls._linear(np.column_stack([columns[name] for name in names]), y - known, sigma, names)
        if "beta" in fixed:
            return solution
        inverse = solution.values[-1]
        if "beta" in solution.held or inverse <= 0:
            raise usage_error(
                f"{cls.name} model: the time does not grow with the size (slope {inverse:.3g} s/B); "
                f"give sizes over a wider range"
            )
        solution.values[-1] = 1.0 / inverse
        # Delta method: d beta / d(1/beta) = -beta^2; beta is the last estimated parameter.
        jacobian = np.eye(len(solution.estimated))
        jacobian[-1, -1] = -1.0 / inverse**2
        solution.covariance = jacobian @ solution.covariance @ jacobian.T
        return solution


class LaterRange(Hockney):
    """A range after the first: its line holds from its switch on, where the
    time stays positive however low its intercept (a rendezvous range's
    alpha may fall below zero), so alpha is not bounded."""

    non_negative = ()


class PiecewiseHockney(Model):
    """Hockney models on contiguous size ranges; segment k (from 0) holds
    for switches[k-1] <= n < switches[k]. Parameters alpha_1, beta_1,
    alpha_2, ... (alpha, beta with one range) and switch_1, ...: the first
    size of each range after the first."""

    name = "hockney_piecewise"

    def __init__(self, segments: list, switches: list):
        if len(switches) != len(segments) - 1 or list(switches) != sorted(switches):
            raise usage_error(
                f"{self.name}: {len(segments)} ranges need {len(segments) - 1} increasing switch "
                f"sizes, got {list(switches)}"
            )
        self.segments = list(segments)
        self.switches = np.asarray(switches, dtype=float)
        values, units = {}, {}
        for k, segment in enumerate(self.segments, 1):
            suffix = f"_{k}" if len(self.segments) > 1 else ""
            values.update({f"alpha{suffix}": segment.alpha, f"beta{suffix}": segment.beta})
            units.update({f"alpha{suffix}": "s", f"beta{suffix}": "B/s"})
        for k, switch in enumerate(self.switches, 1):
            values[f"switch_{k}"], units[f"switch_{k}"] = switch, "B"
        self.parameters, self.units = tuple(values), units
        super().__init__(**values)

    def predict(self, x):
        x = np.asarray(x, dtype=float)
        which = np.searchsorted(self.switches, x, side="right")
        times = np.stack([np.broadcast_to(segment.predict(x), x.shape) for segment in self.segments])
        return np.take_along_axis(times, which[None, ...], axis=0)[0]

    data = Hockney.data

    @classmethod
    def fit(cls, result, *, weighted: bool | None = None, max_segments: int = 4, min_points: int = 3) -> Fit:
        """Segments by dynamic programming: for each count s of ranges, the
        split into s contiguous ranges of at least min_points sizes each
        with the least sum of absolute weighted deviations D_s from a
        Hockney line per range (robust to the odd slow size of a busy
        machine; a range whose time falls with the size is not a Hockney
        range). The count chosen minimises C_s = 2 n ln(D_s / n) + 2 (3 s -
        1) ln n: BIC under Laplace errors, two parameters per range and one
        per switch, its penalty doubled (PENALTY). Each range's alpha and
        beta, with standard errors, then come from Hockney's weighted least
        squares on it. extra lists each switch's bracket (the last size of a
        range, the first of the next)."""
        x, y = cls.data(result) if isinstance(result, Result) else map(np.asarray, result)
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        n = len(x)
        if n < min_points:
            raise usage_error(f"{cls.name}: needs at least {min_points} sizes, got {n}")
        weighted, sigma = uncertainties(x, y, weighted)

        def cost(i, j):  # least absolute relative deviation of one Hockney range over points i..j-1
            if j - i < min_points or (i > 0 and x[i - 1] == x[i]) or len(set(x[i:j])) < 2:
                return math.inf
            return _absolute_deviation(x[i:j], y[i:j], sigma[i:j])

        costs = {(i, j): cost(i, j) for i in range(n) for j in range(i + min_points, n + 1)}
        # best[s][j]: (least D of points 0..j-1 in s ranges, start of the last range)
        best = [{0: (0.0, None)}]
        for s in range(1, max_segments + 1):
            layer = {}
            for j in range(s * min_points, n + 1):
                options = [(best[s - 1][i][0] + costs[(i, j)], i) for i in best[s - 1] if (i, j) in costs]
                options = [option for option in options if math.isfinite(option[0])]
                if options:
                    layer[j] = min(options)
            best.append(layer)
        floor = n * 1e-12  # exact data: equal criteria, the penalty then prefers fewer ranges
        criteria = {
            s: 2 * n * math.log(max(best[s][n][0], floor) / n) + PENALTY * (3 * s - 1) * math.log(n)
            for s in range(1, max_segments + 1)
            if n in best[s]
        }
        if not criteria:
            raise usage_error(f"{cls.name}: the sizes do not span two distinct values in {min_points} points")
        count = min(criteria, key=lambda s: (criteria[s], s))
        bounds, j = [], n
        for s in range(count, 0, -1):
            i = best[s][j][1]
            bounds.insert(0, (i, j))
            j = i
        fits = [
            (Hockney if k == 0 else LaterRange).fit((x[i:j], y[i:j]), weighted=weighted)
            for k, (i, j) in enumerate(bounds)
        ]
        model = cls([f.model for f in fits], [x[i] for i, _ in bounds[1:]])
        residuals = y - model.predict(x)
        stderr, held, blocks = {}, {}, []
        for k, f in enumerate(fits):
            names = dict(zip(("alpha", "beta"), model.parameters[2 * k : 2 * k + 2]))
            stderr.update({names[p]: f.stderr[p] for p in names})
            held.update({names[p]: f.held[p] for p in f.held})
            blocks.append(f.covariance)
        for k in range(1, count):
            stderr[f"switch_{k}"] = None
            held[f"switch_{k}"] = (
                "searched",
                f"the first size of range {k + 1}, chosen among the measured sizes by "
                f"the criterion; switch_{k}_between brackets it",
            )
        # The ranges are fitted apart: no covariance between them.
        covariance = np.zeros((sum(len(b) for b in blocks),) * 2)
        at = 0
        for block in blocks:
            covariance[at : at + len(block), at : at + len(block)] = block
            at += len(block)
        extra = {
            "ranges": count,
            "criterion": f"2 n ln(D/n) + {PENALTY:g} (3 ranges - 1) ln n",
            "criterion_by_ranges": {str(s): value for s, value in criteria.items()},
        }
        for k, (i, _) in enumerate(bounds[1:], 1):
            extra[f"switch_{k}_between"] = f"{x[i - 1]:.0f} and {x[i]:.0f} B"
        return Fit(
            model, stderr, covariance, r_squared(y, residuals, sigma), x, y, residuals, weighted, extra, held=held
        )


def _absolute_deviation(x, y, sigma, iterations: int = 30) -> float:
    """sum |y - alpha - x / beta| / sigma at its least over alpha and beta
    (iteratively reweighted least squares), or inf when the least-squares
    or the least-deviation line falls with x."""
    design = np.column_stack([np.ones_like(x), x]) / sigma[:, None]
    target = y / sigma
    weights = np.ones_like(x)
    least_squares, *_ = np.linalg.lstsq(design, target, rcond=None)
    if least_squares[1] <= 0:  # the range's Hockney fit would fail
        return math.inf
    for _ in range(iterations):
        values, *_ = np.linalg.lstsq(design * weights[:, None], target * weights, rcond=None)
        deviation = np.abs(target - design @ values)
        weights = 1 / np.sqrt(np.maximum(deviation, 1e-9))
    if values[1] <= 0:  # time falling with size: no Hockney range
        return math.inf
    return float(np.sum(deviation))


# ------------------------------------------------- command-line registration

OPTIONS = {
    "alpha": (float, None, "latency in s"),
    "beta": (float, None, "asymptotic bandwidth in B/s"),
    "size": (float, 1 << 20, "message size in bytes for T(n) and n / T(n)"),
}


def predictions(alpha=None, beta=None, size=1 << 20) -> Result:
    if alpha is None or beta is None:
        raise usage_error(
            "fpgacomm model hockney needs --alpha SECONDS and --beta BYTES_PER_SECOND "
            "(fit them with fpgacomm fit RESULT.json --model hockney)"
        )
    model = Hockney.checked(alpha=alpha, beta=beta)
    return figures(
        "model_hockney",
        {**model.params, "size": size},
        [
            ("half-bandwidth size n_1/2 = alpha * beta", model.half_bandwidth_size, "B"),
            (f"T({size:.0f} B)", float(model.predict(size)), "s"),
            (f"bandwidth at {size:.0f} B", float(model.bandwidth(size)), "B/s"),
        ],
    )


def fit(result: Result) -> Fit:
    """The plain model, one alpha and one beta over every size
    (hockney_piecewise finds protocol switches)."""
    return Hockney.fit(result)
