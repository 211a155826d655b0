"""LogGP (Alexandrov, Ionescu, Schauser and Scheiman, 1995), fitted as
Kielmann, Bal and Verstoep (2000) measure it.

L   latency of the network (s)
o_s send overhead: the sender's CPU busy starting a message (s)
o_r receive overhead: the receiver's CPU busy taking it (s)
g   gap: the least time between two messages' starts (s)
G   gap per byte of a long message (s/B)

    one way, n bytes:          T(n) = o_s + L + (n - 1) G + o_r
    streaming, per message:    t(n) = g + (n - 1) G

A ping-pong gives T(n) and a stream t(n), but T(n) holds L + o_s + o_r as
one sum: L and the overheads separate only when the overheads are measured
on their own (`fpgacomm overhead`: the time inside the MPI calls that
start a send and that take a message which has already arrived). The fit
therefore reads three columns per size, from Results joined on size:
latency_avg (osu latency), bandwidth (osu bw) and send_overhead,
recv_overhead (fpgacomm overhead).
"""

from __future__ import annotations

import math

import numpy as np

from ..results.result import Result
from ..units import with_unit
from .base import Fit, Model, figures, r_squared, usage_error
from .least_squares import AT_BOUND

COLUMNS = {
    "latency_avg": "fpgacomm osu latency",
    "bandwidth": "fpgacomm osu bw",
    "send_overhead": "fpgacomm overhead",
    "recv_overhead": "fpgacomm overhead",
}


class LogGP(Model):
    """predict(n) is the one-way time T(n); stream_time(n) the gap t(n)."""

    name = "loggp"
    parameters = ("L", "o_s", "o_r", "g", "G")
    positive = ("G",)
    non_negative = ("L", "o_s", "o_r", "g")
    units = {"L": "s", "o_s": "s", "o_r": "s", "g": "s", "G": "s/B"}

    def predict(self, x):
        n = np.asarray(x, dtype=float)
        return self.o_s + self.L + np.maximum(n - 1, 0) * self.G + self.o_r

    def stream_time(self, x):
        """t(n) = g + (n - 1) G: time per message in a long stream."""
        return self.g + np.maximum(np.asarray(x, dtype=float) - 1, 0) * self.G

    def bandwidth(self, x):
        """n / t(n): the streaming bandwidth in B/s."""
        n = np.asarray(x, dtype=float)
        return n / self.stream_time(n)

    @classmethod
    def columns(cls, result: Result) -> dict:
        """The columns the fit needs, as arrays (NaN where a size lacks one)."""
        missing = [c for c in ("size", *COLUMNS) if c not in result.columns]
        if missing:
            sources = sorted({COLUMNS[c] for c in missing if c in COLUMNS})
            raise usage_error(
                f"{cls.name} model needs columns {', '.join(missing)} (from {'; '.join(sources)}), "
                f"joined on size: fpgacomm fit LATENCY.json BW.json OVERHEAD.json --model loggp; "
                f"{result.benchmark} has {', '.join(result.columns)}"
            )
        return {c: np.asarray(result.column(c), dtype=float) for c in ("size", *COLUMNS)}

    @classmethod
    def fit(cls, result: Result, *, weighted: bool = True) -> Fit:
        """g and G: weighted linear least squares of t(n) = n / bandwidth(n)
        = g + (n - 1) G, g at or above 0. o_s and o_r: the weighted mean of
        the measured overheads. L: the weighted mean over sizes of T(n) -
        o_s(n) - o_r(n) - (n - 1) G, each size with its own measured
        overheads, held at 0 where it falls below; its variance adds the
        scatter and G's. Weights: relative (1 / value^2) when `weighted`."""
        data = cls.columns(result)
        n = data["size"]

        def usable(*names):
            keep = np.isfinite(n) & (n > 0)
            for name in names:
                keep &= np.isfinite(data[name]) & (data[name] > 0)
            return keep

        stream = usable("bandwidth")
        if len(set(n[stream])) < 3:
            raise usage_error(
                f"{cls.name} model: g and G need bandwidths at 3 or more sizes; got " f"{len(set(n[stream]))}"
            )
        t = n[stream] / data["bandwidth"][stream]
        gaps = cls._linear(
            np.column_stack([np.ones_like(t), n[stream] - 1]), t, t if weighted else np.ones_like(t), ("g", "G")
        )
        g, big_g = map(float, gaps.values)
        cls.require_positive({"G": big_g if "G" not in gaps.held else 0.0})
        o_s, var_s = _mean(data["send_overhead"][usable("send_overhead")], weighted)
        o_r, var_r = _mean(data["recv_overhead"][usable("recv_overhead")], weighted)
        one_way = usable("latency_avg", "send_overhead", "recv_overhead")
        if not one_way.any():
            raise usage_error(
                f"{cls.name} model: no size has a latency and both overheads; run osu latency and "
                f"fpgacomm overhead over the same sizes"
            )
        excess = n[one_way] - 1
        wire = data["latency_avg"][one_way] - data["send_overhead"][one_way] - data["recv_overhead"][one_way]
        latency, var_l = _mean(wire - excess * big_g, weighted, reference=data["latency_avg"][one_way])
        weights = 1 / data["latency_avg"][one_way] ** 2 if weighted else np.ones(np.count_nonzero(one_way))
        var_g = gaps.covariance[-1, -1] if "G" in gaps.estimated else 0.0
        if var_l is not None:
            var_l += (np.sum(weights * excess) / np.sum(weights)) ** 2 * var_g
        held = {
            name: ("no scatter", "measured at one size only: no scatter to take its error from")
            for name, variance in (("L", var_l), ("o_s", var_s), ("o_r", var_r))
            if variance is None
        }
        if latency < 0:
            held["L"] = (
                AT_BOUND,
                f"the one-way time less the overheads averages {with_unit(latency, 's')}, which "
                "is not physical; held at 0 s (the overheads measured apart exceed the one-way "
                "time)",
            )
            latency = 0.0
        held.update(gaps.held)
        model = cls(L=latency, o_s=o_s, o_r=o_r, g=g, G=big_g)
        variances = {"L": var_l, "o_s": var_s, "o_r": var_r}
        estimated = [p for p in cls.parameters if p not in held]
        covariance = np.zeros((len(estimated), len(estimated)))
        for i, name in enumerate(estimated):
            if name in variances:
                covariance[i, i] = variances[name]
        for a, first in enumerate(gaps.estimated):
            for b, second in enumerate(gaps.estimated):
                covariance[estimated.index(first), estimated.index(second)] = gaps.covariance[a, b]
        x, y = n[one_way], data["latency_avg"][one_way]
        residuals = y - model.predict(x)
        sigma = y if weighted else np.ones_like(y)
        stderr = {p: None for p in held}
        stderr.update({p: math.sqrt(max(covariance[i, i], 0.0)) for i, p in enumerate(estimated)})
        extra = {
            "stream_points": int(np.count_nonzero(stream)),
            "overhead_points": int(np.count_nonzero(usable("send_overhead"))),
        }
        return Fit(
            model,
            stderr,
            covariance,
            r_squared(y, residuals, sigma),
            x,
            y,
            residuals,
            weighted,
            extra,
            held={p: held[p] for p in cls.parameters if p in held},
        )


def _mean(values: np.ndarray, weighted: bool, reference: np.ndarray | None = None) -> tuple:
    """(weighted mean, variance of the mean, None from one value); weights
    1 / reference^2 (reference: the values themselves) when weighted."""
    if len(values) == 0:
        raise usage_error("loggp model: no measured overheads in the Result")
    reference = values if reference is None else reference
    weights = 1 / reference**2 if weighted else np.ones_like(values)
    mean = float(np.sum(weights * values) / np.sum(weights))
    if len(values) < 2:
        return mean, None
    scatter = float(np.sum(weights * (values - mean) ** 2) / (len(values) - 1))
    return mean, scatter / float(np.sum(weights))


# ------------------------------------------------- command-line registration

OPTIONS = {name: (float, None, f"{name} in {unit}") for name, unit in LogGP.units.items()}
OPTIONS["size"] = (float, 1 << 20, "message size in bytes for T(n) and the streaming bandwidth")


def predictions(L=None, o_s=None, o_r=None, g=None, G=None, size=1 << 20) -> Result:
    given = {"L": L, "o_s": o_s, "o_r": o_r, "g": g, "G": G}
    missing = [f"--{k.replace('_', '-')}" for k, v in given.items() if v is None]
    if missing:
        raise usage_error(
            f"fpgacomm model loggp needs {' '.join(missing)} (fit them with fpgacomm fit "
            f"LATENCY.json BW.json OVERHEAD.json --model loggp)"
        )
    model = LogGP.checked(**given)
    return figures(
        "model_loggp",
        {**model.params, "size": size},
        [
            (f"T({size:.0f} B), one way", float(model.predict(size)), "s"),
            (f"t({size:.0f} B), per message streaming", float(model.stream_time(size)), "s"),
            (f"streaming bandwidth at {size:.0f} B", float(model.bandwidth(size)), "B/s"),
            ("asymptotic bandwidth 1 / G", 1 / model.G, "B/s"),
        ],
    )


def fit(result: Result) -> Fit:
    return LogGP.fit(result)
