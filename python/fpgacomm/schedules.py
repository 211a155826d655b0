"""Gather, scatter and allgather schedules of the VCSN paper (Ueno et al.,
"VCSN: Virtual Circuit-Switching Network for Flexible and Simple-to-Operate
Communication in HPC FPGA Cluster", TRETS 2023), as data: no MPI here.

A schedule is a list of stages, each a set of transfers (source, destination,
which nodes' blocks, bytes, the port and virtual port at the source) and the
configuration it needs first ("topology": virtual links written into the MAC
tables; "crossbar": the memory-to-port paths). Real runs (fpgacomm.gather)
and simulated runs (fpgacomm.gather_sim) execute the same Schedule objects.

A stage holds its transfers by rule, as a few Runs: the i-th transfer of a
run goes from node src + i*src_step to dst + i*dst_step (mod n). A pipelined
chain is one run per stage whatever its length, so a schedule of n nodes
takes O(stages) memory, not O(n^2) transfers; Stage.transfers expands a
stage when it is read, and the simulator expands runs itself.

Every schedule is built for the root at node 0, then relabelled (node i
becomes (i + root) mod n). Node 0's links, the "directions", are numbered
(port, vport) with the vport varying slowest; the root receives on at most
RECEIVES of them at a time (the prototype's two SGDMA write engines), always
on different physical ports. The first RECEIVES directions are the priority
ones: a pipelined chain whose head hands the root one block per stage. The
others are collected at their head (the root's neighbour) meanwhile and sent
whole at the end, RECEIVES at a time (section 5.3). With L links at the root
and n - 1 sources this takes ceil((n-1)/L) + (L-2)/2 stages (section 5.2),
fewer when some direction is left empty (n < L). The same rule gives::

  ring   DCN: physical links only (L = ports): two arms of a 1-D ring forward
         toward the root in opposite directions, ceil((n-1)/2) stages with two
         ports; with four, two more arms collected meanwhile:
         ceil((n-1)/4) + 1. Set-up: the crossbar, every stage. virtual_ports
         does not apply (vport 0).
  tree   VCSN virtual tree (L = ports * virtual_ports): ceil((n-1)/4) + 1
         stages for n >= 4 (one for n <= 3); ceil((n-1)/8) + 3 with four
         ports or four virtual ports per port. Set-up: the topology once,
         then the crossbar every stage.
  vlink  virtual links reconfigured to join RECEIVES sources straight to the
         root each stage (eq. 5): ceil((n-1)/2) stages, the topology written
         again whenever the L links of the last set-up are used up
         (ceil((n-1)/4) times with L = 4).
  mpi    MPI_Gather on the host network: one stage, no set-up.

Ports: a DCN link joins port q of one node to port q^1 of its neighbour
(q and q^1 are the two sides of one ring dimension); a VCSN virtual link
stays in one switch plane, so it joins the same physical port at both ends.
A node's link toward the root is its vport 0; the root's are its directions.

Scatter is the gather reversed (stages in reverse order, each transfer turned
round: section 6.6.1). Allgather is the gather followed by one broadcast
stage (setup "broadcast": the root sends the gathered blocks once and the
switches copy them to every node) where the network can broadcast (one switch
or a tree of switches); where it cannot (broadcast=False: a fat tree with
loops, section 6.6.2) and on the DCN (no switch at all) it is a ring
allgather: n - 1 stages, each node passing the block it received last to its
successor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .params import byte_sizes, usage_error

NAMES = ("ring", "tree", "vlink", "mpi")
COLLECTIVES = ("gather", "scatter", "allgather")
# How a run ends its stages: an MPI_Barrier (the seed's), or nothing (section 6.4).
CONTROLS = ("barrier", "local")
PORTS = (2, 4)
VIRTUAL_PORTS = (2, 4)  # a chain node needs two: its link up and its link down
RECEIVES = 2  # transfers the root takes at a time: the prototype's two SGDMA write engines


@dataclass(frozen=True)
class Transfer:
    src: int
    dst: int
    blocks: tuple[int, ...]  # which nodes' data it carries (root's view)
    bytes: int  # len(blocks) * block bytes
    port: int = 0  # physical port at the source
    vport: int = 0  # virtual port on it


@dataclass(frozen=True)
class Run:
    """`count` transfers by one rule. The i-th goes from node src + i*src_step
    to dst + i*dst_step and carries the `span` blocks block + i*block_step +
    j*span_step (j < span), every node number taken mod the schedule's nodes;
    it leaves by src_end = (port, vport) and arrives at dst_end, so that it
    can be turned round."""

    count: int
    src: int
    src_step: int
    dst: int
    dst_step: int
    block: int
    block_step: int
    span: int = 1
    span_step: int = 1
    src_end: tuple[int, int] = (0, 0)
    dst_end: tuple[int, int] = (0, 0)

    def reversed(self) -> Run:
        return replace(
            self,
            src=self.dst,
            src_step=self.dst_step,
            dst=self.src,
            dst_step=self.src_step,
            src_end=self.dst_end,
            dst_end=self.src_end,
        )

    def shifted(self, offset: int) -> Run:
        """Every node and block number plus `offset` (the relabelling to a root)."""
        return replace(self, src=self.src + offset, dst=self.dst + offset, block=self.block + offset)

    def transfers(self, nodes: int, block_bytes: int):
        for i in range(self.count):
            first = self.block + i * self.block_step
            blocks = tuple((first + j * self.span_step) % nodes for j in range(self.span))
            yield Transfer(
                (self.src + i * self.src_step) % nodes,
                (self.dst + i * self.dst_step) % nodes,
                blocks,
                self.span * block_bytes,
                *self.src_end,
            )


@dataclass(frozen=True)
class Stage:
    runs: tuple[Run, ...]
    setup: tuple[str, ...] = ()  # configuration before it: "topology", "crossbar" (and "broadcast")
    nodes: int = 0
    block_bytes: int = 0

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        """The stage's transfers, expanded from its runs in order."""
        return tuple(t for run in self.runs for t in run.transfers(self.nodes, self.block_bytes))


@dataclass(frozen=True)
class Schedule:
    name: str  # ring | tree | vlink | mpi
    collective: str  # gather | scatter | allgather
    nodes: int
    root: int
    ports: int
    virtual_ports: int
    block_bytes: int
    stages: tuple[Stage, ...]


def _one(src: int, dst: int, block: int, src_end=(0, 0), dst_end=(0, 0), *, span: int = 1, span_step: int = 1) -> Run:
    return Run(1, src, 0, dst, 0, block, 0, span, span_step, src_end, dst_end)


def _whole(value, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise usage_error(f"gather: {name} {value!r}; give a whole number of {least} or more")
    return value


def check(
    name: str,
    nodes: int,
    block_bytes: int = 0,
    *,
    ports: int = 2,
    virtual_ports: int = 2,
    root: int = 0,
    collective: str = "gather",
) -> None:
    """One clear UsageError for the first parameter schedule() cannot take."""
    check_names(name, collective)
    _whole(nodes, "nodes", 2)
    _whole(block_bytes, "block size (bytes per node)", 0)
    if ports not in PORTS:
        raise usage_error(
            f"gather: {ports!r} ports per node; the schedules are built for " f"{' or '.join(map(str, PORTS))}"
        )
    if virtual_ports not in VIRTUAL_PORTS:
        raise usage_error(
            f"gather: {virtual_ports!r} virtual ports per port; choose " f"{', '.join(map(str, VIRTUAL_PORTS))}"
        )
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < nodes:
        raise usage_error(f"gather: root {root!r}; give a node from 0 to {nodes - 1}")


def check_names(name: str | None, collective: str) -> None:
    """The schedule's name (None: the run's default) and the collective, each one of ours."""
    if name is not None and name not in NAMES:
        raise usage_error(f"gather: unknown schedule {name!r}; choose {', '.join(NAMES)}")
    if collective not in COLLECTIVES:
        raise usage_error(f"gather: unknown collective {collective!r}; choose {', '.join(COLLECTIVES)}")


def check_control(control: str) -> None:
    """How a run ends its stages, on real ranks and on the simulated fabric alike."""
    if control not in CONTROLS:
        raise usage_error(
            f"gather: unknown control {control!r}; choose barrier (an MPI_Barrier closes every stage) "
            f"or local (none)"
        )


def node_counts(nodes) -> list[int]:
    """The node counts of a simulated run: one whole number or several, each 2 or more."""
    counts = [nodes] if isinstance(nodes, int) else list(nodes)
    if not counts:
        raise usage_error("gather: give at least one node count")
    for n in counts:
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise usage_error(f"gather: node count {n!r}; give node counts of 2 or more (whole numbers), e.g. 4,9,16")
    return counts


def block_sizes(sizes, simulated: bool) -> list[int]:
    """Bytes per node in params.byte_sizes' forms: 0 or more on real ranks
    (empty messages), 1 or more on the simulated fabric."""
    return byte_sizes(sizes, "gather: size per node", smallest=1 if simulated else 0)


def _directions(ports: int, vports: int) -> list[tuple[int, int]]:
    """The root's links (port, vport), vport slowest: each consecutive pair is
    on two different physical ports, so the root can take a pair at once."""
    return [(port, vport) for vport in range(vports) for port in range(ports)]


def _split(sources: int, links: int) -> list[int]:
    """How many sources each direction holds: ceil(m/L) for each priority
    direction (the fewest stages), the rest spread evenly over the others."""
    per_priority = math.ceil(sources / links)
    sizes = [0] * links
    left = sources
    for d in range(min(RECEIVES, links)):
        sizes[d] = min(per_priority, left)
        left -= sizes[d]
    others = links - RECEIVES
    for d in range(others):
        sizes[RECEIVES + d] = left // others + (1 if d < left % others else 0)
    return sizes


@dataclass(frozen=True)
class _Chain:
    """Nodes first, first + step, ... (length of them); first is the root's neighbour."""

    first: int
    step: int
    length: int

    def node(self, j: int) -> int:
        return self.first + j * self.step


def _chain_runs(chain: _Chain, up: tuple[int, int], down, stage: int, deliver_to_root: bool) -> list[Run]:
    """The hops of a pipelined chain in stage `stage` (0-based): node j passes
    the block of node j + stage one node toward the root. When not
    deliver_to_root the head keeps what it gets (a non-priority direction
    being collected). up: every chain node's (port, vport) toward the root;
    down(j): where node j's hop arrives."""
    runs = []
    if deliver_to_root and stage < chain.length:
        runs.append(_one(chain.first, 0, chain.node(stage), up, down(0)))
    inner = chain.length - stage - 1  # hops j = 1 .. length - stage - 1
    if inner > 0:
        runs.append(
            Run(
                inner,
                chain.node(1),
                chain.step,
                chain.first,
                chain.step,
                chain.node(1 + stage),
                chain.step,
                1,
                1,
                up,
                down(1),
            )
        )
    return runs


def _gather_by_directions(nodes: int, links: list[tuple[int, int]], dcn: bool) -> list[tuple[list[Run], tuple]]:
    """Stages (runs, setup) of the ring or tree gather at root 0."""
    sizes = _split(nodes - 1, len(links))
    # Node numbers go round the root port by port (Fig. 10: 1-2 and 3-4 on
    # port 0, 5-6 and 7-8 on port 1); on the DCN the arm on port 1 comes last,
    # reversed, so that nodes n-1 and 0 are neighbours as on a 1-D ring.
    chains, first = [None] * len(links), 1
    for d in sorted(range(len(links)), key=lambda d: (dcn and links[d][0] == 1, links[d])):
        reverse = dcn and links[d][0] == 1
        chains[d] = _Chain(first + sizes[d] - 1, -1, sizes[d]) if reverse else _Chain(first, 1, sizes[d])
        first += sizes[d]

    def ends(direction: int):
        port, vport = links[direction]
        # DCN: a node's link toward the root leaves on the other side of the
        # dimension; VCSN: the same switch plane, the node's vport 0.
        up = (port ^ 1 if dcn else port, 0)

        def down(j):
            return (port, vport) if j == 0 else (port, 0 if dcn else 1)

        return up, down

    priority = range(min(RECEIVES, len(links)))
    others = [d for d in range(len(links)) if d not in priority and chains[d].length]
    main = max((chains[d].length for d in priority), default=0)
    stages = []
    for s in range(main):
        runs = []
        for d in range(len(links)):
            up, down = ends(d)
            runs += _chain_runs(chains[d], up, down, s, deliver_to_root=d in priority)
        stages.append(runs)
    for i in range(0, len(others), RECEIVES):
        runs = []
        for d in others[i : i + RECEIVES]:
            up, down = ends(d)
            chain = chains[d]
            runs.append(_one(chain.first, 0, chain.first, up, down(0), span=chain.length, span_step=chain.step))
        stages.append(runs)
    if dcn:
        return [(runs, ("crossbar",)) for runs in stages]
    return [(runs, ("topology", "crossbar") if s == 0 else ("crossbar",)) for s, runs in enumerate(stages)]


def _vlink_gather(nodes: int, links: list[tuple[int, int]]) -> list[tuple[list[Run], tuple]]:
    """RECEIVES sources straight to the root per stage; a new topology each
    time the links written at the last set-up have all been used once."""
    stages, per_setup = [], len(links) // RECEIVES
    for s, first in enumerate(range(1, nodes, RECEIVES)):
        runs = []
        for k, src in enumerate(range(first, min(first + RECEIVES, nodes))):
            port, vport = links[(s % per_setup) * RECEIVES + k]
            runs.append(_one(src, 0, src, (port, 0), (port, vport)))
        stages.append((runs, ("topology", "crossbar") if s % per_setup == 0 else ("crossbar",)))
    return stages


def _ring_allgather(nodes: int, name: str) -> list[tuple[list[Run], tuple]]:
    """n - 1 stages; in stage s node i sends block (i - s) mod n to i + 1 on
    port 0 (a DCN link arrives on port 1, a virtual link on the same plane)."""
    arrival = (1, 0) if name == "ring" else (0, 1)
    stages = []
    for s in range(nodes - 1):
        setup = ("crossbar",) if name == "ring" or s > 0 else ("topology", "crossbar")
        stages.append(([Run(nodes, 0, 1, 1, 1, -s, 1, 1, 1, (0, 0), arrival)], setup))
    return stages


def _mpi_allgather(nodes: int) -> list[Run]:
    """Every node to every other, by source, destinations in ascending order."""
    runs = []
    for i in range(nodes):
        if i > 0:
            runs.append(Run(i, i, 0, 0, 1, i, 0))
        if i < nodes - 1:
            runs.append(Run(nodes - 1 - i, i, 0, i + 1, 1, i, 0))
    return runs


def _gather_runs(name: str, nodes: int, ports: int, virtual_ports: int) -> list[tuple[list[Run], tuple]]:
    if name == "mpi":
        return [([Run(nodes - 1, 1, 1, 0, 0, 1, 1)], ())]
    if name == "ring":
        return _gather_by_directions(nodes, _directions(ports, 1), dcn=True)
    if name == "tree":
        return _gather_by_directions(nodes, _directions(ports, virtual_ports), dcn=False)
    return _vlink_gather(nodes, _directions(ports, virtual_ports))


def schedule(
    name: str,
    nodes: int,
    block_bytes: int,
    *,
    ports: int = 2,
    virtual_ports: int = 2,
    root: int = 0,
    collective: str = "gather",
    broadcast: bool = True,
) -> Schedule:
    """The stages of `collective` with `schedule` on `nodes` nodes holding
    `block_bytes` each. broadcast: whether the network can broadcast (one
    switch or a tree of switches); False (a fat tree with loops) makes the
    allgather a ring allgather, as it always is on the DCN ring (direct
    links, no switch to copy frames). mpi's allgather is one MPI_Allgather
    stage. Memory and time grow with the stages, not the transfers."""
    check(name, nodes, block_bytes, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    if collective == "allgather" and name == "mpi":
        stages = [(_mpi_allgather(nodes), ())]
    elif collective == "allgather" and (not broadcast or name == "ring"):
        stages = _ring_allgather(nodes, name)
    else:
        stages = _gather_runs(name, nodes, ports, virtual_ports)
        if collective == "scatter":
            stages = [([run.reversed() for run in runs], setup) for runs, setup in reversed(stages)]
        elif collective == "allgather":
            stages.append(([Run(nodes - 1, 0, 0, 1, 1, 0, 0, nodes, 1, (0, 0), (0, 1))], ("crossbar", "broadcast")))
    built = tuple(
        Stage(tuple(run.shifted(root) for run in runs) if root else tuple(runs), setup, nodes, block_bytes)
        for runs, setup in stages
    )
    return Schedule(name, collective, nodes, root, ports, virtual_ports, block_bytes, built)
