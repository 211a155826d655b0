"""HPCC FPGA's b_eff channel model (its b_eff documentation; docs/METHODS.md).

A kernel pair sends a message of L bytes striped over c channels of w bytes
at f words per second, after a channel latency lat::

    t(L, i) = i * (ceil(L / (c w)) / f + lat)        i messages
    b(L)    = L / (ceil(L / (c w)) / f + lat)         per kernel pair
    b_eff   = mean of b(L) over L = 2^0 .. 2^20       per kernel pair
            * 2 per FPGA (a pair to each ring neighbour), * n for n FPGAs.

BittWare 520N (HPCC FPGA's table): c = 2 of its 4 channels per pair,
w = 256 bits, f = 156.25 MHz, lat = 520 ns: 7.77 GB/s per FPGA.

    python -c "from fpgacomm.models.beff import ChannelModel; print(ChannelModel.bittware_520n().fpga_beff())"
"""

from __future__ import annotations

import numpy as np

from ..results.result import Result
from .base import Model, figures, linear_least_squares, usage_error
from .least_squares import Solution

BITTWARE_520N = dict(channels=2, width_bytes=32, frequency_hz=156.25e6, latency_s=520e-9)
PRESETS = {"520n": BITTWARE_520N}
PAIRS_PER_FPGA = 2  # a send/receive kernel pair to each ring neighbour
DEFAULT_SIZES = tuple(1 << m for m in range(21))


class ChannelModel(Model):
    """b(L) of one kernel pair over `channels` external channels of
    `width_bytes` at `frequency_hz`, with `latency_s` per message."""

    name = "beff"
    parameters = ("channels", "width_bytes", "frequency_hz", "latency_s")
    positive = ("channels", "width_bytes", "frequency_hz")
    non_negative = ("latency_s",)
    units = {"channels": "", "width_bytes": "B", "frequency_hz": "Hz", "latency_s": "s"}
    x_column = "size"
    y_column = "pair_bandwidth"

    def __init__(self, channels, width_bytes, frequency_hz, latency_s):
        super().__init__(channels=channels, width_bytes=width_bytes, frequency_hz=frequency_hz, latency_s=latency_s)

    @classmethod
    def bittware_520n(cls) -> ChannelModel:
        return cls(**BITTWARE_520N)

    @property
    def word_bytes(self) -> float:
        """Bytes sent per clock over all the pair's channels (c w)."""
        return self.channels * self.width_bytes

    @property
    def peak_bandwidth(self) -> float:
        """c w f: b(L) for large L, in B/s."""
        return self.word_bytes * self.frequency_hz

    def time(self, size, iterations=1):
        """t(L, i) in seconds."""
        size = np.asarray(size, dtype=float)
        return iterations * (np.ceil(size / self.word_bytes) / self.frequency_hz + self.latency_s)

    def bandwidth(self, size):
        """b(L) per kernel pair in B/s, vectorised over sizes."""
        return np.asarray(size, dtype=float) / self.time(size)

    predict = bandwidth

    def pair_beff(self, sizes=DEFAULT_SIZES) -> float:
        """b_eff of one kernel pair: the mean of b(L) over the sizes."""
        return float(np.mean(self.bandwidth(np.asarray(sizes))))

    def fpga_beff(self, sizes=DEFAULT_SIZES) -> float:
        """b_eff of one FPGA: its two kernel pairs."""
        return PAIRS_PER_FPGA * self.pair_beff(sizes)

    def network_beff(self, fpgas: int, sizes=DEFAULT_SIZES) -> float:
        """b_eff of a ring of n FPGAs: every FPGA has its own channels (HPCC FPGA)."""
        if fpgas < 1:
            raise usage_error(f"a b_eff network needs at least 1 FPGA, got {fpgas}")
        return fpgas * self.fpga_beff(sizes)

    # ------------------------------------------------------------------- fit

    @classmethod
    def data(cls, result: Result) -> tuple:
        """(L, b(L)) per kernel pair; sizes whose validation failed are left out."""
        passed = [row for row in result.rows if row.get("validation") != "fail"]
        return super().data(Result(result.benchmark, result.params, result.env, passed, result.units))

    @classmethod
    def fit(
        cls,
        result,
        *,
        channels: int = BITTWARE_520N["channels"],
        width_bytes: float = BITTWARE_520N["width_bytes"],
        weighted: bool | None = None,
    ):
        """Frequency and latency from measured b(L) (a b_eff Result's
        pair_bandwidth, or (sizes, b) arrays); the channels and their width
        set the word size and are held fixed, since only c w f is measurable.
        extra holds the peak bandwidth c w f and its standard error."""
        fit = super().fit(result, weighted=weighted, fixed={"channels": channels, "width_bytes": width_bytes})
        word = fit.model.word_bytes
        error = fit.stderr["frequency_hz"]
        fit.extra.update(
            peak_bandwidth=fit.model.peak_bandwidth, peak_bandwidth_stderr=None if error is None else word * error
        )
        return fit

    @classmethod
    def _solve(cls, x, y, sigma, fixed=None, **options) -> Solution:
        """The time per message t = L / b(L) = lat + ceil(L / (c w)) / f is
        linear in (1/f, lat): its weighted least squares starts the fit of
        b(L) itself."""
        word = fixed["channels"] * fixed["width_bytes"]
        time = x / y
        design = np.column_stack([np.ceil(x / word), np.ones_like(x)])
        inverse_frequency, latency = linear_least_squares(design, time, time * sigma / np.abs(y))
        if inverse_frequency <= 0:
            raise usage_error(
                "b_eff channel model: the measured time per message does not grow with the size; "
                "give b(L) over sizes beyond one channel word"
            )
        return cls._nonlinear(x, y, sigma, [1.0 / inverse_frequency, max(latency, 0.0)], fixed)


# ------------------------------------------------- command-line registration

OPTIONS = {
    "preset": (str, "520n", f"channel parameters of a board: {', '.join(PRESETS)}"),
    "channels": (int, None, "channels per kernel pair (overrides the preset)"),
    "width_bytes": (float, None, "bytes per channel word (overrides the preset)"),
    "frequency_hz": (float, None, "channel clock in Hz (overrides the preset)"),
    "latency_s": (float, None, "channel latency in s (overrides the preset)"),
    "fpgas": (int, 1, "FPGAs in the ring, for the network's b_eff"),
    "max_size": (int, 20, "largest message 2^MAX_SIZE bytes (sizes 2^0 .. 2^MAX_SIZE)"),
}


def model_from(preset: str = "520n", **overrides) -> ChannelModel:
    if preset not in PRESETS:
        raise usage_error(f"unknown b_eff preset '{preset}'; choose {', '.join(PRESETS)}")
    return ChannelModel.checked(**{**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}})


def predictions(
    preset="520n", channels=None, width_bytes=None, frequency_hz=None, latency_s=None, fpgas=1, max_size=20
) -> Result:
    """b_eff per kernel pair, per FPGA and for the ring of `fpgas` FPGAs."""
    if not 0 <= max_size <= 30:
        raise usage_error(f"--max-size is a log2 exponent from 0 to 30, got {max_size}")
    model = model_from(
        preset, channels=channels, width_bytes=width_bytes, frequency_hz=frequency_hz, latency_s=latency_s
    )
    sizes = [1 << m for m in range(max_size + 1)]
    rows = [
        ("peak bandwidth c*w*f", model.peak_bandwidth, "B/s"),
        (f"b_eff per kernel pair (mean b(L), {len(sizes)} sizes)", model.pair_beff(sizes), "B/s"),
        ("b_eff per FPGA (2 kernel pairs)", model.fpga_beff(sizes), "B/s"),
        (f"b_eff of a ring of {fpgas} FPGA{'s' if fpgas != 1 else ''}", model.network_beff(fpgas, sizes), "B/s"),
    ]
    return figures("model_beff", {"preset": preset, **model.params, "fpgas": fpgas, "sizes": sizes}, rows)


def fit(result: Result):
    return ChannelModel.fit(result)
