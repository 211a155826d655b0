"""What a simulation will cost, worked out before anything is built.

Every simulated command (``fpgacomm gather --fabric``, ``fpgacomm fabric
latency|bw|traffic``, ``fpgacomm beff --comm-type sim``, the gather_sim and
fabric functions) asks estimate_*
here first and check() refuses, within milliseconds and with one clear
message, a run this machine cannot hold: too many events to simulate (after
exact reuse), too much memory, or too many transfers to group. The limits
are Limits' defaults, raised with --max-events and --max-memory (or the
functions' `limits`). docs/FABRIC.md, "Resources", gives the formulas.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import _core
from ..params import usage_error

_sim = _core.fabric

# Events per frame and hop (enqueue, transmission, link free, ...) and per
# message (start, read engine, delivery), from the simulator's event counts;
# bounded buffers (credit-based flow control: DCN, CusComNet) add the
# wake-ups of a held-back sender, per frame of a message of several.
EVENTS_PER_FRAME_HOP = 2.4
EVENTS_PER_HELD_FRAME = 3.8
EVENTS_PER_MESSAGE = 4
# Fast-forward: of a long stream, about STEPPED_FRAMES frames are stepped
# until its steady state and FRAMES_PER_BINADE more each time its times
# double (a binade), the rest jumped; a reader faster than its link still
# reads each frame by its own arithmetic (no event, no frame, a binade's
# worth of reads at a time: about 1/500 of an event's work, in the time
# guess only), and at most FRAMES_AT_ONCE frames exist at once
# (docs/FABRIC.md, "Fast-forward").
STEPPED_FRAMES = 240
FRAMES_PER_BINADE = 50
READ_WORK_PER_FRAME = 0.002
FRAMES_AT_ONCE = 3000
# Frames of one message in flight where buffers are bounded (DCN's 16 bursts
# per FIFO, a few FIFOs on its way).
HELD_FRAMES = 32
# Bytes the simulator holds per output port with one FIFO (its statistics,
# the topology's entry, and the FIFO: a std::deque allocates its first
# block of 512 bytes at once), per further FIFO (lane) of a port, per node
# (its DMA read queue, another deque, and its engines), per transfer of the
# stage being grouped, per frame in flight (the frame, its queue entry and
# its event) and per distinct group. Fitted to the peak RSS of networks of
# a million nodes (bench/fabric_estimates.py).
BYTES_PER_PORT = 900
BYTES_PER_LANE = 700
BYTES_PER_NODE = 750
BYTES_PER_TRANSFER = 150
BYTES_PER_MESSAGE = 200  # a message in flight: its record, completion and channels
BYTES_PER_FRAME = 80
BYTES_PER_GROUP = 300
BYTES_PER_RUN = 128 * 1024  # the run's own Python objects: its Result, the schedule
# Rates of this kind of machine, for the wall-time guess only.
EVENTS_PER_SECOND = 8e6
TRANSFERS_PER_SECOND = 8e6
SECONDS_PER_STAGE = 1e-4
# Stages of a chain schedule grouped afresh (the first, and those where a
# chain ends or a collected direction goes); the others only drain chains
# and keep the groups of the stage before (run_schedule, "Exact reuse").
GROUPED_STAGES = 8


@dataclass(frozen=True)
class Limits:
    """What a simulation may take. The defaults admit the cluster-scale
    targets (the 11664-node Fig. 20 points, the largest of which, stepped
    without fast-forward, simulates 2.4e9 events in 4 to 9 minutes, and
    100,000-node gathers) and refuse what a workstation cannot hold."""

    events: float = 5e9  # events simulated (after reuse): about 10 minutes
    memory: float = 8 * 2**30  # bytes
    transfers: float = 5e9  # transfers to split into groups (or simulate, without reuse)


@dataclass(frozen=True)
class Estimate:
    what: str
    events: float  # simulated, after reuse
    memory: float  # bytes, at the peak
    transfers: float  # grouped (or, without reuse, simulated) over all stages
    reads: float = 0.0  # frames read without events (fast-forward's second clock)
    stages: float = 0.0  # of a schedule: built, modelled and passed along one by one

    @property
    def seconds(self) -> float:
        """A guess of the wall time, from this kind of machine's rates:
        shown as an estimate, never checked (shared cores vary too much)."""
        return (
            (self.events + READ_WORK_PER_FRAME * self.reads) / EVENTS_PER_SECOND
            + self.transfers / TRANSFERS_PER_SECOND
            + self.stages * SECONDS_PER_STAGE
        )


def check(estimate: Estimate, limits: Limits | None = None) -> Estimate:
    """Raises one usage error (the same on every rank) naming what is too large and how to allow it."""
    limits = limits or Limits()
    problems = []
    if estimate.events > limits.events:
        problems.append(f"about {estimate.events:.3g} events to simulate (limit {limits.events:.3g}, " f"--max-events)")
    if estimate.memory > limits.memory:
        problems.append(
            f"about {estimate.memory / 2**30:.3g} GiB of memory (limit {limits.memory / 2**30:.3g} GiB, "
            f"--max-memory)"
        )
    if estimate.transfers > limits.transfers:
        problems.append(
            f"about {estimate.transfers:.3g} transfers to place (limit {limits.transfers:.3g}, " f"--max-events)"
        )
    if problems:
        guess = f" (time estimated at about {estimate.seconds:.3g} s)" if estimate.seconds >= 1 else ""
        raise usage_error(
            f"fabric: {estimate.what} would need {' and '.join(problems)}, more than this run may "
            f"take{guess}; give fewer nodes, packets or bytes, or raise the "
            f"limits with --max-events N / --max-memory SIZE (Python: limits=Limits(...))"
        )
    return estimate


def _frames(nbytes: float, chunk: int) -> float:
    return max(1.0, math.ceil(nbytes / chunk))


def network_links(spec) -> tuple:
    """(links, levels) of the spec's topology, from its closed form in the
    simulator (Topology::shape: what topology.cpp will build, known before it
    is built). levels as the estimates count them: half the longest path on
    switched networks (a fat tree's levels; 2 for paths through hosts), 0 on
    direct ones."""
    shape = _sim.shape(spec)
    return shape["links"], shape["longest_path"] // 2 if shape["levels"] else 0


def network_memory(spec) -> float:
    """Bytes of the Network the simulator builds from `spec`: its ports (two
    per link, one FIFO each, the nodes' ports with the hub's lanes) and its
    nodes."""
    links, _ = network_links(spec)
    node_ports = spec.nodes * max(1, spec.ports_per_node)
    extra_lanes = node_ports * max(0, spec.hub.lanes - 1)
    return 2 * links * BYTES_PER_PORT + extra_lanes * BYTES_PER_LANE + spec.nodes * BYTES_PER_NODE


def mean_links(spec) -> float:
    """Links crossed on average between two distinct nodes (uniform traffic),
    from the topology's closed form (Topology::shape)."""
    return _sim.shape(spec)["mean_links"]


def _chain_shape(name: str, nodes: int, ports: int, virtual_ports: int) -> tuple:
    """(stages, transfers, longest chain, chains collected whole) of a
    schedule, from schedules.py's rules without building it."""
    m = nodes - 1
    if name == "mpi":
        return 1, m, 1, 0
    if name == "vlink":
        return math.ceil(m / 2), m, 1, 0
    links = ports if name == "ring" else ports * virtual_ports
    per = math.ceil(m / links)
    stages = per + max(0, math.ceil(min(links - 2, max(m - 2 * per, 0)) / 2))
    # Every chain of c nodes moves c(c+1)/2 hops while it drains.
    return stages, links * per * (per + 1) / 2, per, links - 2


def _held_back(spec) -> bool:
    """Bounded buffers (credit-based flow control) hold back a reader that
    outruns its link: every frame of a long message then wakes it."""
    return math.isfinite(spec.hub.buffer_bytes)


def _message_events(frames: float, hops: float, fast_forward: bool, held: bool = False) -> tuple:
    """(events, frames read without events) of one message of `frames` frames
    over `hops` hops: every frame on every hop (and its sender's wake-up
    where buffers are bounded), or with fast-forward, beyond
    STEPPED_FRAMES, only its reader's work."""
    per_frame = EVENTS_PER_FRAME_HOP * hops + (EVENTS_PER_HELD_FRAME if held and frames > 1 else 0.0)
    if not fast_forward or frames <= STEPPED_FRAMES:
        return EVENTS_PER_MESSAGE + per_frame * frames, 0.0
    stepped = STEPPED_FRAMES + FRAMES_PER_BINADE * math.log2(frames / STEPPED_FRAMES)
    return EVENTS_PER_MESSAGE + per_frame * stepped, frames


def estimate_gather(
    name: str,
    spec,
    block_bytes: int,
    *,
    ports: int = 2,
    virtual_ports: int = 2,
    collective: str = "gather",
    reuse: bool = True,
    fast_forward: bool = True,
) -> Estimate:
    """A gather_sim point of schedule `name` on the fabric of `spec` (a
    preset's spec: nothing is built). With reuse, the events are those of
    the distinct groups: per path shape (up to 2 * levels + 1 of them, per
    plane; a ring allgather's transfers to the next node take one shape per
    level) one hop of a block, plus the transfers that carry a whole chain
    (the longest chain's blocks each); without, every transfer's frames on
    every hop. Fast-forward leaves of a long message little more than its
    reader's work. MPI's single stage is one group (every transfer meets
    the others at the root's write engines, or, allgathering, at every
    node's), simulated whole, frame by frame: more than 16 messages in
    flight are never fast-forwarded."""
    nodes = spec.nodes
    _, levels = network_links(spec)
    chunk = spec.chunk_bytes()
    held = _held_back(spec)
    what = f"a simulated {name} {collective} of {nodes} nodes x {block_bytes} bytes"
    hops = 2 * levels if levels else 1
    frames = _frames(block_bytes, chunk)
    if name == "mpi":
        transfers = nodes * (nodes - 1) if collective == "allgather" else nodes - 1
        stepped = fast_forward and transfers <= 16
        events, reads = _message_events(frames, hops, stepped, held)
        # Every message's frames end up queued: hosts store and forward,
        # and their buffers are unbounded.
        memory = (
            network_memory(spec)
            + BYTES_PER_RUN
            + transfers * (BYTES_PER_TRANSFER + BYTES_PER_MESSAGE)
            + transfers * frames * BYTES_PER_FRAME
        )
        return Estimate(what, transfers * events, memory, transfers, transfers * reads)
    # Distinct groups (path shapes) x messages in each, and their hops,
    # counted from the simulator's groups (bench/fabric_estimates.py): a ring
    # allgather's transfers to the next node take one shape per level; a
    # DCN chain hop one per port; the tree's chain hops and its root's pairs
    # levels + 2; vlink's pairs into the root 2 * levels, about levels + 1
    # links long.
    if collective == "allgather":
        stages, transfers, longest, collected = nodes - 1, nodes * (nodes - 1), 1, 0
        groups = max(1, levels)
    else:
        stages, transfers, longest, collected = _chain_shape(name, nodes, ports, virtual_ports)
        if levels == 0:
            groups = ports
        elif name == "vlink":
            groups, hops = 2 * 2 * levels, levels + 1
        else:
            groups = levels + 2
        # A cluster's ranks share their host's bus: a chain's hops inside a
        # host (both arms of the ring or tree) meet there, one group of up
        # to 2 x ranks per host transfers.
        if spec.topology == "cluster" and name != "vlink":
            groups *= 2 * spec.fpgas_per_host
    per_block, block_reads = _message_events(frames, hops, fast_forward, held)
    per_chain, chain_reads = _message_events(_frames(longest * block_bytes, chunk), hops, fast_forward, held)
    # The collected directions go to the root together: one group (its
    # write engines), simulated once with every message in it.
    simulated = groups if reuse else transfers
    events = simulated * per_block + collected * per_chain
    reads = simulated * block_reads + collected * chain_reads
    widest = transfers / max(stages, 1) * 2  # the first stages are the widest
    # Frames queue at a sender whose memory reads faster than its link sends:
    # at most the longest message's, or every transfer's of the widest stage.
    longest_message = longest * block_bytes if collected else block_bytes
    queued = _frames(longest_message, chunk)
    if fast_forward:
        queued = min(queued, FRAMES_AT_ONCE)
    per_message = min(frames, HELD_FRAMES) if held else frames  # bounded buffers hold the rest in memory
    in_flight = max(queued, widest * per_message if not reuse else 0)
    memory = (
        network_memory(spec)
        + BYTES_PER_RUN
        + widest * BYTES_PER_TRANSFER
        + in_flight * BYTES_PER_FRAME
        + groups * BYTES_PER_GROUP
    )
    grouped = min(transfers, GROUPED_STAGES * widest) if reuse else transfers
    return Estimate(what, events, memory, grouped, reads, stages)


def estimate_packets(what: str, spec, packets: float, sizes: list, *, hops: float) -> Estimate:
    """`packets` messages of each of `sizes` bytes crossing `hops` links each
    (on average) on the fabric of `spec` (latency, bandwidth and traffic:
    one run per size, every frame stepped). Memory: the network, a record
    per message and, queued at the sender, up to half of one message's
    frames (a reader of 19.2 GB/s ahead of a link of 10.8 to 12.5 GB/s
    leaves 35 to 45 % of them queued when its read ends)."""
    chunk, held = spec.chunk_bytes(), _held_back(spec)
    events = sum(packets * _message_events(_frames(size, chunk), hops, False, held)[0] for size in sizes)
    frames = _frames(max(sizes, default=0), chunk) / 2
    memory = network_memory(spec) + BYTES_PER_RUN + (packets + frames) * BYTES_PER_FRAME
    return Estimate(what, events, memory, packets)


def estimate_network(what: str, spec) -> Estimate:
    """Building the fabric alone: checked before its topology exists, so that
    a fabric of millions of nodes is refused at once."""
    return Estimate(what, 0.0, network_memory(spec), 0.0)


def estimate_beff_ring(what: str, spec, sizes: list) -> Estimate:
    """HPCC FPGA's b_eff ring (fabric.beff_ring): per size a fresh ring on
    which every node sends one message to each neighbour at once, every frame
    over the path to its neighbour (one link on direct networks). Memory at
    the largest size: the network, and every message's frames, queued at
    their senders together."""
    nodes, chunk = spec.nodes, spec.chunk_bytes()
    # Neighbours in rank order are one link apart on direct networks; through switches, at most the longest path.
    shape = _sim.shape(spec)
    hops = shape["longest_path"] if shape["levels"] else 1
    events = sum(2 * nodes * _message_events(_frames(size, chunk), hops, False, _held_back(spec))[0] for size in sizes)
    memory = network_memory(spec) + BYTES_PER_RUN + 2 * nodes * _frames(max(sizes, default=0), chunk) * BYTES_PER_FRAME
    return Estimate(what, events, memory, 2 * nodes * len(sizes))


class Progress:
    """Progress on stderr for runs longer than `after` seconds: before a
    point estimated to take longer, what it is and the estimate; after each
    point once the run has taken longer, how many are done and the time.
    show: the caller's progress line instead (the command's), told of every
    point as it begins and ends, between points only (never from inside
    the simulator)."""

    def __init__(self, what: str, total: int, after: float = 3.0, show: Callable[[str], None] | None = None):
        self.what, self.total, self.after, self.show = what, total, after, show
        self.start = time.perf_counter()
        self.done = 0

    def begin(self, label: str, estimate: Estimate) -> None:
        if self.show is not None:
            self.show(f"point {self.done + 1} of {self.total} ({label}, about {estimate.seconds:.0f} s estimated)")
        elif estimate.seconds >= self.after:
            print(
                f"{self.what}: {self.done + 1}/{self.total} ({label}): about {estimate.events:.3g} events, "
                f"{estimate.seconds:.0f} s estimated",
                file=sys.stderr,
                flush=True,
            )

    def step(self, label: str) -> None:
        self.done += 1
        if self.show is not None:
            self.show(f"{self.done} of {self.total} points simulated ({label})")
            return
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.after:
            print(f"{self.what}: {self.done}/{self.total} done ({label}), {elapsed:.1f} s", file=sys.stderr, flush=True)
