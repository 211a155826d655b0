"""Packet efficiency: the peak bandwidth of a packet network against the
payload per packet (the FSHMEM paper, section IV-C).

A packet carries p payload bytes and h bytes of header and gaps on a link
of line rate R; the sender's datapath caps the result at B_max:

    peak(p) = min(R p / (p + h), B_max)

A transfer of n bytes (whole packets) after a latency t0 then takes
t(n) = t0 + n / peak(p), so it reaches the fraction f of the peak at
n_f = f / (1 - f) * t0 * peak(p): the half-bandwidth size n_1/2 = t0 peak
and the 95 % saturation size n_95 = 19 t0 peak.

Fitted to the FSHMEM paper's peaks (2621, 3419, 3813 and 3813 MB/s for packets of
128, 256, 512 and 1024 bytes) it gives the header cost h and line rate R.
"""

from __future__ import annotations

import numpy as np

from ..results.result import Result
from .base import Fit, Model, figures, linear_least_squares, usage_error
from .least_squares import Solution

# The FSHMEM paper, section IV-C (Fig. 5): peak PUT/GET bandwidth per packet size.
FSHMEM_PEAKS = {128: 2621e6, 256: 3419e6, 512: 3813e6, 1024: 3813e6}
# The FSHMEM paper, Table III: average latency of a long-message PUT.
FSHMEM_LATENCY = 0.35e-6


def fshmem_peaks() -> Result:
    """The FSHMEM paper's peaks as a Result that PacketModel.fit reads."""
    rows = [{"packet_size": p, "peak_bandwidth": b} for p, b in FSHMEM_PEAKS.items()]
    return Result(
        "fshmem_peaks",
        {"source": "the FSHMEM paper, section IV-C"},
        {},
        rows,
        {"packet_size": "B", "peak_bandwidth": "B/s"},
    )


class PacketModel(Model):
    """peak(p) = min(line_rate p / (p + header), ceiling)."""

    name = "packet"
    parameters = ("header", "line_rate", "ceiling")
    positive = ("line_rate", "ceiling")
    non_negative = ("header",)
    units = {"header": "B", "line_rate": "B/s", "ceiling": "B/s"}
    x_column = "packet_size"
    y_column = "peak_bandwidth"

    def predict(self, x):
        p = np.asarray(x, dtype=float)
        return np.minimum(self.line_rate * p / (p + self.header), self.ceiling)

    def saturation_size(self, packet, fraction: float = 0.95, latency: float = FSHMEM_LATENCY):
        """The transfer size reaching `fraction` of peak(packet) after a
        latency t0: fraction / (1 - fraction) * t0 * peak."""
        if not 0 < fraction < 1:
            raise usage_error(f"the saturation fraction must lie between 0 and 1, got {fraction}")
        return fraction / (1 - fraction) * latency * self.predict(packet)

    def half_bandwidth_size(self, packet, latency: float = FSHMEM_LATENCY):
        return self.saturation_size(packet, 0.5, latency)

    @classmethod
    def _solve(cls, x, y, sigma, fixed=None, **options) -> Solution:
        """Start: the ceiling at the largest peak; below it 1 / peak = 1/R +
        (h/R) / p is linear in 1/p (weighted least squares on the packets
        more than 1 % under the ceiling). Then Levenberg-Marquardt on all."""
        fixed = fixed or {}
        ceiling = fixed.get("ceiling", float(np.max(y)))
        below = y < 0.99 * ceiling
        if np.count_nonzero(below) < 2 or len(set(x[below])) < 2:
            raise usage_error(
                f"{cls.name} model: needs at least two packet sizes whose peak stays under the "
                f"ceiling, to separate header and line rate; got {np.count_nonzero(below)}"
            )
        design = np.column_stack([np.ones(np.count_nonzero(below)), 1.0 / x[below]])
        inverse_rate, header_over_rate = linear_least_squares(design, 1.0 / y[below], sigma[below] / y[below] ** 2)
        start = {
            "header": max(header_over_rate / inverse_rate, 0.0),
            "line_rate": 1.0 / inverse_rate,
            "ceiling": ceiling,
        }
        return cls._nonlinear(x, y, sigma, [start[p] for p in cls.free_parameters(fixed)], fixed)


# ------------------------------------------------- command-line registration

OPTIONS = {
    "header": (float, None, "bytes of header and gaps per packet (default: fitted to the FSHMEM paper's peaks)"),
    "line_rate": (float, None, "link line rate in B/s (default: fitted to the FSHMEM paper's peaks)"),
    "ceiling": (float, None, "datapath ceiling B_max in B/s (default: fitted to the FSHMEM paper's peaks)"),
    "latency": (float, FSHMEM_LATENCY, "latency t0 in s before a transfer's first byte (the FSHMEM paper: 0.35 us)"),
    "packets": (str, "128,256,512,1024", "payload sizes per packet in bytes, comma-separated"),
}


def predictions(
    header=None, line_rate=None, ceiling=None, latency=FSHMEM_LATENCY, packets="128,256,512,1024"
) -> Result:
    """Peak, half-bandwidth and 95 % sizes per packet size; parameters not
    given come from the fit to the FSHMEM paper's peaks."""
    try:
        sizes = [int(p) for p in str(packets).split(",")]
    except ValueError:
        raise usage_error(f"--packets takes payload sizes in bytes separated by commas, got '{packets}'") from None
    if any(p <= 0 for p in sizes) or latency < 0:
        raise usage_error(f"packet sizes must be positive and the latency at least 0, got {packets} and {latency}")
    paper_fit = PacketModel.fit(fshmem_peaks())
    given = {"header": header, "line_rate": line_rate, "ceiling": ceiling}
    model = PacketModel.checked(**{k: paper_fit.params[k] if v is None else v for k, v in given.items()})
    rows = [(name, value, PacketModel.units[name]) for name, value in model.params.items()]
    if None in given.values():
        rows += [
            (f"residual of the fit to the FSHMEM paper, {p:.0f} B packets", r, "B/s")
            for p, r in zip(paper_fit.x, paper_fit.residuals)
        ]
    for p in sizes:
        rows += [
            (f"peak, {p} B packets", float(model.predict(p)), "B/s"),
            (f"half-bandwidth size, {p} B packets", float(model.half_bandwidth_size(p, latency)), "B"),
            (f"95% saturation size, {p} B packets", float(model.saturation_size(p, 0.95, latency)), "B"),
        ]
    return figures(
        "model_packet",
        {**model.params, "latency": latency, "packets": sizes, "fitted_to": [k for k, v in given.items() if v is None]},
        rows,
    )


def fit(result: Result) -> Fit:
    return PacketModel.fit(result)
