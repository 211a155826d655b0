"""The gather, scatter and allgather schedules of the VCSN paper: stage counts
(section 5.2), every block followed through the stages, port use."""

import math

import pytest
from fpgacomm import _core
from fpgacomm.benchmarks.gather import RECEIVES, Transfer, schedule

NODES = range(2, 65)
BLOCK = 1000


def follow(sched, holdings):
    """Moves blocks through the stages; a node may only send blocks it held
    when the stage began. Returns the holdings after every stage and the
    number of times each (destination, block) arrived."""
    arrivals = {}
    for stage in sched.stages:
        start = {node: set(blocks) for node, blocks in holdings.items()}
        for t in stage.transfers:
            assert set(t.blocks) <= start[t.src], (sched.name, t, start[t.src])
            assert len(set(t.blocks)) == len(t.blocks) and t.bytes == len(t.blocks) * sched.block_bytes
            assert t.src != t.dst
            for block in t.blocks:
                arrivals[t.dst, block] = arrivals.get((t.dst, block), 0) + 1
                holdings[t.dst].add(block)
    return holdings, arrivals


def gather_ok(sched):
    holdings, arrivals = follow(sched, {i: {i} for i in range(sched.nodes)})
    root = sched.root
    assert holdings[root] == set(range(sched.nodes))
    assert {block: arrivals.get((root, block), 0) for block in range(sched.nodes)} == {
        block: 0 if block == root else 1 for block in range(sched.nodes)
    }


def arrival_port(name, t: Transfer) -> int:
    """A DCN link joins port q to port q^1; a virtual link stays in one plane."""
    return t.port ^ 1 if name == "ring" else t.port


def ports_ok(sched):
    """Per stage: one transfer per physical port sending and per physical
    port receiving, at most RECEIVES arriving at a node, ports that exist."""
    for stage in sched.stages:
        if "broadcast" in stage.setup:  # one frame from the root, copied by the switches
            assert {t.src for t in stage.transfers} == {sched.root}
            continue
        sends = [(t.src, t.port) for t in stage.transfers]
        receives = [(t.dst, arrival_port(sched.name, t)) for t in stage.transfers]
        assert len(set(sends)) == len(sends), stage
        assert len(set(receives)) == len(receives), stage
        for node in range(sched.nodes):
            assert sum(t.dst == node for t in stage.transfers) <= RECEIVES
        for t in stage.transfers:
            assert 0 <= t.port < sched.ports and 0 <= t.vport < sched.virtual_ports


def expected_stages(name, n, ports=2, vports=2):
    """Section 5.2's counts; below n = L (links at the root) a direction is
    empty and the same rule needs fewer: ceil(m/L) + ceil(min(L-2, m-2P)/2)."""
    m = n - 1
    if name == "mpi":
        return 1
    if name == "vlink":
        return math.ceil(m / 2)
    links = ports if name == "ring" else ports * vports
    seed = {2: math.ceil(m / 2), 4: math.ceil(m / 4) + 1, 8: math.ceil(m / 8) + 3}[links]
    per = math.ceil(m / links)
    rule = per + math.ceil(min(links - 2, max(m - 2 * per, 0)) / 2)
    if n >= links:
        assert rule == seed
    return rule


@pytest.mark.parametrize("n", NODES)
def test_seed_stage_counts(n):
    m = n - 1
    assert len(schedule("ring", n, BLOCK).stages) == math.ceil(m / 2)
    assert len(schedule("ring", n, BLOCK, ports=4).stages) == (math.ceil(m / 4) + 1 if n >= 4 else 1)
    assert len(schedule("tree", n, BLOCK).stages) == (math.ceil(m / 4) + 1 if n >= 4 else 1)
    for ports, vports in ((4, 2), (2, 4)):
        stages = len(schedule("tree", n, BLOCK, ports=ports, virtual_ports=vports).stages)
        assert stages == expected_stages("tree", n, ports, vports)
        if n >= 8:
            assert stages == math.ceil(m / 8) + 3
        else:
            assert stages <= math.ceil(m / 8) + 3
    assert len(schedule("vlink", n, BLOCK).stages) == math.ceil(m / 2)
    assert len(schedule("mpi", n, BLOCK).stages) == 1


@pytest.mark.parametrize("n", NODES)
@pytest.mark.parametrize(
    "name,ports,vports",
    [
        ("ring", 2, 2),
        ("ring", 4, 2),
        ("tree", 2, 2),
        ("tree", 4, 2),
        ("tree", 2, 4),
        ("vlink", 2, 2),
        ("vlink", 4, 4),
        ("mpi", 2, 2),
    ],
)
def test_every_block_reaches_the_root_once_on_free_ports(n, name, ports, vports):
    sched = schedule(name, n, BLOCK, ports=ports, virtual_ports=vports)
    assert len(sched.stages) == expected_stages(name, n, ports, vports)
    gather_ok(sched)
    if name != "mpi":
        ports_ok(sched)


def test_set_up_steps():
    ring, tree = schedule("ring", 9, BLOCK), schedule("tree", 9, BLOCK)
    assert all(stage.setup == ("crossbar",) for stage in ring.stages)
    assert [stage.setup for stage in tree.stages] == [("topology", "crossbar"), ("crossbar",), ("crossbar",)]
    # eq. 5: the topology is written ceil((n-1)/4) times with four links at the root.
    for n in NODES:
        vlink = schedule("vlink", n, BLOCK)
        assert sum("topology" in stage.setup for stage in vlink.stages) == math.ceil((n - 1) / 4)
        assert all("crossbar" in stage.setup for stage in vlink.stages)
    assert schedule("mpi", 9, BLOCK).stages[0].setup == ()


def pairs(stage):
    return sorted((t.src, t.dst, t.blocks) for t in stage.transfers)


def test_fig_10_nine_nodes():
    ring = schedule("ring", 9, BLOCK)
    # Two arms, 1..4 and 8..5, forwarding toward FPGA 0; FPGAs 4 and 5 are empty after stage 1.
    assert pairs(ring.stages[0]) == [
        (1, 0, (1,)),
        (2, 1, (2,)),
        (3, 2, (3,)),
        (4, 3, (4,)),
        (5, 6, (5,)),
        (6, 7, (6,)),
        (7, 8, (7,)),
        (8, 0, (8,)),
    ]
    assert pairs(ring.stages[3]) == [(1, 0, (4,)), (8, 0, (5,))]
    tree = schedule("tree", 9, BLOCK)
    # FPGA 0 takes 1 and 5 first, while 4 -> 3 and 8 -> 7; 3 and 7 send two blocks each at the end.
    assert pairs(tree.stages[0]) == [(1, 0, (1,)), (2, 1, (2,)), (4, 3, (4,)), (5, 0, (5,)), (6, 5, (6,)), (8, 7, (8,))]
    assert pairs(tree.stages[1]) == [(1, 0, (2,)), (5, 0, (6,))]
    assert pairs(tree.stages[2]) == [(3, 0, (3, 4)), (7, 0, (7, 8))]
    assert {t.src: t.port for t in tree.stages[2].transfers} == {3: 0, 7: 1}
    assert all(t.bytes == 2 * BLOCK for t in tree.stages[2].transfers)


@pytest.mark.parametrize("name", ["ring", "tree", "vlink", "mpi"])
@pytest.mark.parametrize("root", [1, 5, 8])
def test_root_relabels(name, root):
    sched = schedule(name, 9, BLOCK, root=root)
    assert sched.root == root and len(sched.stages) == len(schedule(name, 9, BLOCK).stages)
    gather_ok(sched)
    if name != "mpi":
        ports_ok(sched)


@pytest.mark.parametrize("n", [2, 3, 4, 9, 16, 33])
@pytest.mark.parametrize("name", ["ring", "tree", "vlink", "mpi"])
def test_scatter_is_the_gather_reversed(n, name):
    gather, scatter = schedule(name, n, BLOCK, root=1), schedule(name, n, BLOCK, root=1, collective="scatter")
    assert [stage.setup for stage in scatter.stages] == [stage.setup for stage in reversed(gather.stages)]
    for g, s in zip(reversed(gather.stages), scatter.stages):
        assert sorted((t.dst, t.src, t.blocks) for t in g.transfers) == pairs(s)
    holdings, arrivals = follow(scatter, {i: set(range(n)) if i == 1 else set() for i in range(n)})
    for node in range(n):
        if node != 1:
            assert node in holdings[node] and arrivals[node, node] == 1
    if name != "mpi":
        ports_ok(scatter)


@pytest.mark.parametrize("n", [2, 3, 4, 9, 16])
@pytest.mark.parametrize("name", ["ring", "tree", "vlink", "mpi"])
@pytest.mark.parametrize("broadcast", [True, False])
def test_allgather_leaves_every_block_everywhere(n, name, broadcast):
    sched = schedule(name, n, BLOCK, collective="allgather", broadcast=broadcast)
    holdings, _ = follow(sched, {i: {i} for i in range(n)})
    assert all(blocks == set(range(n)) for blocks in holdings.values())
    if name == "mpi":
        assert len(sched.stages) == 1
    elif broadcast and name != "ring":
        # The gather, then one broadcast of everything from the root.
        assert sched.stages[:-1] == schedule(name, n, BLOCK).stages
        assert "broadcast" in sched.stages[-1].setup
        assert {t.blocks for t in sched.stages[-1].transfers} == {tuple(range(n))}
        ports_ok(sched)
    else:
        # No broadcast (a fat tree with loops; the DCN has no switch): a ring allgather.
        assert len(sched.stages) == n - 1
        assert not any("broadcast" in stage.setup for stage in sched.stages)
        ports_ok(sched)


def test_zero_byte_blocks_keep_the_shape():
    sched = schedule("tree", 16, 0)
    assert len(sched.stages) == 5 and all(t.bytes == 0 for stage in sched.stages for t in stage.transfers)


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        (("tree", 1, BLOCK), {}, "nodes 1; give a whole number of 2 or more"),
        (("tree", 2.5, BLOCK), {}, "nodes 2.5"),
        (("star", 4, BLOCK), {}, "unknown schedule 'star'; choose ring, tree, vlink, mpi"),
        (("tree", 4, -1), {}, "block size (bytes per node) -1"),
        (("tree", 4, BLOCK), {"ports": 3}, "3 ports per node; the schedules are built for 2 or 4"),
        (("tree", 4, BLOCK), {"virtual_ports": 1}, "1 virtual ports per port; choose 2, 4"),
        (("tree", 4, BLOCK), {"root": 4}, "root 4; give a node from 0 to 3"),
        (
            ("tree", 4, BLOCK),
            {"collective": "reduce"},
            "unknown collective 'reduce'; choose gather, scatter, allgather",
        ),
    ],
)
def test_bad_parameters_are_usage_errors(args, kwargs, message):
    with pytest.raises(_core.UsageError) as error:
        schedule(*args, **kwargs)
    assert message in str(error.value)


def test_rank_part_is_each_ranks_messages_by_buffer_position():
    from fpgacomm.benchmarks.gather import _runs, expected_blocks, rank_part

    tree = schedule("tree", 9, BLOCK)
    # FPGA 3 collects 4's block in stage 1 and sends blocks 3 and 4 as one message at the end.
    assert rank_part(tree, 3) == [([], [(4, 4, 1)]), ([], []), ([(0, 3, 2)], [])]
    assert rank_part(tree, 0)[2] == ([], [(3, 3, 2), (7, 7, 2)])
    # Relabelled to root 7, node 1 is old node 3: positions stay those of root 0's view.
    assert rank_part(schedule("tree", 9, BLOCK, root=7), 1)[2] == ([(7, 3, 2)], [])
    assert _runs([5, 6, 0, 2, 3]) == [(5, 2), (0, 1), (2, 2)]
    assert expected_blocks("gather", 4, 1, 1) == ([0], [0, 1, 2, 3])
    assert expected_blocks("gather", 4, 1, 3) == ([2], [2])
    assert expected_blocks("scatter", 4, 1, 1) == ([0, 1, 2, 3], [0, 1, 2, 3])
    assert expected_blocks("scatter", 4, 1, 0) == ([3], [3])
    assert expected_blocks("allgather", 4, 1, 0) == ([3], [0, 1, 2, 3])
