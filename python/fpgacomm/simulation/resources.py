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
from dataclasses import dataclass
from typing import Callable

from ..params import usage_error

# Events per frame and hop (enqueue, transmission, link free, ...) and per
# message (start, read engine, delivery), from the simulator's event counts.
EVENTS_PER_FRAME_HOP = 2.4
EVENTS_PER_MESSAGE = 4
# Fast-forward: of a long stream, about this many frames are stepped (until
# its steady state, and a few periods in each binade of time), the rest
# jumped; a reader faster than its link still reads each frame by its own
# arithmetic (no event, no frame: about 1/20 of an event's work), counted
# with the events, and at most a few times STEPPED_FRAMES frames exist at
# once (docs/FABRIC.md, "Fast-forward").
STEPPED_FRAMES = 300
READ_WORK_PER_FRAME = 0.05
FRAMES_AT_ONCE = 10 * STEPPED_FRAMES
# Bytes the simulator holds per output port (its FIFOs and statistics), per
# node (DMA queues), per transfer of the stage being grouped, per frame in
# flight (the frame, its queue entry and its event) and per distinct group.
BYTES_PER_PORT = 400
BYTES_PER_NODE = 200
BYTES_PER_TRANSFER = 150
BYTES_PER_FRAME = 80
BYTES_PER_GROUP = 300
# Rates of this kind of machine, for the wall-time guess only.
EVENTS_PER_SECOND = 8e6
TRANSFERS_PER_SECOND = 8e6


@dataclass(frozen=True)
class Limits:
    """What a simulation may take. The defaults admit the cluster-scale
    targets (a 4096-node gather of 16 MiB, the 11664-node Fig. 20 points,
    the largest of which, stepped without fast-forward, simulates 2.4e9
    events in 4 to 9 minutes) and refuse what a workstation cannot hold."""
    events: float = 5e9        # events simulated (after reuse): about 10 minutes
    memory: float = 8 * 2**30  # bytes
    transfers: float = 5e9     # transfers to split into groups (or simulate, without reuse)


@dataclass(frozen=True)
class Estimate:
    what: str
    events: float       # simulated, after reuse
    memory: float       # bytes, at the peak
    transfers: float    # over all stages

    @property
    def seconds(self) -> float:
        return self.events / EVENTS_PER_SECOND + self.transfers / TRANSFERS_PER_SECOND


def check(estimate: Estimate, limits: Limits | None = None) -> Estimate:
    """Raises one usage error (the same on every rank) naming what is too large and how to allow it."""
    limits = limits or Limits()
    problems = []
    if estimate.events > limits.events:
        problems.append(f"about {estimate.events:.3g} events to simulate (limit {limits.events:.3g}, "
                        f"--max-events)")
    if estimate.memory > limits.memory:
        problems.append(f"about {estimate.memory / 2**30:.3g} GiB of memory (limit {limits.memory / 2**30:.3g} GiB, "
                        f"--max-memory)")
    if estimate.transfers > limits.transfers:
        problems.append(f"about {estimate.transfers:.3g} transfers to place (limit {limits.transfers:.3g}, "
                        f"--max-events)")
    if problems:
        raise usage_error(f"fabric: {estimate.what} would need {' and '.join(problems)}, more than this run may "
                         f"take (about {estimate.seconds:.3g} s); give fewer nodes, packets or bytes, or raise the "
                         f"limits with --max-events N / --max-memory SIZE (Python: limits=Limits(...))")
    return estimate


def _frames(nbytes: float, chunk: int) -> float:
    return max(1.0, math.ceil(nbytes / chunk))


def _network_memory(nodes: int, ports_per_node: int, levels: int) -> float:
    """Ports: each node's, and about as many again per switch level and direction."""
    ports = 2 * nodes * ports_per_node * (1 + 2 * levels)
    return ports * BYTES_PER_PORT + nodes * BYTES_PER_NODE


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


def _message_events(frames: float, hops: int, fast_forward: bool) -> float:
    """One message of `frames` frames over `hops` hops: every frame on every
    hop, or with fast-forward, beyond STEPPED_FRAMES, its reader's work."""
    if not fast_forward or frames <= STEPPED_FRAMES:
        return EVENTS_PER_MESSAGE + EVENTS_PER_FRAME_HOP * hops * frames
    return EVENTS_PER_MESSAGE + EVENTS_PER_FRAME_HOP * hops * STEPPED_FRAMES + READ_WORK_PER_FRAME * frames


def estimate_gather(name: str, nodes: int, block_bytes: int, *, ports: int = 2, virtual_ports: int = 2,
                    collective: str = "gather", levels: int = 1, chunk: int = 9152, reuse: bool = True,
                    fast_forward: bool = True) -> Estimate:
    """A gather_sim point. With reuse, the events are those of the distinct
    groups: per path shape (up to 2 * levels + 1 of them, per plane) one hop
    of a block, plus the transfers that carry a whole chain (the longest
    chain's blocks each); without, every transfer's frames on every hop.
    Fast-forward leaves of a long message little more than its reader's
    events."""
    what = f"a simulated {name} {collective} of {nodes} nodes x {block_bytes} bytes"
    if collective == "allgather":
        stages, transfers, longest, collected = nodes - 1, nodes * (nodes - 1), 1, 0
    else:
        stages, transfers, longest, collected = _chain_shape(name, nodes, ports, virtual_ports)
    hops = 2 * levels if levels else 1
    per_block = _message_events(_frames(block_bytes, chunk), hops, fast_forward)
    per_chain = _message_events(_frames(longest * block_bytes, chunk), hops, fast_forward)
    groups = (2 * levels + 1) * ports  # path shapes
    if reuse:
        # The collected directions go to the root together: one group (its
        # write engines), simulated once with every message in it.
        events = groups * per_block + collected * per_chain
    else:
        events = transfers * per_block + collected * per_chain
    widest = transfers / max(stages, 1) * 2  # the first stages are the widest
    # Frames queue at a sender whose memory reads faster than its link sends:
    # at most the longest message's, or every transfer's of the widest stage.
    longest_message = longest * block_bytes if collected else block_bytes
    queued = _frames(longest_message, chunk)
    if fast_forward:
        queued = min(queued, FRAMES_AT_ONCE)
    in_flight = max(queued, widest * _frames(block_bytes, chunk) if not reuse else 0)
    memory = (_network_memory(nodes, ports, levels) + widest * BYTES_PER_TRANSFER + in_flight * BYTES_PER_FRAME
              + groups * BYTES_PER_GROUP)
    return Estimate(what, events, memory, transfers)


def estimate_packets(what: str, nodes: int, packets: float, payload: int, *, hops: int = 2, ports_per_node: int = 1,
                     levels: int = 1, chunk: int = 9152) -> Estimate:
    """`packets` messages of `payload` bytes crossing `hops` links each, on
    a fabric of `nodes` nodes (latency, bandwidth and traffic). Memory: a
    record per message and, queued at the sender, up to one message's frames."""
    frames = _frames(payload, chunk)
    events = packets * (EVENTS_PER_MESSAGE + EVENTS_PER_FRAME_HOP * hops * frames)
    memory = _network_memory(nodes, ports_per_node, levels) + (packets + frames) * BYTES_PER_FRAME
    return Estimate(what, events, memory, packets)


def estimate_beff_ring(what: str, nodes: int, sizes: list, *, ports_per_node: int = 4,
                       chunk: int = 4096) -> Estimate:
    """HPCC FPGA's b_eff ring (fabric.beff_ring): per size a fresh ring on
    which every node sends one message to each neighbour at once, every frame
    over one link. Memory at the largest size: the network, and every
    message's frames, queued at their senders together."""
    events = sum(2 * nodes * (EVENTS_PER_MESSAGE + EVENTS_PER_FRAME_HOP * _frames(size, chunk)) for size in sizes)
    memory = (_network_memory(nodes, ports_per_node, 0)
              + 2 * nodes * _frames(max(sizes, default=0), chunk) * BYTES_PER_FRAME)
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
            print(f"{self.what}: {self.done + 1}/{self.total} ({label}): about {estimate.events:.3g} events, "
                  f"{estimate.seconds:.0f} s estimated", file=sys.stderr, flush=True)

    def step(self, label: str) -> None:
        self.done += 1
        if self.show is not None:
            self.show(f"{self.done} of {self.total} points simulated ({label})")
            return
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.after:
            print(f"{self.what}: {self.done}/{self.total} done ({label}), {elapsed:.1f} s", file=sys.stderr,
                  flush=True)
