"""OSU Micro-Benchmarks' -G: each size's per-iteration values, a figure per size.

OMB draws, per message size, the value of every timed iteration against
the iteration's number (latency in us, bandwidth in MB/s), titled with the
size and its average, into <test>-<size>.png, and with pdf gathers them in
<test>.pdf. This draws the same with Matplotlib from a Result's samples:
osu_latency-8.png, osu_latency.pdf (a page per size); mbw_mr -V draws one
figure per size and window (osu_mbw_mr-8-w16.png).
"""

from __future__ import annotations

import os

from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.ticker import MaxNLocator

from ..params import usage_error
from ..results import rounds
from ..results.result import Result, atomic_write
from .plot import new_figure, save

# OMB's units of the plotted values: latency in us, bandwidth in MB/s (10^6 B/s).
_UNITS = {"s": ("Latency", "us", 1e6), "B/s": ("Bandwidth", "MB/s", 1e-6)}


def _series(result: Result) -> list[tuple[str, str, list, str]]:
    """(file stem, title, values, axis label) per row: the row's per-iteration samples."""
    value = "latency_avg" if "latency_avg" in result.columns else "bandwidth"
    quantity, unit, factor = _UNITS[result.units[value]]
    series = []
    for row in result.rows:
        window = row.get("window") if "window" in result.columns else None
        key = f"{row['size']} w{window}" if window else str(row["size"])
        stem = f"{result.benchmark}-{row['size']}" + (f"-w{window}" if window else "")
        title = (
            f"{result.benchmark}: size {row['size']} B"
            + (f", window {window}" if window else "")
            + f", average {row[value] * factor:.2f} {unit}"
        )
        values = [sample * factor for sample in rounds.samples_of(result.samples, key)]
        series.append((stem, title, values, f"{quantity} ({unit})"))
    return series


def figures(result: Result) -> list:
    """(file stem, Figure) per row of a Result with per-iteration samples."""
    if not result.samples:
        raise usage_error(f"{result.benchmark} keeps no per-iteration values to draw (-G)")
    drawn = []
    for stem, title, values, label in _series(result):
        figure, (ax,) = new_figure()
        ax.plot(range(1, len(values) + 1), values, marker=".", linewidth=0.8)
        ax.set_xlabel("Iteration")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(label)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        drawn.append((stem, figure))
    return drawn


def write(result: Result, formats=("png",), directory: str = ".") -> list[str]:
    """OMB's -G: png writes <benchmark>-<size>.png per size, pdf one
    <benchmark>.pdf with a page per size, in `directory`. Returns the paths."""
    drawn = figures(result)
    paths = []
    if "png" in formats:
        for stem, figure in drawn:
            paths.append(os.path.join(directory, f"{stem}.png"))
            save(figure, paths[-1])
    if "pdf" in formats:
        paths.append(os.path.join(directory, f"{result.benchmark}.pdf"))

        def pages(file) -> None:
            with PdfPages(file) as document:
                for _, figure in drawn:
                    document.savefig(figure)

        try:
            atomic_write(paths[-1], pages, newline=None, binary=True)
        except OSError as error:
            raise usage_error(f"cannot write {paths[-1]!r}: {error.strerror or error}") from None
    return paths
