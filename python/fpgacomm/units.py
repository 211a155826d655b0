"""Values with their units, as fpgacomm's own texts write them: sizes in
binary units (message sizes are powers of two), times, bandwidths and rates
scaled to three significant digits (measured values; four for model and
simulator figures), bandwidths decimal as OMB counts MB, ratios as percentages.
OMB's tables and HPCC FPGA's b_eff table keep their own units (report.py);
JSON and CSV keep SI values with every digit.
"""

from __future__ import annotations

import math

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_SECOND_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))
# Times per byte reach picoseconds (1 ps/B is 1 TB/s).
_PER_BYTE_UNITS = _SECOND_UNITS + (("ps", 1e-12),)
# Decimal, as OMB's MB/s: a bandwidth in GB/s matches what the OSU table says.
_BANDWIDTH_UNITS = (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3), ("B/s", 1.0))
_RATE_UNITS = (("G msg/s", 1e9), ("M msg/s", 1e6), ("k msg/s", 1e3), ("msg/s", 1.0))


def human_bytes(n: float) -> str:
    """Size with binary units: 512 -> "512 B", 1536 -> "1.5 KiB", 4<<20 -> "4 MiB".

    Binary because message sizes are powers of two; whole values print
    without decimals, others with at most two.
    """
    value = float(n)
    if not math.isfinite(value):
        return f"{value} B"
    unit = 0
    while abs(value) >= 1024 and unit < len(_BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    if value.is_integer():
        text = str(int(value))
    else:
        text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text} {_BINARY_UNITS[unit]}"


def _significant(value: float, units: tuple, digits: int = 3) -> str:
    """value (in the base unit) with `digits` significant digits in the
    largest unit that keeps it at least 1 ("12.3 us", "1.23 ms", "2.00 s";
    four digits: "1.157 us")."""
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):  # read from a file: no scale fits it
        return f"{value} {units[0][0]}"
    # Round first so that 0.9997 s becomes "1.00 s", not "1000 ms".
    magnitude = abs(float(f"{value:.{digits}g}"))
    name, scale = next(((name, scale) for name, scale in units if magnitude >= scale), units[-1])
    scaled = value / scale
    whole = math.floor(math.log10(abs(float(f"{scaled:.{digits}g}")))) + 1 if scaled else 1
    return f"{scaled:.{max(digits - whole, 0)}f} {name}"


def human_seconds(s: float, digits: int = 3) -> str:
    """Time with three (or `digits`) significant digits: "12.3 us", "1.23 ms", "2.00 s"."""
    return _significant(s, _SECOND_UNITS, digits)


def human_bandwidth(bytes_per_second: float, digits: int = 3) -> str:
    """Bandwidth in decimal units, as OMB counts MB: "12.3 GB/s"."""
    return _significant(bytes_per_second, _BANDWIDTH_UNITS, digits)


def human_rate(per_second: float, digits: int = 3) -> str:
    """Message rate: "3.20 M msg/s"."""
    return _significant(per_second, _RATE_UNITS, digits)


def human_time_per_byte(seconds_per_byte: float, digits: int = 3) -> str:
    """A time per byte (Hockney's G, LogGP's G) with the bandwidth it
    makes: "68.4 ps/B (14.6 GB/s)"."""
    if seconds_per_byte is None or math.isnan(seconds_per_byte):
        return "n/a"
    time = _significant(seconds_per_byte, _PER_BYTE_UNITS, digits)
    if seconds_per_byte <= 0:
        return f"{time}/B"
    return f"{time}/B ({human_bandwidth(1 / seconds_per_byte, digits)})"


def human_fraction(fraction: float, digits: int = 3) -> str:
    """A ratio as a percentage: -0.0236982 -> "-2.37 %"."""
    if fraction is None or math.isnan(fraction):
        return "n/a"
    if math.isinf(fraction):
        return f"{fraction} %"
    percent = 100 * fraction
    whole = math.floor(math.log10(abs(float(f"{percent:.{digits}g}")))) + 1 if percent else 1
    return f"{percent:.{max(digits - whole, 0)}f} %"


# Units written scaled, with the smallest value each scale writes well.
# "fraction" is a ratio (a relative error), written as a percentage.
_SCALED = {
    "s": (human_seconds, 1e-9),
    "B/s": (human_bandwidth, 1.0),
    "B": (human_bytes, 1.0),
    "msg/s": (human_rate, 1.0),
    "s/B": (human_time_per_byte, 0.0),
    "fraction": (human_fraction, 0.0),
}
#: The units of numbers: a column in one of them holds numbers (or None, a
#: value not measured) and never text; readers refuse a file where it does.
NUMBER_UNITS = frozenset(_SCALED) | {"1/s", "Hz"}
# Measured values carry three significant digits; model and simulator
# figures, exact for their inputs, carry MODEL_DIGITS (the papers' 12.02
# against 12.44 GB/s, 1.157 us).
MODEL_DIGITS = 4


def with_unit(value, unit: str, digits: int = 3) -> str:
    """A value with its unit, as fpgacomm's own texts write every figure:
    seconds, bandwidths, bytes, message rates and times per byte scaled to
    three (or `digits`) significant digits (with_unit(8.6e-7, "s") is "860
    ns"), fractions as percentages, other units after the number ("1e+05
    1/s"), None as "N/A". OMB's tables and HPCC FPGA's b_eff table keep their
    own units; JSON and CSV keep every digit."""
    if value is None:
        return "N/A"
    if isinstance(value, (str, bool)):
        return str(value)
    scaled, smallest = _SCALED.get(unit, (None, 0.0))
    if scaled is human_bytes:
        return human_bytes(value) if abs(value) >= smallest else f"{value:.{digits}g} B"
    if scaled and float(f"{abs(value):.{digits}g}") >= smallest:
        return scaled(value, digits)
    text = str(value) if isinstance(value, int) else f"{value:.6g}" if unit not in _SCALED else f"{value:.{digits}g}"
    return f"{text} {unit}".rstrip()
