"""What limits the staged pipeline: the analysis of a timeline Result, as
`fpgacomm osu TEST ... --timeline FILE` writes it (`fpgacomm timeline FILE`
prints it, figures/timeline.py draws it). Per rank and size: how long each
stage was busy in the recorded iteration (a window, or a latency test's
round trip), how much stages overlapped, how long all stood idle, and the
mean per-chunk latencies.

Stages of one rank: the copy engine device-to-host (its sends' copies),
MPI (any of its chunks between posted and seen complete) and the copy
engine host-to-device (its receives' copies). A copy's busy interval is
placed on the host clock at copy_enqueued + queued->start and lasts
start->end (docs/METHODS.md, "Timeline of staged transfers"). A receive
counts for MPI from its posting, so waiting for the sender counts as busy.
The stage busy longest is the pipeline's limit; time with no stage busy is
the engine's own (noticing completions, enqueueing, waiting for slots).
"""

from __future__ import annotations

from collections import defaultdict

from ..runtime.files import ResultError
from .result import Result

STAGES = ("d2h", "mpi", "h2d")
# What a timeline row needs (the rest of benchmarks.osu.TIMELINE_UNITS is for the reader).
COLUMNS = (
    "rank",
    "size",
    "direction",
    "bytes",
    "copy_enqueued",
    "copy_done",
    "mpi_posted",
    "mpi_done",
    "queued_to_submit",
    "submit_to_start",
    "start_to_end",
)
# A send's chunk is copied device-to-host, a receive's host-to-device.
COPY_STAGE = {"send": "d2h", "recv": "h2d"}


def merged(intervals) -> list:
    """The union of (start, end) intervals as sorted disjoint intervals."""
    union = []
    for start, end in sorted(intervals):
        if union and start <= union[-1][1]:
            union[-1][1] = max(union[-1][1], end)
        else:
            union.append([start, end])
    return union


def stage_intervals(rows) -> dict:
    """Busy intervals of each stage of one rank's chunks of one size."""
    busy = {stage: [] for stage in STAGES}
    for row in rows:
        copy_start = row["copy_enqueued"] + row["queued_to_submit"] + row["submit_to_start"]
        busy[COPY_STAGE[row["direction"]]].append((copy_start, copy_start + row["start_to_end"]))
        busy["mpi"].append((row["mpi_posted"], row["mpi_done"]))
    return {stage: merged(intervals) for stage, intervals in busy.items()}


def coverage(unions: dict, window: float) -> list:
    """Seconds of [0, window] during which exactly k stages were busy,
    k = 0..len(unions) (each union disjoint, so a sweep counts them)."""
    events = sorted(
        (t, step) for union in unions.values() for start, end in union for t, step in ((start, 1), (end, -1))
    )
    seconds = [0.0] * (len(unions) + 1)
    busy, last = 0, 0.0
    for t, step in events + [(window, 0)]:
        seconds[busy] += max(0.0, t - last)
        busy, last = busy + step, max(last, t)
    return seconds


def summarize(rows) -> list:
    """One dict per (rank, size): window, per-stage busy seconds and bytes,
    idle and overlapping seconds, mean per-chunk latencies, the limit."""
    groups = defaultdict(list)
    for row in rows:
        groups[row["rank"], row["size"]].append(row)
    summaries = []
    for (rank, size), group in sorted(groups.items()):
        unions = stage_intervals(group)
        # The window starts at the timeline's origin and ends when the host
        # saw the last completion.
        window = max(max(r["mpi_done"], r["copy_done"]) for r in group)
        covered = coverage(unions, window)
        busy = {stage: sum(e - s for s, e in union) for stage, union in unions.items()}
        copies = {stage: [r for r in group if COPY_STAGE[r["direction"]] == stage] for stage in ("d2h", "h2d")}
        summaries.append(
            {
                "rank": rank,
                "size": size,
                "chunks": len(group),
                "window": window,
                "busy": busy,
                "bytes": {
                    "d2h": sum(r["bytes"] for r in copies["d2h"]),
                    "mpi": sum(r["bytes"] for r in group),
                    "h2d": sum(r["bytes"] for r in copies["h2d"]),
                },
                "idle": covered[0],
                "overlap": sum(covered[2:]),
                "copies": {stage: copy_latencies(stage, rows) for stage, rows in copies.items() if rows},
                "mpi_per_chunk": mean([r["mpi_done"] - r["mpi_posted"] for r in group]),
                "limit": max(busy, key=busy.get),
            }
        )
    return summaries


def copy_latencies(stage: str, rows) -> dict:
    """Mean per-copy latencies of one copy stage's chunks, in seconds."""
    return {
        "enqueue_to_start": mean([r["queued_to_submit"] + r["submit_to_start"] for r in rows]),
        "start_to_end": mean([r["start_to_end"] for r in rows]),
        "on_host": mean([r["copy_done"] - r["copy_enqueued"] for r in rows]),
        # From one stage's end to the next one's start, as the host saw it:
        # a blocking enqueue or MPI call, or a slow notice, shows here.
        "handover": mean(
            [r["mpi_posted"] - r["copy_done"] if stage == "d2h" else r["copy_enqueued"] - r["mpi_done"] for r in rows]
        ),
    }


HANDOVER = {"d2h": "copy done->MPI posted", "h2d": "MPI done->copy enqueued"}


def mean(values) -> float:
    return sum(values) / len(values)


def report(summary: dict) -> str:
    window = summary["window"]
    lines = [
        f"rank {summary['rank']}  size {summary['size']} B  {summary['chunks']} chunks  "
        f"window {window * 1e3:.3f} ms"
    ]
    for stage in STAGES:
        busy, nbytes = summary["busy"][stage], summary["bytes"][stage]
        if not nbytes:
            continue
        lines.append(
            f"  {stage:4} busy {busy * 1e3:9.3f} ms {100 * busy / window:5.1f} %   "
            f"{nbytes / busy / 1e9 if busy else 0:7.2f} GB/s while busy"
        )
        if stage == "mpi":
            lines.append(f"       per chunk: posted->done {summary['mpi_per_chunk'] * 1e6:.1f} us")
        else:
            copy = summary["copies"][stage]
            lines.append(
                f"       per copy: enqueue->start {copy['enqueue_to_start'] * 1e6:.1f} us, start->end "
                f"{copy['start_to_end'] * 1e6:.1f} us, enqueue->done on the host {copy['on_host'] * 1e6:.1f} "
                f"us; {HANDOVER[stage]} {copy['handover'] * 1e6:.1f} us"
            )
    lines.append(
        f"  two or more busy {summary['overlap'] * 1e3:.3f} ms ({100 * summary['overlap'] / window:.1f} %), "
        f"all idle {summary['idle'] * 1e3:.3f} ms ({100 * summary['idle'] / window:.1f} %)"
    )
    lines.append(
        f"  limit: {summary['limit']} (busy {100 * summary['busy'][summary['limit']] / window:.1f} % " "of the window)"
    )
    return "\n".join(lines)


def chunks(result: Result, path: str) -> list:
    """The rows of a timeline Result read from `path`, or a ResultError
    (runtime/files.py: the file is not what it should be, status 2) saying
    what the file is instead and how to record a timeline."""
    record = "record one with fpgacomm osu TEST D D --path staged --timeline FILE"
    if not result.benchmark.endswith("_timeline"):
        raise ResultError(path, f"a Result of {result.benchmark}, not a timeline; {record}")
    missing = [column for column in COLUMNS if result.rows and column not in result.rows[0]]
    if missing:
        raise ResultError(path, f"timeline rows lack {', '.join(missing)}; {record}")
    if not result.rows:
        raise ResultError(path, f"holds no staged chunks; {record}")
    for number, row in enumerate(result.rows):
        trouble = _impossible(row)
        if trouble:
            raise ResultError(path, f"row {number}: {trouble}, which no measurement gives; {record}")
    return result.rows


# A chunk's instants on the host clock, and its copy's durations.
_TIMES = ("copy_enqueued", "copy_done", "mpi_posted", "mpi_done", "queued_to_submit", "submit_to_start", "start_to_end")


def _impossible(row: dict) -> str:
    """What makes a timeline row one that no recorded transfer gives, or ""."""
    if row["direction"] not in COPY_STAGE:
        return f"direction {row['direction']!r} (a chunk is a {' or a '.join(COPY_STAGE)})"
    for column in ("rank", "size", "bytes") + _TIMES:
        value = row[column]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
            return f"{column} {value!r} (a finite number, 0 or more)"
    if row["copy_done"] < row["copy_enqueued"]:
        return "a copy done before it was enqueued"
    if row["mpi_done"] < row["mpi_posted"]:
        return "an MPI transfer done before it was posted"
    return ""
