"""Communication patterns on a simulated fabric, beside the ping-pong and
stream of fabric.py: OSU's multiple-pair bandwidth and message rate
(osu_mbw_mr), a k-to-1 incast and the dissemination barrier. Each runs as a
staged schedule (fabric.run_schedule) on any preset or platform file, the
cluster preset first: they are what a calibration measures and what a
prediction needs (docs/FABRIC.md, "Patterns").
"""

from __future__ import annotations

import math

from ..params import byte_sizes, usage_error
from . import fabric as fabrics
from . import mpi_library, resources


def _count(value, least: int, most: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
        raise usage_error(f"fabric: {what} {value!r}; give a whole number from {least} to {most}")
    return value


def _admitted(what: str, fab, messages: int, sizes: list, limits) -> dict:
    """The run's estimate (resources), checked against `limits` before anything is simulated."""
    hops = max(1, fabrics._sim.shape(fab.spec)["longest_path"])
    return fabrics._estimated(
        resources.check(
            resources.estimate_packets(f"{what} on {fab.name}", fab.spec, messages, sizes, hops=hops), limits
        )
    )


def mbw_mr(fabric="cluster", *, nodes: int | None = None, pairs=(1,), size=1 << 20, window: int = 64, limits=None):
    """osu_mbw_mr: ranks 0..k-1 each send `window` messages of `size` bytes
    to their partner n/2 ranks on (k pairs, one row per k and size): the
    time until the last arrived, the aggregate bandwidth (bytes / time) and
    the message rate (messages / time). limits (resources.Limits): a run
    larger is refused before it starts."""
    fab = fabrics._fabric(fabric, nodes)
    half = fab.nodes // 2
    pairs = [_count(k, 1, half, "mbw_mr pairs") for k in ([pairs] if isinstance(pairs, int) else pairs)]
    window = _count(window, 1, 1 << 20, "mbw_mr window")
    sizes = byte_sizes(size, "fabric: mbw_mr message size")
    estimated = _admitted(
        f"mbw_mr of up to {max(pairs)} pairs x {window} messages", fab, sum(pairs) * window, sizes, limits
    )
    rows = []
    for k in pairs:
        for nbytes in sizes:
            stage = [(window, i, 0, half + i, 0, nbytes, 0, 0) for i in range(k)]
            time = fabrics.run_schedule(fab, [stage], reconfigure=False, details=False).rows[1]["transfer"]
            rows.append(
                {
                    "pairs": k,
                    "size": nbytes,
                    "time": time,
                    "bandwidth": k * window * nbytes / time,
                    "message_rate": k * window / time,
                }
            )
    return fabrics._result(
        "fabric_mbw_mr",
        fab,
        {"window": window, **estimated},
        rows,
        {"pairs": "", "size": "B", "time": "s", "bandwidth": "B/s", "message_rate": "1/s"},
    )


def incast(fabric="cluster", *, nodes: int | None = None, senders=(1,), size=1 << 20, limits=None):
    """k ranks (1..k) send `size` bytes each to rank 0 at once, per k and
    size: the time until the last arrived and the bandwidth into rank 0
    (k * size / time). limits: as mbw_mr's."""
    fab = fabrics._fabric(fabric, nodes)
    counts = [
        _count(k, 1, fab.nodes - 1, "incast senders") for k in ([senders] if isinstance(senders, int) else senders)
    ]
    sizes = byte_sizes(size, "fabric: incast message size")
    estimated = _admitted(f"an incast of up to {max(counts)} senders", fab, sum(counts), sizes, limits)
    rows = []
    for k in counts:
        for nbytes in sizes:
            stage = [(k, 1, 1, 0, 0, nbytes, 0, 0)]
            time = fabrics.run_schedule(fab, [stage], reconfigure=False, details=False).rows[1]["transfer"]
            rows.append({"senders": k, "size": nbytes, "time": time, "bandwidth": k * nbytes / time})
    return fabrics._result(
        "fabric_incast", fab, estimated, rows, {"senders": "", "size": "B", "time": "s", "bandwidth": "B/s"}
    )


def barrier(fabric="cluster", *, nodes=(2, 4, 8), limits=None):
    """The dissemination barrier at each rank count n: ceil(log2 n) rounds,
    in round r every rank sends an empty message to rank + 2^r (mod n) and
    waits for the one from rank - 2^r; the time is the sum over the rounds
    of each round's slowest message. limits: as mbw_mr's, per rank count."""
    template = fabrics.platform_or_preset(fabric)
    counts = [nodes] if isinstance(nodes, int) else list(nodes)
    if not counts:
        raise usage_error("fabric: barrier needs at least one rank count, e.g. nodes=(2, 4, 8)")
    rows = []
    for n in counts:
        fab = fabrics.platform_or_preset(template, _count(n, 2, 1 << 24, "barrier rank count"))
        rounds = math.ceil(math.log2(n))
        resources.check(resources.estimate_network(f"a simulated {fab.name} of {n} nodes", fab.spec), limits)
        _admitted(f"a barrier of {n} ranks", fab, n * rounds, [0], limits)
        stages = [[(n, 0, 1, 1 << r, 1, 0, 0, 0)] for r in range(rounds)]
        run = fabrics.run_schedule(fab, stages, reconfigure=False, details=False)
        rows.append({"nodes": n, "stages": rounds, "time": sum(row["transfer"] for row in run.rows[1:])})
    return fabrics._result("fabric_barrier", template, {}, rows, {"nodes": "", "stages": "", "time": "s"})


def mpi_gather(fabric="cluster", *, nodes: int | None = None, size=1 << 20, call: str = "MPI_Gather", limits=None):
    """An MPI gather call at root 0 as the cluster's MPI library runs it
    (simulation/mpi_library.py: for Open MPI 4.1, MPI_Gather by coll/tuned's
    fixed decision, MPI_Gatherv by coll/basic's linear one), per size (bytes
    per rank): the algorithm and the time until the root holds every block,
    its messages run one step after another from an empty network."""
    fab = fabrics._fabric(fabric, nodes)
    if fab.name != "cluster":
        raise usage_error(f"fabric: mpi_gather runs on a cluster (its mpi_library), not on {fab.name}")
    if call not in ("MPI_Gather", "MPI_Gatherv"):
        raise usage_error(f"fabric: mpi_gather call {call!r}; use MPI_Gather or MPI_Gatherv")
    sizes = byte_sizes(size, "fabric: mpi_gather block size")
    estimated = _admitted(f"an {call} of {fab.nodes} ranks", fab, fab.nodes - 1, sizes, limits)
    rows = []
    for nbytes in sizes:
        name = mpi_library.algorithm(fab.arguments["mpi_library"], call, fab.nodes, nbytes)
        steps = mpi_library.stages(name, "gather", fab.nodes, nbytes, fab.arguments["eager_threshold"])
        steps = steps or [[(fab.nodes - 1, 1, 1, 0, 0, nbytes, 0, 0)]]
        run = fabrics.run_schedule(fab, steps, reconfigure=False, details=False)
        rows.append({"size": nbytes, "algorithm": name, "time": sum(row["transfer"] for row in run.rows[1:])})
    return fabrics._result(
        "fabric_mpi_gather", fab, {"call": call, **estimated}, rows, {"size": "B", "algorithm": "", "time": "s"}
    )
