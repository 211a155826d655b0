"""Values with their units, as fpgacomm's own texts write them: sizes in
binary units (message sizes are powers of two), times, bandwidths and rates
scaled to three significant digits, bandwidths decimal as OMB counts MB.
OMB's tables and HPCC FPGA's b_eff table keep their own units (report.py);
JSON and CSV keep SI values with every digit.
"""

from __future__ import annotations

import math

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_SECOND_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))
# Decimal, as OMB's MB/s: a bandwidth in GB/s matches what the OSU table says.
_BANDWIDTH_UNITS = (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3), ("B/s", 1.0))
_RATE_UNITS = (("G msg/s", 1e9), ("M msg/s", 1e6), ("k msg/s", 1e3), ("msg/s", 1.0))


def human_bytes(n: float) -> str:
    """Size with binary units: 512 -> "512 B", 1536 -> "1.5 KiB", 4<<20 -> "4 MiB".

    Binary because message sizes are powers of two; whole values print
    without decimals, others with at most two.
    """
    value = float(n)
    unit = 0
    while abs(value) >= 1024 and unit < len(_BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    if value.is_integer():
        text = str(int(value))
    else:
        text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text} {_BINARY_UNITS[unit]}"


def _three_digits(value: float, units: tuple) -> str:
    """value (in the base unit) with three significant digits in the largest
    unit that keeps it at least 1 ("12.3 us", "1.23 ms", "2.00 s")."""
    if value is None or math.isnan(value):
        return "n/a"
    # Round first so that 0.9997 s becomes "1.00 s", not "1000 ms".
    magnitude = abs(float(f"{value:.3g}"))
    name, scale = units[-1]
    for name, scale in units:
        if magnitude >= scale:
            break
    scaled = value / scale
    if abs(scaled) >= 100:
        text = f"{scaled:.0f}"
    elif abs(scaled) >= 10:
        text = f"{scaled:.1f}"
    else:
        text = f"{scaled:.2f}"
    return f"{text} {name}"


def human_seconds(s: float) -> str:
    """Time with three significant digits: "12.3 us", "1.23 ms", "2.00 s"."""
    return _three_digits(s, _SECOND_UNITS)


def human_bandwidth(bytes_per_second: float) -> str:
    """Bandwidth in decimal units, as OMB counts MB: "12.3 GB/s"."""
    return _three_digits(bytes_per_second, _BANDWIDTH_UNITS)


def human_rate(per_second: float) -> str:
    """Message rate: "3.20 M msg/s"."""
    return _three_digits(per_second, _RATE_UNITS)


# Units written scaled, with the smallest value each scale writes well.
_SCALED = {"s": (human_seconds, 1e-9), "B/s": (human_bandwidth, 1.0), "B": (human_bytes, 1.0),
           "msg/s": (human_rate, 1.0)}


def with_unit(value, unit: str) -> str:
    """A value with its unit, as fpgacomm's own texts write every figure:
    seconds, bandwidths, bytes and message rates scaled to three significant
    digits (with_unit(8.6e-7, "s") is "860 ns"), other units after the
    number ("1e+05 1/s"), None as "N/A". OMB's tables and HPCC FPGA's b_eff
    table keep their own units; JSON and CSV keep every digit."""
    if value is None:
        return "N/A"
    if isinstance(value, (str, bool)):
        return str(value)
    scaled, smallest = _SCALED.get(unit, (None, 0.0))
    if scaled and float(f"{abs(value):.3g}") >= smallest:
        return scaled(value)
    text = str(value) if isinstance(value, int) else f"{value:.6g}" if unit not in _SCALED else f"{value:.3g}"
    return f"{text} {unit}".rstrip()
