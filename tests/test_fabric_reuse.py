"""Exact reuse of identical groups of transfers (docs/FABRIC.md, "Exact
reuse"): every field of a staged run with reuse equals the full simulation's,
bit for bit, on every schedule and fabric, with a slowed link, and where
transfers contend."""

import pytest
from fpgacomm import fabric, gather_sim, schedules

BLOCK = 20000  # three jumbo frames: several frames per transfer, quick to simulate
# What only reuse changes: how much was simulated, and the queue it was simulated with.
WORK = ("events_simulated", "groups", "distinct_groups", "reuse", "reuse_note", "mean_depth")
PAIRS = [(schedule, preset) for schedule, presets in gather_sim.FABRICS.items() for preset in presets]


def both(fab, stages):
    reused = fabric.run_schedule(fab, stages, reuse=True)
    full = fabric.run_schedule(fab, stages, reuse=False)
    assert reused.params["reuse"] is True and full.params["reuse"] is False
    return reused, full


def assert_identical(reused, full):
    assert reused.rows == full.rows
    assert reused.samples == full.samples
    for key, value in full.params.items():
        if key not in WORK:
            assert reused.params[key] == value, key
    assert full.params["distinct_groups"] == full.params["groups"] == full.params["stages"]


def sizes_for(preset):
    # One switch of 16 ports holds 16 nodes.
    return range(2, 17) if preset == "vcsn" else range(2, 65)


@pytest.mark.parametrize("schedule, preset", PAIRS)
def test_reuse_is_bit_identical_on_every_schedule_and_fabric(schedule, preset):
    reused_somewhere = False
    for n in sizes_for(preset):
        plan = schedules.schedule(schedule, n, BLOCK, broadcast=False)
        fab = gather_sim.sized(preset, n, 2, 2)
        reused, full = both(fab, gather_sim.stages_on(plan, fab))
        assert_identical(reused, full)
        reused_somewhere |= reused.params["distinct_groups"] < reused.params["groups"]
        assert reused.params["events_simulated"] <= full.params["events_simulated"]
    if schedule != "mpi":  # MPI_Gather is one stage whose transfers all meet at the root
        assert reused_somewhere


@pytest.mark.parametrize("collective", ["scatter", "allgather"])
@pytest.mark.parametrize(
    "schedule, preset", [("ring", "dcn_ring"), ("tree", "vcsn_fat_tree"), ("vlink", "vcsn"), ("mpi", "host_path")]
)
def test_reuse_is_bit_identical_for_scatter_and_allgather(collective, schedule, preset):
    for n in (2, 3, 5, 9, 16):
        plan = schedules.schedule(schedule, n, BLOCK, collective=collective, broadcast=False)
        reused, full = both(gather_sim.sized(preset, n, 2, 2), gather_sim.fabric_stages(plan))
        assert_identical(reused, full)


@pytest.mark.parametrize(
    "schedule, preset, device, port",
    [("ring", "dcn_ring", 3, 1), ("tree", "vcsn", 3, 0), ("tree", "vcsn_fat_tree", 2, 0)],
)
def test_a_slowed_link_is_reused_only_where_it_is(schedule, preset, device, port):
    for n in (9, 16, 64) if preset == "vcsn_fat_tree" else (9, 16):
        plan = schedules.schedule(schedule, n, BLOCK)
        slow = gather_sim.sized(preset, n, 2, 2)
        slow.spec.scale_link(device % n, port, 0.5)
        reused, full = both(slow, gather_sim.fabric_stages(plan))
        assert_identical(reused, full)
        plain = fabric.run_schedule(gather_sim.sized(preset, n, 2, 2), gather_sim.fabric_stages(plan))
        # The slowed link shows: some transfer took longer than on the plain fabric.
        assert any(a > b for stage in plain.samples for a, b in zip(reused.samples[stage], plain.samples[stage]))


def test_contending_groups_are_reused_with_their_arbitration_order():
    # Two senders into one node contend for its port; the same pattern
    # elsewhere (relabelled) is reused. Reversed, the pair's order changes
    # (a new group, reused by its twin); a transfer on lane 1 is a group of
    # its own, the other lone transfer is reused in the second stage.
    fab = fabric.vcsn_fat_tree(64)
    stage = [
        (1, 0, 3 * BLOCK),
        (2, 0, BLOCK),
        (41, 40, 3 * BLOCK),
        (42, 40, BLOCK),
        (60, 61, BLOCK),
        (20, 21, BLOCK, 0, 1),
    ]
    reused, full = both(fab, [stage, stage[::-1]])
    assert_identical(reused, full)
    assert reused.params["groups"] == 8 and reused.params["distinct_groups"] == 4
    done = reused.samples["1"]
    assert done[0] == done[2] and done[1] == done[3] and done[1] > done[4]


def test_bit_errors_turn_reuse_off_and_say_why():
    fab = fabric.cuscomnet_torus(3, 3, bit_error_rate=1e-5)
    result = fabric.run_schedule(fab, [[(0, 1, 4096), (4, 5, 4096)]], reuse=True)
    assert result.params["reuse"] is False and "random stream" in result.params["reuse_note"]


def test_local_control_simulates_in_full_and_says_so():
    result = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[BLOCK], control="local")
    assert result.params["reuse"] is False and "control local" in result.params["reuse_note"]
    barrier = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[BLOCK])
    assert barrier.params["reuse"] is True and barrier.rows[0]["transfer"] == result.rows[0]["transfer"]


def test_gather_sim_with_and_without_reuse_agree_in_every_column():
    reused = gather_sim.run("tree", "vcsn_fat_tree", nodes=[64], sizes=[BLOCK, 1 << 20])
    full = gather_sim.run("tree", "vcsn_fat_tree", nodes=[64], sizes=[BLOCK, 1 << 20], reuse=False, fast_forward=False)
    work = ("events_simulated", "events_estimated")  # what the runs stepped, and expected to step
    for a, b in zip(reused.rows, full.rows):
        assert {k: v for k, v in a.items() if k not in work} == {k: v for k, v in b.items() if k not in work}
        assert a["events_simulated"] < b["events_simulated"] == b["events"]
    assert reused.samples == full.samples


def test_runs_wrap_round_and_name_real_nodes():
    fab = fabric.dcn_ring(8)
    # A run of 4 transfers from node 6 on: 6->7, 7->0, 0->1, 1->2.
    run = fabric.run_schedule(fab, [[(4, 6, 1, 7, 1, BLOCK, 0, 0)]])
    explicit = fabric.run_schedule(fab, [[(6, 7, BLOCK), (7, 0, BLOCK), (0, 1, BLOCK), (1, 2, BLOCK)]])
    assert run.rows == explicit.rows and run.samples == explicit.samples
    with pytest.raises(fabric.UsageError, match="source node 8 is not in this fabric of 8 nodes"):
        fabric.run_schedule(fab, [[(2, 8, 1, 0, 1, BLOCK, 0, 0)]])
    with pytest.raises(fabric.UsageError, match="a run of -1 transfers"):
        fabric.run_schedule(fab, [[(-1, 0, 1, 1, 1, BLOCK, 0, 0)]])
    with pytest.raises(fabric.UsageError, match=r"\(src, dst, bytes\[, port\[, lane\]\]\)"):
        fabric.run_schedule(fab, [[(0, 1, 2, 3, 4, 5)]])


@pytest.mark.parametrize(
    "make",
    [
        lambda: fabric.cuscomnet_torus(4, 4, priorities=2),
        lambda: fabric.cuscomnet_torus(3, 5, forwarding="store_and_forward"),
        lambda: fabric.dcn_ring(12, ports=4),
        lambda: fabric.host_path(8),
        lambda: fabric.vcsn(12, virtual_ports_per_port=4),
        lambda: fabric.vcsn_fat_tree(80, switch_ports=8),
    ],
    ids=[
        "torus-priorities",
        "torus-store-and-forward",
        "ring-two-channels",
        "host-path",
        "vcsn-4-vports",
        "fat-tree-3-levels",
    ],
)
def test_random_stages_are_bit_identical(make):
    # Random transfers of random sizes, lanes and planes, repeated with a
    # shift so that relabelled twins exist: bounded buffers, strict
    # priority, parallel links, store and forward and contention included.
    import random

    fab = make()
    n, planes = fab.nodes, fab.spec.ports_per_node if fab.spec.topology in ("switched", "fat_tree") else 1
    lanes = fab.spec.hub.lanes
    rng = random.Random(7)
    stages = []
    for _ in range(6):
        stage = []
        for _ in range(rng.randint(1, n)):
            src = rng.randrange(n)
            dst = (src + rng.randrange(1, n)) % n
            stage.append((src, dst, rng.choice([0, 1, 64, 3000, 20000]), rng.randrange(planes), rng.randrange(lanes)))
        shift = rng.randrange(1, n)
        stage += [((s + shift) % n, (d + shift) % n, b, p, lane) for s, d, b, p, lane in stage]
        stages.append(stage)
    reused, full = both(fab, stages)
    assert_identical(reused, full)


def test_stages_that_only_drain_chains_reuse_the_groups_of_the_stage_before():
    # details=False carries a stage's groups into the next when it only
    # shortens runs (a chain draining); details=True groups every stage
    # afresh. Every figure must agree, the grouping counts included.
    cases = [
        ("ring", "dcn_ring", 2, 2, "gather"),
        ("tree", "vcsn_fat_tree", 2, 2, "gather"),
        ("tree", "vcsn_fat_tree", 4, 2, "scatter"),
        ("vlink", "vcsn_fat_tree", 2, 4, "gather"),
        ("ring", "vcsn", 4, 2, "gather"),
        ("tree", "vcsn", 2, 2, "allgather"),
    ]
    for schedule, preset, ports, vports, collective in cases:
        for n in (5, 16, 47):
            if preset == "vcsn" and n > 16:
                continue
            plan = schedules.schedule(
                schedule, n, 3 * BLOCK, ports=ports, virtual_ports=vports, collective=collective, broadcast=False
            )
            fab = gather_sim.sized(preset, n, ports, vports)
            stages = gather_sim.fabric_stages(plan)
            grouped = fabric.run_schedule(fab, stages, details=True)
            carried = fabric.run_schedule(fab, stages, details=False)
            assert carried.rows == grouped.rows, (schedule, preset, n)
            for key in ("events", "events_simulated", "groups", "distinct_groups"):
                assert carried.params[key] == grouped.params[key], (schedule, preset, n, key)


def test_fat_trees_past_three_levels_route_and_reuse_exactly():
    # 4-port switches: three levels hold 16 nodes, four 32, five 64.
    for n, levels in ((17, 4), (40, 5)):
        fab = fabric.vcsn_fat_tree(n, switch_ports=4)
        assert fabric._sim.describe(fab.spec)["levels"] == levels
        for schedule in ("tree", "vlink", "ring"):
            stages = gather_sim.fabric_stages(schedules.schedule(schedule, n, 3 * BLOCK))
            stepped = fabric.run_schedule(fab, stages, reuse=False, fast_forward=False, details=True)
            fast = fabric.run_schedule(fab, stages, details=False)
            assert fast.rows == stepped.rows, (n, schedule)
            assert fast.params["events"] == stepped.params["events"]
