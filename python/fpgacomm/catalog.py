"""The benchmarks fpgacomm runs on real ranks, as plain data: one entry each.

This is the one place a benchmark is registered; a collective's entry is
made from its entry in the core's table (src/bench/collective_table.cpp),
which holds all of a collective's facts. It sits at the floor of the
package, beside params.py, so that every layer may read it:
results/kinds.py makes each entry a kind of Result (its headline, text and
figure), and benchmarks/registry.py adds the Python function and the command line
options, from which the osu command, the figures and the suite take their
lists. benchmarks/registry.py says how to add a benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _core

# Which benchmark families exist; benchmarks/registry.py gives each its
# module and command line options.
FAMILIES = ("pt2pt", "collective", "onesided", "beff", "gather", "devbw", "overhead")
# The families that `fpgacomm osu TEST` runs, TEST being the name without "osu_".
OSU_FAMILIES = ("pt2pt", "collective", "onesided")
# What a benchmark's headline column measures: a time per operation (s) or
# a bandwidth (B/s).
QUANTITIES = ("latency", "bandwidth")
# The text report (results/report.py's TEXTS) that prints the benchmark's Result:
# OSU Micro-Benchmarks' tables per family (mbw_mr's adds its message rate),
# HPCC FPGA's b_eff table, the gather table, the device copy table, or the
# plain table of any Result.
TEXTS = ("osu_pt2pt", "osu_mbw_mr", "osu_collective", "osu_onesided", "beff", "gather", "devbw", "table")
# The figure that draws the benchmark's Results (results/kinds.py names
# plot.py's figure of each): its headline quantity against message size,
# b_eff per size, gather time and throughput; None where no figure does.
FIGURES = ("sweep", "beff", "gather", None)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark. name: the Result's benchmark name. quantity: one of
    QUANTITIES. text: one of TEXTS. title: OSU Micro-Benchmarks' title of
    the test ("Latency Test"), and call: the MPI call OMB's one-sided
    titles name before it ("_Put"), for the osu_* texts. figure: one of
    FIGURES. messages: False for a benchmark that moves no data (the
    barrier), which takes no sizes, datatype or buffer kinds. omb_lacks:
    the options of its family that OSU Micro-Benchmarks 7.4 does not give
    this test (a collective's, from the core's entry), which fpgacomm
    neither takes nor refuses."""

    name: str
    family: str
    quantity: str
    text: str
    title: str = ""
    call: str = ""
    figure: str | None = "sweep"
    messages: bool = True
    omb_lacks: tuple = ()

    @property
    def test(self) -> str:
        """The name `fpgacomm osu` gives the test ("latency" for osu_latency)."""
        return self.name.removeprefix("osu_")


def _pt2pt(test: str, quantity: str, title: str, text: str = "osu_pt2pt") -> Benchmark:
    return Benchmark(f"osu_{test}", "pt2pt", quantity, text, title)


def _collective(entry: _core.Collective) -> Benchmark:
    """The benchmark of one entry of the core's table of collectives
    (src/bench/collective_table.cpp); one that moves no data (the barrier)
    has one row, of size 0, and no figure."""
    return Benchmark(
        f"osu_{entry.name}",
        "collective",
        "latency",
        "osu_collective",
        f"{entry.title} Latency Test",
        figure="sweep" if entry.moves_data else None,
        messages=entry.moves_data,
        omb_lacks=tuple(entry.omb_lacks),
    )


def _onesided(test: str, call: str, title: str) -> Benchmark:
    quantity = "latency" if test.endswith("latency") else "bandwidth"
    return Benchmark(f"osu_{test}", "onesided", quantity, "osu_onesided", title, call)


# The order is the command line's (`fpgacomm osu --help`) and OSU
# Micro-Benchmarks' titles are spelt as OMB 7.4 prints them.
BENCHMARKS = (
    _pt2pt("latency", "latency", "Latency Test"),
    _pt2pt("bw", "bandwidth", "Bandwidth Test"),
    _pt2pt("bibw", "bandwidth", "Bi-Directional Bandwidth Test"),
    _pt2pt("multi_lat", "latency", "Multi Latency Test"),
    _pt2pt("mbw_mr", "bandwidth", "Multiple Bandwidth / Message Rate Test", text="osu_mbw_mr"),
    *(_collective(entry) for entry in _core.collectives()),  # the core's table, in its order
    _onesided("put_latency", "_Put", "Latency Test"),
    _onesided("get_latency", "_Get", "latency Test"),
    _onesided("put_bw", "_Put", "Bandwidth Test"),
    _onesided("get_bw", "_Get", "Bandwidth Test"),
    _onesided("put_bibw", "_Put", "Bi-directional Bandwidth Test"),
    Benchmark("beff", "beff", "bandwidth", "beff", figure="beff"),
    Benchmark("gather", "gather", "latency", "gather", figure="gather"),
    Benchmark("devbw", "devbw", "bandwidth", "devbw", figure=None),
    Benchmark("osu_overhead", "overhead", "latency", "table", figure=None),
)
BY_NAME = {benchmark.name: benchmark for benchmark in BENCHMARKS}
