"""Fast-forward through long streams' steady state (docs/FABRIC.md,
"Fast-forward"): every field of a staged run equals stepping's, bit for bit,
with and without reuse, on every fabric, for streams shorter and longer than
the fast-forward's threshold, with a slowed link, contending streams,
priorities, parallel links, store and forward and waiting reads; and the
jumps do happen where the streams are long."""

import random

import pytest
from fpgacomm import fabric, gather_sim, schedules

MiB = 1 << 20
# What only the amount of simulating changes.
WORK = ("events_simulated", "groups", "distinct_groups", "reuse", "reuse_note", "mean_depth", "fast_forwards")


def assert_identical(fab, stages, *, jumps=None):
    """Compares the run with fast-forward (with and without reuse) against
    stepping every frame; jumps: True if some jump must have happened."""
    stepped = fabric.run_schedule(fab, stages, reuse=False, fast_forward=False)
    assert stepped.params["fast_forwards"] == 0
    made = 0
    for reuse in (False, True):
        forwarded = fabric.run_schedule(fab, stages, reuse=reuse, fast_forward=True)
        assert forwarded.rows == stepped.rows
        assert forwarded.samples == stepped.samples
        for key, value in stepped.params.items():
            if key not in WORK:
                assert forwarded.params[key] == value, key
        assert forwarded.params["events_simulated"] <= stepped.params["events_simulated"]
        made += forwarded.params["fast_forwards"]
    if jumps is not None:
        assert (made > 0) == jumps, made
    return made


def frames_of(fab, frames):
    return frames * fab.spec.framing.max_payload


@pytest.mark.parametrize(
    "frames, jumps", [(1, False), (200, False), (256, False), (300, None), (2000, True), (20000, True)]
)
def test_one_stream_on_vcsn_short_and_long(frames, jumps):
    fab = fabric.vcsn(4)
    assert_identical(fab, [[(0, 1, frames_of(fab, frames))]], jumps=jumps)


def test_odd_sizes_leave_a_short_last_frame():
    fab = fabric.vcsn_fat_tree(64)
    for nbytes in (3 * MiB + 1, 7 * MiB - 64, 9 * MiB + 4097):
        assert_identical(fab, [[(0, 63, nbytes, 0, 0), (1, 62, nbytes // 3, 1, 1)]], jumps=True)


@pytest.mark.parametrize("preset", sorted(fabric.PRESETS))
def test_every_fabric_near_and_far(preset):
    # Every preset of the registry: 8 nodes (64 for two levels of fat tree) where it has a node count.
    nodes = (64 if preset == "vcsn_fat_tree" else 8) if fabric.PRESETS[preset].node_arguments else None
    fab = fabric.preset(preset, nodes)
    far = max(range(fab.nodes), key=lambda node: (fabric._sim.distances(fab.spec, 0)[node], -node))
    for dst in sorted({1, far}):
        assert_identical(fab, [[(0, dst, frames_of(fab, 3000))], [(dst, 0, frames_of(fab, 700))]])


def test_the_tree_gather_of_long_blocks_jumps_and_stays_exact():
    # 1 MiB blocks: chains of up to 16 blocks, the last stage two streams of
    # about 1800 frames into the root, on different planes.
    plan = schedules.schedule("tree", 64, MiB, broadcast=False)
    assert_identical(gather_sim.sized("vcsn_fat_tree", 64, 2, 2), gather_sim.fabric_stages(plan), jumps=True)


def test_gathers_on_a_cluster_with_host_costs_jump_and_stay_exact():
    # Overheads, gap and rendezvous before each message; ranks sharing the bus and the NICs.
    # Blocks of 64 MiB: chains of up to 3 blocks, 1024 to 3072 segments of 64 KiB a message.
    fab = fabric.cluster(16, ranks_per_host=4)
    for schedule, size, jumps in (("tree", 64 * MiB, True), ("mpi", 4 * MiB, None)):
        plan = schedules.schedule(schedule, 16, size, broadcast=False)
        assert_identical(fab, gather_sim.stages_on(plan, fab), jumps=jumps)


def test_the_ring_gather_on_bounded_buffers():
    # DCN's credit buffers hold the reader back: one clock for the whole stream.
    plan = schedules.schedule("ring", 16, 2 * MiB, broadcast=False)
    assert_identical(gather_sim.sized("dcn_ring", 16, 2, 2), gather_sim.fabric_stages(plan), jumps=True)


@pytest.mark.parametrize(
    "preset, device, port", [("vcsn", 0, 0), ("vcsn", 4, 1), ("dcn_ring", 1, 0), ("vcsn_fat_tree", 64, 0)]
)
def test_a_slowed_link(preset, device, port):
    fab = fabric.preset(preset, 64 if preset == "vcsn_fat_tree" else 8)
    fab.spec.scale_link(device, port, 0.37)
    assert_identical(fab, [[(0, 5, frames_of(fab, 4000)), (2, 5, frames_of(fab, 1500), 1)]])


def test_contending_streams_share_a_port_in_round_robin():
    fab = fabric.vcsn(8)
    # Three senders into node 0 on plane 0, one of them on the other virtual port.
    assert_identical(
        fab, [[(1, 0, frames_of(fab, 3000)), (2, 0, frames_of(fab, 2500)), (3, 0, frames_of(fab, 2000), 0, 1)]]
    )


def test_reads_waiting_for_an_engine_and_parallel_links():
    # Three messages from one node (two DMA engines: the third waits), on a
    # ring with two parallel links per neighbour (frames striped over both).
    fab = fabric.dcn_ring(6, ports=4)
    assert_identical(
        fab, [[(0, 1, frames_of(fab, 2000)), (0, 2, frames_of(fab, 1500)), (0, 5, frames_of(fab, 1800))]], jumps=True
    )


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_priorities_and_forwarding_on_the_torus(forwarding):
    fab = fabric.cuscomnet_torus(3, 3, forwarding=forwarding, priorities=2)
    fab.spec.sw.arbitration = fab.spec.hub.arbitration = "strict_priority"
    assert_identical(
        fab,
        [[(0, 4, frames_of(fab, 2500), 0, 1), (1, 4, frames_of(fab, 2500), 0, 0), (3, 8, frames_of(fab, 900), 0, 0)]],
    )


def test_bit_errors_are_stepped():
    fab = fabric.cuscomnet_torus(3, 3, bit_error_rate=1e-7)
    assert assert_identical(fab, [[(0, 4, frames_of(fab, 3000))]]) == 0


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_a_reader_faster_than_its_link_queues_runs_of_frames(forwarding):
    # VCSN reads at 19.2 GB/s into an unbounded FIFO drained at 12.5 GB/s:
    # the reader runs apart; two messages share one node's port on its two
    # virtual ports (not apart), one more leaves by the other plane.
    fab = fabric.vcsn_fat_tree(64)
    fab.spec.hub.forwarding = forwarding
    fab.spec.sw.forwarding = forwarding
    assert_identical(fab, [[(0, 40, frames_of(fab, 30000), 0, 0)]], jumps=True)
    assert_identical(
        fab,
        [
            [
                (0, 40, frames_of(fab, 9000), 0, 0),
                (0, 41, frames_of(fab, 7000), 0, 1),
                (5, 40, frames_of(fab, 8000) + 4096, 1, 0),
            ]
        ],
        jumps=True,
    )


def test_random_stages_on_random_fabrics():
    # Up to three long transfers per stage, odd sizes, random planes and
    # lanes, now and then a slowed link or store and forward at the hubs.
    rng = random.Random(7)
    made = 0
    for _ in range(60):
        kind = rng.randrange(5)
        fab = [
            lambda: fabric.vcsn_fat_tree(64),
            lambda: fabric.dcn_ring(8, ports=rng.choice([2, 4])),
            lambda: fabric.cuscomnet_torus(
                3, 3, forwarding=rng.choice(["cut_through", "store_and_forward"]), priorities=2
            ),
            lambda: fabric.vcsn(8),
            lambda: fabric.host_path(4),
        ][kind]()
        if rng.random() < 0.3:
            fab.spec.scale_link(rng.randrange(fab.nodes), 0, rng.choice([0.5, 0.37, 1.7]))
        if kind in (0, 3) and rng.random() < 0.3:
            fab.spec.hub.forwarding = "store_and_forward"
        unit = max(fab.spec.framing.max_payload, 4096)
        stages = []
        for _ in range(rng.randrange(1, 3)):
            stage = []
            for _ in range(rng.randrange(1, 4)):
                src = rng.randrange(fab.nodes)
                dst = (src + rng.randrange(1, fab.nodes)) % fab.nodes
                size = rng.randrange(100, 4000) * unit + rng.randrange(0, 3) * rng.randrange(1, 5000)
                stage.append(
                    (src, dst, size, rng.randrange(fab.spec.ports_per_node), rng.randrange(fab.spec.hub.lanes))
                )
            stages.append(stage)
        made += assert_identical(fab, stages)
    assert made > 100
