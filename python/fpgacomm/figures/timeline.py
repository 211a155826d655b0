"""The figure of a staged-transfer timeline (results/timeline.py): per rank,
the share of the recorded window each stage was busy, and the share all
stood idle, against the message size. The stage highest at a size limits
the pipeline there; a high idle share points at the engine.

    from fpgacomm import Result
    from fpgacomm.figures import timeline
    timeline.figure(Result.read_json("bw.timeline.json")).savefig("bw_stages.png")
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..results import timeline
from ..results.result import Result
from .plot import new_figure, size_axis

# Each stage in the same colour on every panel.
_STAGES = {
    "d2h": ("device-to-host copies", "tab:blue"),
    "mpi": ("MPI", "tab:orange"),
    "h2d": ("host-to-device copies", "tab:green"),
}


def figure(result: Result, path: str = "timeline") -> Figure:
    """One panel per rank: busy share of each stage and the idle share, in
    per cent of the window, per message size."""
    summaries = timeline.summarize(timeline.chunks(result, path))
    ranks = sorted({s["rank"] for s in summaries})
    fig, axes = new_figure(len(ranks), 1, sharex=True)
    for ax, rank in zip(axes, ranks):
        mine = [s for s in summaries if s["rank"] == rank]
        sizes = [s["size"] for s in mine]
        for stage in timeline.STAGES:
            if any(s["bytes"][stage] for s in mine):
                name, colour = _STAGES[stage]
                ax.plot(
                    sizes, [100 * s["busy"][stage] / s["window"] for s in mine], marker="o", label=name, color=colour
                )
        ax.plot(sizes, [100 * s["idle"] / s["window"] for s in mine], linestyle="--", color="grey", label="all idle")
        size_axis(ax, label=None)
        ax.set_ylim(0, 105)
        ax.set_ylabel("share of the window (%)")
        ax.set_title(f"{result.benchmark}, rank {rank}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    axes[-1].set_xlabel("message size (bytes)")
    return fig
