"""Gather, scatter and allgather schedules of seed 004 (VCSN), as data.

A schedule is a list of stages, each a set of transfers (source, destination,
which nodes' blocks, bytes, the port and virtual port at the source) and the
configuration it needs first ("topology": virtual links written into the MAC
tables; "crossbar": the memory-to-port paths). Real runs (run(), below) and
simulated runs (fpgacomm.gather_sim) execute the same Schedule objects.

Every schedule is built for the root at node 0, then relabelled (node i
becomes (i + root) mod n). Node 0's links, the "directions", are numbered
(port, vport) with the vport varying slowest; the root receives on at most
RECEIVES of them at a time (the prototype's two SGDMA write engines), always
on different physical ports. The first RECEIVES directions are the priority
ones: a pipelined chain whose head hands the root one block per stage. The
others are collected at their head (the root's neighbour) meanwhile and sent
whole at the end, RECEIVES at a time (section 5.3). With L links at the root
and n - 1 sources this takes ceil((n-1)/L) + (L-2)/2 stages (section 5.2),
fewer when some direction is left empty (n < L). The same rule gives:

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
from dataclasses import dataclass

from . import _core
from .osu import usage_error
from .result import Result

NAMES = ("ring", "tree", "vlink", "mpi")
COLLECTIVES = ("gather", "scatter", "allgather")
PORTS = (2, 4)
VIRTUAL_PORTS = (2, 4)  # a chain node needs two: its link up and its link down
RECEIVES = 2  # transfers the root takes at a time: the prototype's two SGDMA write engines


@dataclass(frozen=True)
class Transfer:
    src: int
    dst: int
    blocks: tuple[int, ...]  # which nodes' data it carries (root's view)
    bytes: int               # len(blocks) * block bytes
    port: int = 0            # physical port at the source
    vport: int = 0           # virtual port on it


@dataclass(frozen=True)
class Stage:
    transfers: tuple[Transfer, ...]
    setup: tuple[str, ...] = ()  # configuration before it: "topology", "crossbar" (and "broadcast")


@dataclass(frozen=True)
class Schedule:
    name: str        # ring | tree | vlink | mpi
    collective: str  # gather | scatter | allgather
    nodes: int
    root: int
    ports: int
    virtual_ports: int
    block_bytes: int
    stages: tuple[Stage, ...]


@dataclass(frozen=True)
class _Hop:
    """One transfer with both ends named, so that it can be turned round."""
    src: int
    dst: int
    blocks: tuple[int, ...]
    src_end: tuple[int, int]  # (port, vport) at the source
    dst_end: tuple[int, int]  # (port, vport) at the destination

    def reversed(self) -> "_Hop":
        return _Hop(self.dst, self.src, self.blocks, self.dst_end, self.src_end)


def _whole(value, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise usage_error(f"gather: {name} {value!r}; give a whole number of {least} or more")
    return value


def check(name: str, nodes: int, block_bytes: int = 0, *, ports: int = 2, virtual_ports: int = 2,
          root: int = 0, collective: str = "gather") -> None:
    """One clear UsageError for the first parameter schedule() cannot take."""
    if name not in NAMES:
        raise usage_error(f"gather: unknown schedule {name!r}; choose {', '.join(NAMES)}")
    if collective not in COLLECTIVES:
        raise usage_error(f"gather: unknown collective {collective!r}; choose {', '.join(COLLECTIVES)}")
    _whole(nodes, "nodes", 2)
    _whole(block_bytes, "block size (bytes per node)", 0)
    if ports not in PORTS:
        raise usage_error(f"gather: {ports!r} ports per node; the schedules are built for "
                     f"{' or '.join(map(str, PORTS))}")
    if virtual_ports not in VIRTUAL_PORTS:
        raise usage_error(f"gather: {virtual_ports!r} virtual ports per port; choose "
                     f"{', '.join(map(str, VIRTUAL_PORTS))}")
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < nodes:
        raise usage_error(f"gather: root {root!r}; give a node from 0 to {nodes - 1}")


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


def _chain_hops(chain: list[int], up: tuple[int, int], down, stage: int, deliver_to_root: bool) -> list[_Hop]:
    """The hops of a pipelined chain (chain[0] is the root's neighbour) in
    stage `stage` (0-based): node chain[j] passes the block of chain[j+stage]
    one node toward the root. When not deliver_to_root the head keeps what it
    gets (a non-priority direction being collected). up: every chain node's
    (port, vport) toward the root; down(j): where chain[j]'s hop arrives."""
    hops = []
    for j in range(0 if deliver_to_root else 1, len(chain)):
        if j + stage >= len(chain):
            break
        parent = 0 if j == 0 else chain[j - 1]
        hops.append(_Hop(chain[j], parent, (chain[j + stage],), up, down(j)))
    return hops


def _gather_by_directions(nodes: int, links: list[tuple[int, int]], dcn: bool) -> list[tuple[list[_Hop], tuple]]:
    """Stages (hops, setup) of the ring or tree gather at root 0."""
    sizes = _split(nodes - 1, len(links))
    # Node numbers go round the root port by port (Fig. 10: 1-2 and 3-4 on
    # port 0, 5-6 and 7-8 on port 1); on the DCN the arm on port 1 comes last,
    # reversed, so that nodes n-1 and 0 are neighbours as on a 1-D ring.
    chains, first = [None] * len(links), 1
    for d in sorted(range(len(links)), key=lambda d: (dcn and links[d][0] == 1, links[d])):
        chains[d] = list(range(first, first + sizes[d]))
        first += sizes[d]
        if dcn and links[d][0] == 1:
            chains[d].reverse()

    def ends(direction: int):
        port, vport = links[direction]
        # DCN: a node's link toward the root leaves on the other side of the
        # dimension; VCSN: the same switch plane, the node's vport 0.
        up = (port ^ 1 if dcn else port, 0)

        def down(j):
            return (port, vport) if j == 0 else (port, 0 if dcn else 1)
        return up, down

    priority = range(min(RECEIVES, len(links)))
    others = [d for d in range(len(links)) if d not in priority and chains[d]]
    main = max((len(chains[d]) for d in priority), default=0)
    stages = []
    for s in range(main):
        hops = []
        for d in range(len(links)):
            up, down = ends(d)
            hops += _chain_hops(chains[d], up, down, s, deliver_to_root=d in priority)
        stages.append(hops)
    for i in range(0, len(others), RECEIVES):
        hops = []
        for d in others[i:i + RECEIVES]:
            up, down = ends(d)
            hops.append(_Hop(chains[d][0], 0, tuple(chains[d]), up, down(0)))
        stages.append(hops)
    if dcn:
        return [(hops, ("crossbar",)) for hops in stages]
    return [(hops, ("topology", "crossbar") if s == 0 else ("crossbar",)) for s, hops in enumerate(stages)]


def _vlink_gather(nodes: int, links: list[tuple[int, int]]) -> list[tuple[list[_Hop], tuple]]:
    """RECEIVES sources straight to the root per stage; a new topology each
    time the links written at the last set-up have all been used once."""
    stages, per_setup = [], len(links) // RECEIVES
    sources = list(range(1, nodes))
    for s, i in enumerate(range(0, len(sources), RECEIVES)):
        hops = []
        for k, src in enumerate(sources[i:i + RECEIVES]):
            port, vport = links[(s % per_setup) * RECEIVES + k]
            hops.append(_Hop(src, 0, (src,), (port, 0), (port, vport)))
        stages.append((hops, ("topology", "crossbar") if s % per_setup == 0 else ("crossbar",)))
    return stages


def _ring_allgather(nodes: int, name: str) -> list[tuple[list[_Hop], tuple]]:
    """n - 1 stages; in stage s node i sends block (i - s) mod n to i + 1 on
    port 0 (a DCN link arrives on port 1, a virtual link on the same plane)."""
    arrival = (1, 0) if name == "ring" else (0, 1)
    stages = []
    for s in range(nodes - 1):
        hops = [_Hop(i, (i + 1) % nodes, ((i - s) % nodes,), (0, 0), arrival) for i in range(nodes)]
        setup = ("crossbar",) if name == "ring" or s > 0 else ("topology", "crossbar")
        stages.append((hops, setup))
    return stages


def _gather_hops(name: str, nodes: int, ports: int, virtual_ports: int) -> list[tuple[list[_Hop], tuple]]:
    if name == "mpi":
        return [([_Hop(i, 0, (i,), (0, 0), (0, 0)) for i in range(1, nodes)], ())]
    if name == "ring":
        return _gather_by_directions(nodes, _directions(ports, 1), dcn=True)
    if name == "tree":
        return _gather_by_directions(nodes, _directions(ports, virtual_ports), dcn=False)
    return _vlink_gather(nodes, _directions(ports, virtual_ports))


def schedule(name: str, nodes: int, block_bytes: int, *, ports: int = 2, virtual_ports: int = 2,
             root: int = 0, collective: str = "gather", broadcast: bool = True) -> Schedule:
    """The stages of `collective` with `schedule` on `nodes` nodes holding
    `block_bytes` each. broadcast: whether the network can broadcast (one
    switch or a tree of switches); False (a fat tree with loops) makes the
    allgather a ring allgather, as it always is on the DCN ring (direct
    links, no switch to copy frames). mpi's allgather is one MPI_Allgather
    stage."""
    check(name, nodes, block_bytes, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    if collective == "allgather" and name == "mpi":
        stages = [([_Hop(i, j, (i,), (0, 0), (0, 0)) for i in range(nodes) for j in range(nodes) if i != j], ())]
    elif collective == "allgather" and (not broadcast or name == "ring"):
        stages = _ring_allgather(nodes, name)
    else:
        stages = _gather_hops(name, nodes, ports, virtual_ports)
        if collective == "scatter":
            stages = [([hop.reversed() for hop in hops], setup) for hops, setup in reversed(stages)]
        elif collective == "allgather":
            everything = tuple(range(nodes))
            stages.append(([_Hop(0, i, everything, (0, 0), (0, 1)) for i in range(1, nodes)],
                           ("crossbar", "broadcast")))

    def relabel(node: int) -> int:
        return (node + root) % nodes

    built = tuple(Stage(tuple(Transfer(relabel(h.src), relabel(h.dst), tuple(relabel(b) for b in h.blocks),
                                       len(h.blocks) * block_bytes, *h.src_end) for h in hops), setup)
                  for hops, setup in stages)
    return Schedule(name, collective, nodes, root, ports, virtual_ports, block_bytes, built)


# ------------------------------------------------------------------ real runs

CONTROLS = ("barrier", "local")
DEFAULT_SIZES = "64K:256M"  # seed 004's Table 6: data per node
# Timed iterations and warm-up at or below LARGE_BLOCK, then above it.
ITERATIONS = (20, 2, 5, 1)
LARGE_BLOCK = 1 << 20
_UNITS = {"schedule": "", "nodes": "", "size": "B", "stages": "", "time": "s", "throughput": "B/s", "setup": "s",
          "transfer": "s", "barrier": "s", "iterations": "", "validation": "", "validation_errors": "B"}


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """(first, count) of each run of consecutive buffer positions."""
    runs = []
    for p in positions:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


def rank_part(sched: Schedule, rank: int) -> list[tuple[list, list]]:
    """What `rank` sends and receives in each stage, as (peer, first buffer
    position, blocks) triples. Position p holds node (p + root) mod n's
    block; a transfer whose blocks are not consecutive there becomes one
    message per run (both ends cut it alike, in the same order)."""
    stages = []
    for stage in sched.stages:
        sends, recvs = [], []
        for t in stage.transfers:
            if rank not in (t.src, t.dst):
                continue
            positions = [(block - sched.root) % sched.nodes for block in t.blocks]
            moves = [(t.dst if t.src == rank else t.src, first, count) for first, count in _runs(positions)]
            (sends if t.src == rank else recvs).extend(moves)
        stages.append((sends, recvs))
    return stages


def expected_blocks(collective: str, nodes: int, root: int, rank: int) -> tuple[list[int], list[int]]:
    """Buffer positions `rank` holds before the collective and must hold,
    intact, after it, from the collective's definition (not the schedule's)."""
    everything, own = list(range(nodes)), [(rank - root) % nodes]
    holds = everything if collective == "scatter" and rank == root else own
    if collective == "allgather" or rank == root:
        return holds, everything
    return holds, own


def _sizes(sizes) -> list[int]:
    """A size range "MIN:MAX" (doubling), one size ("0" allowed: a stage with
    no data), an int or a list."""
    from .osu import parse_size, resolve_sizes

    if isinstance(sizes, str) and ":" not in sizes:
        sizes = parse_size(sizes)
    if isinstance(sizes, int):
        sizes = [sizes]
    if isinstance(sizes, str):
        return resolve_sizes(sizes)
    sizes = list(sizes)
    if not sizes or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in sizes):
        raise usage_error(f"gather: sizes {sizes!r}; give whole bytes per node, 0 or more")
    return sizes


def _device_room(comm, dev, hosts: list[str], options) -> tuple[int, int]:
    """(ranks of this host on this rank's device, bytes one buffer may take)."""
    from .devices import device_for

    rank = comm.Get_rank()
    candidates = len(_core.select_devices(options.platform, options.device, options.type))
    mine = device_for(hosts, rank, candidates, options)
    sharers = sum(1 for r, host in enumerate(hosts)
                  if host == hosts[rank] and device_for(hosts, r, candidates, options) == mine)
    return sharers, min(dev.info.max_alloc_bytes, dev.info.global_mem_bytes // sharers)


_build = schedule  # run()'s parameter `schedule` (the contract's name) hides the function


def run(comm=None, schedule: str = "ring", mem: str = "D", sizes=DEFAULT_SIZES, ports: int = 2,
        virtual_ports: int = 2, control: str = "barrier", collective: str = "gather", iterations: int | None = None,
        device=None, validate: bool = True, *, root: int = 0, warmup: int | None = None,
        barrier_reference: int = 0) -> Result:
    """A gather (scatter, allgather) schedule on real ranks, one node per
    rank, every rank's n blocks in one buffer of kind `mem`; collective over
    comm. sizes: bytes per node ("MIN:MAX" doubling, one size, a list); the
    default sweep stops at the largest size that fits every device, a size
    given that does not fit is a UsageError before any transfer. control:
    barrier (an MPI_Barrier closes every stage) or local (none). iterations
    and warmup: per size (default ITERATIONS). barrier_reference: bare
    MPI_Barriers timed after the sweep (samples "barrier_reference").
    """
    from . import environment, mpi
    from .devices import DeviceOptions, needs_device, open_device
    from .osu import check_mem_kind, iteration_counts

    comm = mpi.resolve(comm)
    nodes = comm.Get_size()
    if nodes < 2:
        raise usage_error(f"gather needs at least 2 ranks (one per node), and this run has {nodes}; "
                     f"run it with mpirun -np 2 or more")
    check(schedule, nodes, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    if control not in CONTROLS:
        raise usage_error(f"gather: unknown control {control!r}; choose barrier (an MPI_Barrier closes every stage) "
                     f"or local (none)")
    check_mem_kind(mem)
    if isinstance(barrier_reference, bool) or not isinstance(barrier_reference, int) or barrier_reference < 0:
        raise usage_error(f"gather: barrier_reference {barrier_reference!r}; give a whole number of barriers, 0 or more")
    size_list = _sizes(sizes)
    counts = iteration_counts(ITERATIONS, iterations, warmup)
    device_options = device or DeviceOptions()
    hosts = _core.host_names(comm)
    dev = open_device(comm, device_options, hosts) if needs_device([mem]) else None
    sharers = 1
    if dev is not None:
        sharers, room = _device_room(comm, dev, hosts, device_options)
        if sizes == DEFAULT_SIZES:
            fit = comm.allreduce(room // nodes, op=mpi.MPI().MIN)
            size_list = [s for s in size_list if s <= fit]
            if not size_list:
                raise usage_error(f"gather: even the default sweep's smallest size exceeds the device's memory for "
                             f"{nodes} nodes ({fit} bytes per node fit); give smaller --sizes")
    rank = comm.Get_rank()
    shape = _build(schedule, nodes, 0, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    stages = [] if schedule == "mpi" else rank_part(shape, rank)
    holds, checks = expected_blocks(collective, nodes, root, rank)
    raw = _core.run_gather(comm, dev, stages, collective if schedule == "mpi" else "", root, holds, checks, mem,
                           size_list,
                           *counts, LARGE_BLOCK, control == "barrier", validate, sharers, barrier_reference,
                           device_options.bank)
    rows, samples = [], {}
    for timing in raw["sizes"]:
        size, totals = timing["size"], timing["totals"]
        phases = {name: [sum(column) / len(column) for column in zip(*timing[name])]
                  for name in ("setup", "transfer", "barrier")}
        time = sum(totals) / len(totals)
        rows.append({"schedule": schedule, "nodes": nodes, "size": size, "stages": len(shape.stages), "time": time,
                     "throughput": (nodes - 1) * size / time,
                     **{name: sum(per_stage) for name, per_stage in phases.items()},
                     "iterations": len(totals),
                     "validation": ("fail" if timing["errors"] else "pass") if validate else None,
                     "validation_errors": timing["errors"] if validate else None})
        key = f"{nodes}/{size}"
        for name, per_stage in phases.items():
            samples[f"{key}/{name}"] = per_stage
        samples[f"{key}/time"] = totals
        # Every stage of every timed iteration (the slowest rank's), iteration by iteration.
        samples[f"{key}/stage"] = [sum(phase) for i in range(len(totals))
                                   for phase in zip(timing["setup"][i], timing["transfer"][i], timing["barrier"][i])]
    if barrier_reference:
        samples["barrier_reference"] = raw["barrier_reference"]
    params = {"schedule": schedule, "collective": collective, "control": control, "mem": mem, "ports": ports,
              "virtual_ports": virtual_ports, "root": root, "sizes": size_list, "iterations": counts[0],
              "warmup": counts[1], "iterations_large": counts[2], "warmup_large": counts[3],
              "large_block": LARGE_BLOCK, "validate": validate, "route": raw["route"],
              "device_sharers": sharers, **device_options.params()}
    return Result("gather", params, environment.collect(comm, dev, hosts), rows, _UNITS, samples)


def failed_sizes(result: Result) -> list[int]:
    """Sizes whose data arrived wrong."""
    return [row["size"] for row in result.rows if row["validation"] == "fail"]
