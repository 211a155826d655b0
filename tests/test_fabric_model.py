"""Sensitivity, schedules, determinism and errors of the fabric simulator."""

import json

import pytest
from fpgacomm import _core, fabric, gather, gather_sim
from fpgacomm.models import vcsn as vcsn_model

UsageError = fabric.UsageError
MiB = 1 << 20


def figures(fab, size=4 * MiB):
    """(bandwidth, first-byte latency) between node 0 and its neighbour."""
    bw = fabric.bandwidth(fab, size=size).rows[0]["bandwidth"]
    first = fabric.latency(fab, size=64).rows[0]["first_byte"]
    return bw, first


def stream_time(fab, size=4 * MiB):
    return fabric.bandwidth(fab, size=size).rows[0]["time"]


# --- sensitivity: one component changed, the figures move as predicted ------


def test_line_coding_scales_bandwidth_only():
    base = fabric.dcn_ring(4)
    changed = fabric.dcn_ring(4)
    changed.spec.access_link.coding = "64b66b"
    (bw0, lat0), (bw1, lat1) = figures(base), figures(changed)
    assert bw1 / bw0 == pytest.approx(67 / 66, rel=2e-4)
    assert lat1 == pytest.approx(lat0, rel=1e-12)


def test_header_size_scales_bandwidth_only():
    base = fabric.vcsn(4)
    changed = fabric.vcsn(4)
    changed.spec.framing.header_bytes += 64
    (bw0, lat0), (bw1, lat1) = figures(base), figures(changed)
    assert bw1 / bw0 == pytest.approx(9194 / 9258, rel=2e-4)
    assert lat1 == pytest.approx(lat0, rel=1e-12)


@pytest.mark.parametrize("preset, cables", [("vcsn", 2), ("dcn_ring", 1)])
def test_cable_latency_adds_once_per_cable(preset, cables):
    base = fabric.preset(preset, 4)
    changed = fabric.preset(preset, 4)
    changed.spec.access_link.latency += 100e-9
    (_, lat0), (_, lat1) = figures(base), figures(changed)
    assert lat1 - lat0 == pytest.approx(cables * 100e-9, rel=1e-9)
    # A stream's frames all pay the cables once: its time moves by as much.
    assert stream_time(changed) - stream_time(base) == pytest.approx(cables * 100e-9, rel=1e-6)


def test_one_slow_link_slows_only_the_paths_through_it():
    base = fabric.dcn_ring(8)
    slow = fabric.dcn_ring(8)
    slow.spec.scale_link(2, 1, 0.5)  # node 2's second port: the link to node 3
    assert fabric._sim.describe(slow.spec)["nodes"] == 8

    def stream(fab, src, dst):
        return fabric._sim.stream(fab.spec, src, dst, 8 * MiB, 0)["bandwidth"]

    assert stream(slow, 2, 3) / stream(base, 2, 3) == pytest.approx(0.5, rel=1e-3)
    assert stream(slow, 3, 2) / stream(base, 3, 2) == pytest.approx(0.5, rel=1e-3)  # full duplex, both ways
    assert stream(slow, 1, 4) / stream(base, 1, 4) == pytest.approx(0.5, rel=1e-3)  # passes through it
    assert stream(slow, 0, 1) == stream(base, 0, 1)
    assert stream(slow, 5, 6) == stream(base, 5, 6)


def host_figures(fab):
    """(bandwidth, one-way latency of 4 KiB) between FPGAs on different hosts."""
    bw = fabric.bandwidth(fab, size=64 * MiB, hops=4).rows[0]["bandwidth"]
    return bw, fabric.latency(fab, size=4096, hops=4).rows[0]["latency"]


def test_host_path_frames_pcie_and_the_host_network_each_their_own_way():
    base = fabric.host_path(4)
    bw0, lat0 = host_figures(base)
    assert bw0 == pytest.approx(10.8e9, rel=0.001)  # the measured PCIe payload rate limits
    # Only the PCIe TLP header grows: PCIe, the bottleneck, loses 16 of 298 bytes per TLP.
    pcie = fabric.host_path(4)
    pcie.spec.framing.header_bytes += 16
    bw1, lat1 = host_figures(pcie)
    assert bw1 / bw0 == pytest.approx(282 / 298, rel=0.001)
    assert lat1 > lat0
    # Only the InfiniBand header grows: the network (12.1 GB/s) still outruns
    # PCIe, so the stream is as fast; one packet takes 100 byte times more
    # (once: the switch cuts through between the two hosts).
    network = fabric.host_path(4)
    network.spec.trunk_framing.header_bytes += 100
    bw2, lat2 = host_figures(network)
    assert bw2 == pytest.approx(bw0, rel=1e-4)
    assert lat2 - lat0 == pytest.approx(100 / (4 * 25.78125e9 * 64 / 66 / 8), rel=0.01)
    assert base.params()["trunk_framing"]["max_payload"] == 4096
    assert base.params()["framing"]["max_payload"] == 256


def test_bit_errors_cost_retransmissions():
    clean = fabric.bandwidth(fabric.cuscomnet_torus(2, 2), size=64 * 4000).rows[0]["bandwidth"]
    noisy = fabric.bandwidth(fabric.cuscomnet_torus(2, 2, bit_error_rate=1e-4), size=64 * 4000).rows[0]
    # A 64-byte packet fails with p = 1 - (1 - 1e-4)^512 = 5 %; each failure
    # costs one more packet time (the cable latency is 0).
    p = 1 - (1 - 1e-4) ** 512
    assert noisy["bandwidth"] / clean == pytest.approx(1 - p, rel=0.02)


def test_strict_priority_serves_high_lane_first():
    # Node 0 streams to node 2 through hub 1 on lane 1 (low priority) while
    # node 1 streams to node 2 on lane 0: both leave hub 1 by one port.
    torus = fabric.cuscomnet_torus(1, 5, priorities=2)
    stream = 64 * 500
    both = fabric.run_schedule(torus, [[(0, 2, stream, 0, 1), (1, 2, stream, 0, 0)]])
    low, high = both.samples["1"]
    alone = fabric.run_schedule(torus, [[(1, 2, stream, 0, 0)]]).samples["1"][0]
    # The high lane goes as if alone; the low one waits for it.
    assert high == pytest.approx(alone, rel=0.02)
    assert low == pytest.approx(2 * alone, rel=0.03)


def test_full_fifo_admits_a_hubs_own_frames_in_round_robin():
    # Node 0 streams to node 2 through hub 1 while hub 1 streams to node 2
    # itself: both want hub 1's one FIFO towards node 2, which is full at
    # saturation. Round robin between the link from node 0 and hub 1's own
    # DMA engine gives each half the link, so both finish near twice the
    # time alone (in event order the forwarded frames won: 1x and 2x).
    torus = fabric.cuscomnet_torus(1, 5)
    stream = 64 * 2000
    forwarded, own = fabric.run_schedule(torus, [[(0, 2, stream), (1, 2, stream)]]).samples["1"]
    alone = fabric.run_schedule(torus, [[(1, 2, stream)]]).samples["1"][0]
    assert own == pytest.approx(2 * alone, rel=0.03)
    assert forwarded == pytest.approx(2 * alone, rel=0.03)


@pytest.mark.parametrize("engines, factor", [(1, 2), (2, 1)])
def test_dma_engines_read_messages_one_at_a_time(engines, factor):
    # Memory (2 GB/s per engine) is the bottleneck, not the 12 GB/s link:
    # node 0's two messages, both out of port 0, take turns on one engine
    # and run side by side on two.
    ring = fabric.dcn_ring(4)
    ring.spec.node.dma_engines = engines
    ring.spec.node.dma_bandwidth = 2e9
    size = 8 * MiB
    first, second = fabric.run_schedule(ring, [[(0, 1, size, 0), (0, 2, size, 0)]]).samples["1"]
    assert first == pytest.approx(size / 2e9, rel=0.01)
    assert second == pytest.approx(factor * size / 2e9, rel=0.01)


# --- VCSN virtual ports: MUX, MAC table, DMUX ---------------------------------


def vcsn_with_links(*links):
    fab = fabric.vcsn(4)
    for source, destination in links:
        fab.connect(source, destination)
    return fab


def test_virtual_ports_share_their_physical_port_and_arrive_where_the_mac_table_says():
    fab = vcsn_with_links(((0, 0, 0), (1, 0, 1)), ((0, 0, 1), (2, 0, 0)), ((0, 1, 0), (3, 1, 1)))
    fab.spec.node.dma_engines = 3  # VCSN has two: the third stream would wait for one
    size = 8 * MiB
    alone = fabric.virtual_streams(fab, [(0, 0, 0, size)]).rows[0]
    assert alone["bandwidth"] == pytest.approx(12.44e9, rel=0.005)
    shared = fabric.virtual_streams(fab, [(0, 0, 0, size), (0, 0, 1, size), (0, 1, 0, size)]).rows
    # The DMUX hands each stream to the virtual port its MAC entry names.
    assert [(r["dst"], r["dst_port"], r["dst_vport"]) for r in shared] == [(1, 0, 1), (2, 0, 0), (3, 1, 1)]
    # The two virtual ports of physical port 0 take turns on it (half each);
    # physical port 1 is another plane and keeps its whole bandwidth.
    assert shared[0]["bandwidth"] == pytest.approx(alone["bandwidth"] / 2, rel=0.01)
    assert shared[1]["bandwidth"] == pytest.approx(alone["bandwidth"] / 2, rel=0.01)
    assert shared[2]["bandwidth"] == pytest.approx(alone["bandwidth"], rel=1e-9)


def test_mac_addresses_name_node_port_and_virtual_port():
    assert fabric.mac_address(5, 1, 0) == "02:00:00:05:01:00"
    fab = vcsn_with_links(((2, 1, 1), "02:00:00:03:01:00"))
    assert fab.params()["mac_table"] == [[2, 1, 1, "02:00:00:03:01:00"]]
    assert fabric.virtual_streams(fab, [(2, 1, 1, 64)]).rows[0]["dst"] == 3


@pytest.mark.parametrize(
    "links, transfer, message",
    [
        ([((0, 0, 0), "02:00:00:63:00:00")], (0, 0, 0, 64), "unknown MAC 02:00:00:63:00:00"),
        ([], (0, 0, 0, 64), "no entry in its node's MAC table"),
        ([((0, 0, 0), (1, 0, 0))], (0, 0, 2, 64), "no virtual port 2 of port 0 of node 0"),
        ([((0, 0, 0), (1, 1, 0))], (0, 0, 0, 64), "another plane"),
        ([((0, 0, 0), (1, 0, 0)), ((2, 0, 0), (1, 0, 0))], (0, 0, 0, 64), "two virtual ports send to"),
        ([((0, 0, 0), (0, 0, 1))], (0, 0, 0, 64), "its own node"),
    ],
)
def test_bad_mac_tables_are_clear_errors(links, transfer, message):
    with pytest.raises(UsageError, match=message):
        fabric.virtual_streams(vcsn_with_links(*links), [transfer])


def test_malformed_mac_address():
    with pytest.raises(UsageError, match="six hex octets"):
        fabric.vcsn(4).connect((0, 0, 0), "02:00:00:zz:00:00")


# --- schedules -----------------------------------------------------------------


def test_schedule_control_costs_are_table5_and_eq6():
    vcsn = fabric.vcsn(16)
    result = fabric.run_schedule(vcsn, [[(1, 0, 1 * MiB, 0)]])
    barrier = 3.34e-5 * 3 + 5.84e-6  # eq. 6 for 8 servers: 1.0604e-4 s
    setup, stage = result.rows
    assert setup["control"] == pytest.approx(1.24e-4 + 1.35e-6 + 2 * (barrier + 52e-6), rel=1e-12)
    stream = fabric._sim.stream(vcsn.spec, 1, 0, MiB, 0)["time"]
    assert stage["transfer"] == pytest.approx(stream, rel=1e-12)
    assert stage["control"] == pytest.approx(barrier + 52e-6, rel=1e-12)  # 85 us of work: the short correction
    assert fabric.run_schedule(fabric.dcn_ring(16), [[(1, 0, MiB, 0)]]).rows[0]["control"] == pytest.approx(
        1.35e-6 + barrier + 52e-6, rel=1e-12
    )


def test_interrupt_adds_to_every_stage_before_its_barrier():
    stages = gather_sim.fabric_stages(gather.schedule("tree", 9, 64 * 1024))
    base = fabric.run_schedule(fabric.vcsn(9), stages)
    slow = fabric.vcsn(9)
    slow.spec.host_costs.interrupt = 5e-6
    changed = fabric.run_schedule(slow, stages)
    assert changed.params["host_costs"]["interrupt"] == 5e-6
    assert changed.rows[0]["control"] == base.rows[0]["control"]  # set-up has no writes to wait for
    for before, after in zip(base.rows[1:], changed.rows[1:]):
        assert after["transfer"] == before["transfer"]
        assert after["control"] - before["control"] == pytest.approx(5e-6, rel=1e-9)


def test_vcsn_gather_follows_eq7():
    # Eq. 7's procedure with the simulated transfer in place of f*l + D_s/b:
    # t, then per stage c and the transfer, and S + 2 barriers among
    # ceil(n/2) servers; S the tree's own stage count.
    n, size = 16, 4 * MiB
    plan = gather.schedule("tree", n, size)
    result = fabric.run_schedule(fabric.vcsn(n), gather_sim.fabric_stages(plan))
    S = len(plan.stages)
    barrier = 3.34e-5 * 3 + 5.84e-6
    transfers = [row["transfer"] for row in result.rows[1:]]
    long = sum(1 for t in transfers if t + 1.35e-6 > 500e-6)
    eq7 = 1.24e-4 + S * 1.35e-6 + sum(transfers) + (S + 2) * barrier + long * 210e-6 + (S + 2 - long) * 52e-6
    assert result.rows[-1]["end"] == pytest.approx(eq7, rel=1e-9)
    # Each stage moves its busiest port's bytes at 12.44 GB/s, plus the latency.
    for transfer, load in zip(transfers, vcsn_model.stage_bytes(plan)):
        assert transfer == pytest.approx(load / 12.44e9, rel=0.01)


def test_vcsn_gathers_small_blocks_faster_than_dcn():
    # The VCSN paper, sections 5.2 and 6.3: fewer stages, so fewer barriers; the
    # advantage grows with the cluster (Fig. 20). (At 9 nodes the tree's
    # extra stage and t make the DCN ring faster: 5 barriers each.)
    ratios = []
    for n in (16, 33, 64):
        size = 64 * 1024
        dcn = gather_sim.run("ring", "dcn_ring", nodes=[n], sizes=[size]).rows[0]["time"]
        vcsn = gather_sim.run("tree", "vcsn" if n <= 16 else "vcsn_fat_tree", nodes=[n], sizes=[size]).rows[0]["time"]
        ratios.append(dcn / vcsn)
    assert 1.0 < ratios[0] < ratios[1] < ratios[2] < 2.0


# --- determinism -------------------------------------------------------------------


def test_same_inputs_same_results():
    first = fabric.traffic(fabric.cuscomnet_torus(4, 4), rate=1e6, packets=300)
    second = fabric.traffic(fabric.cuscomnet_torus(4, 4), rate=1e6, packets=300)
    assert first.rows == second.rows
    other = fabric.cuscomnet_torus(4, 4)
    other.spec.seed = 2
    assert fabric.traffic(other, rate=1e6, packets=300).rows != first.rows


def test_traffic_waits_grow_with_load():
    light = fabric.traffic(fabric.cuscomnet_torus(4, 4), rate=1e5, packets=300).rows[0]
    heavy = fabric.traffic(fabric.cuscomnet_torus(4, 4), rate=1.2e6, packets=300).rows[0]
    assert light["packets"] == heavy["packets"] == 16 * 300
    assert heavy["mean_wait"] > 5 * light["mean_wait"]
    assert heavy["mean_latency"] > light["mean_latency"]
    assert light["mean_links"] == pytest.approx(32 / 15, rel=0.05)  # 4x4 torus: mean distance 32/15


# --- errors ---------------------------------------------------------------------------


def test_torus_with_a_zero_side():
    with pytest.raises(UsageError, match="side of zero"):
        fabric.latency(fabric.cuscomnet_torus(0, 4))


@pytest.mark.parametrize(
    "make",
    [
        lambda: fabric.vcsn(1),
        lambda: fabric.dcn_ring(1),
        lambda: fabric.beff_520n(2),
        lambda: fabric.preset("fshmem_pair", 3),
    ],
)
def test_too_few_nodes(make):
    with pytest.raises(UsageError, match="at least|pair"):
        make()


def test_unroutable_destination():
    with pytest.raises(UsageError, match="not in this fabric"):
        fabric.run_schedule(fabric.vcsn(4), [[(0, 9, 100, 0)]])
    with pytest.raises(UsageError, match="links from node 0"):
        fabric.latency("dcn_ring", nodes=4, hops=3)
    with pytest.raises(UsageError, match="port 2 does not exist"):
        fabric.run_schedule(fabric.vcsn(4), [[(0, 1, 100, 2)]])


def test_zero_bandwidth():
    dead = fabric.vcsn(4)
    dead.spec.access_link.lane_rate = 0.0
    with pytest.raises(UsageError, match="zero bandwidth"):
        fabric.bandwidth(dead)
    slow = fabric.vcsn(4)
    slow.spec.scale_link(0, 0, 0.0)
    with pytest.raises(UsageError, match="no bandwidth"):
        fabric.bandwidth(slow)


def test_buffer_smaller_than_one_packet():
    small = fabric.cuscomnet_torus(4, 4)
    small.spec.hub.buffer_bytes = 10
    with pytest.raises(UsageError, match="smaller than one packet"):
        fabric.latency(small)


def test_unknown_names():
    with pytest.raises(UsageError, match="unknown preset"):
        fabric.latency("infiniband")
    with pytest.raises(UsageError, match="line coding"):
        fabric.vcsn(4).spec.access_link.coding = "4b5b"


# --- results --------------------------------------------------------------------------


def test_result_records_simulation_and_parameters(tmp_path):
    result = fabric.latency("vcsn", nodes=4, size=[0, 64])
    assert result.env["simulated"] is True
    assert result.env["fpgacomm_version"] == _core.__version__
    assert result.params["framing"]["max_payload"] == 9152
    assert result.params["switch"]["routing_latency"] == 300e-9
    assert result.units["latency"] == "s"
    path = tmp_path / "latency.json"
    result.write_json(str(path))
    assert json.loads(path.read_text())["params"]["fabric"] == "vcsn"


def test_suite_results_cover_every_preset():
    results = fabric.suite_results()
    assert {r.params["fabric"] for r in results} == set(fabric.PRESETS)
    assert all(r.env["simulated"] for r in results)


def test_sizes_whole_bytes_or_text():
    # Text takes K/M/G as everywhere else (params.parse_size); 0 is a size here.
    sizes = [row["size"] for row in fabric.bandwidth("vcsn", size=[0, "64K", 3 << 20]).rows]
    assert sizes == [0, 65536, 3 << 20]
    assert fabric.latency("vcsn", size="1K").rows[0]["size"] == 1024
    for bad, message in (
        (-1, r"message size -1; give whole bytes, 0 or more"),
        (1.5, r"message size 1.5; give whole bytes, 0 or more"),
        ("64Q", r"message size '64Q' has an unknown suffix"),
    ):
        with pytest.raises(UsageError, match=message):
            fabric.bandwidth("vcsn", size=bad)
