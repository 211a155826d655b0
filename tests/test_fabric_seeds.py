"""The papers' figures, reproduced by simulated frame timing, within the
tolerances each test states."""

import pytest
from fpgacomm import fabric

MiB = 1 << 20


def rel(a, b):
    return abs(a / b - 1.0)


# --- the VCSN paper: eq. 1 and 2, Table 1 ------------------------------------


@pytest.mark.parametrize("preset, expected", [("vcsn", 12.44e9), ("dcn_ring", 12.02e9)])
def test_large_transfer_throughput(preset, expected):
    for size in (64 * MiB, 256 * MiB):
        row = fabric.bandwidth(preset, nodes=4, size=size).rows[0]
        assert rel(row["bandwidth"], expected) < 0.005, row


@pytest.mark.parametrize("preset, expected", [("vcsn", 851.1e-9), ("dcn_ring", 490.9e-9)])
def test_loopback_link_latency(preset, expected):
    row = fabric.latency(preset, nodes=4, size=64).rows[0]
    # Table 1 counts crossbar to crossbar: the first byte's way.
    assert rel(row["first_byte"], expected) < 0.001, row
    # The whole 64-byte frame follows it by its time on the wire.
    assert row["latency"] > row["first_byte"]


# --- the CusComNet paper: section VI-A ------------------------------------------

B, TR, TA = 1565e6, 0.57e-6, 0.13e-6
T_PKT_64 = 512 / B


def cuscomnet_latency(forwarding, hops, size, rows=4, cols=4):
    torus = fabric.cuscomnet_torus(rows, cols, forwarding=forwarding)
    return fabric.latency(torus, hops=hops, size=size).rows[0]["latency"]


@pytest.mark.parametrize("forwarding", ["cut_through", "store_and_forward"])
def test_cuscomnet_neighbours(forwarding):
    assert rel(cuscomnet_latency(forwarding, 1, 64), 1.157e-6) < 0.002
    assert rel(cuscomnet_latency(forwarding, 1, 0), 0.83e-6) < 0.002


def test_cuscomnet_each_hub_adds_tr_cutting_through():
    times = [cuscomnet_latency("cut_through", hops, 64) for hops in (1, 2, 3, 4)]
    for before, after in zip(times, times[1:]):
        assert after - before == pytest.approx(TR, rel=1e-3)


def test_cuscomnet_store_and_forward_is_eq1_as_printed():
    for hops in (1, 2, 3, 4):
        eq1 = hops * (0 + TR + T_PKT_64) + 2 * TA
        assert rel(cuscomnet_latency("store_and_forward", hops, 64), eq1) < 1e-3


def test_cuscomnet_longest_path_of_32x32_torus():
    # 16 links along the row and 16 down the column: 32 links, 31 hubs.
    cut = cuscomnet_latency("cut_through", 32, 64, 32, 32)
    stored = cuscomnet_latency("store_and_forward", 32, 64, 32, 32)
    assert rel(cut, 32 * TR + T_PKT_64 + 2 * TA) < 1e-3
    assert rel(stored - cut, 31 * T_PKT_64) < 1e-3


@pytest.mark.parametrize("payload", [4, 16, 64])
def test_cuscomnet_small_packet_throughput(payload):
    # 2 Gbit/s with 8B/10B: 1600 Mbit/s, times the header efficiency of a
    # 16-bit header.
    torus = fabric.cuscomnet_torus(2, 2, link="nominal")
    torus.spec.framing.max_payload = payload
    row = fabric.bandwidth(torus, size=50_000 * payload).rows[0]
    assert rel(row["bandwidth"], 1600e6 / 8 * payload / (payload + 2)) < 0.005


# --- HPCC FPGA: b_eff channel model of the BittWare 520N -----------------------


def test_beff_520n_all_sizes_match_channel_model():
    result = fabric.beff_ring(fabric.beff_520n(4))
    assert [row["size"] for row in result.rows] == [1 << m for m in range(21)]
    for row in result.rows:
        assert rel(row["pair_bandwidth"], row["model_pair_bandwidth"]) < 0.01, row
    # 7.77 GB/s per FPGA: the mean over sizes of two kernel pairs.
    per_fpga = 2 * sum(row["pair_bandwidth"] for row in result.rows) / len(result.rows)
    assert rel(per_fpga, 7.77e9) < 0.002


# --- the FSHMEM paper: section IV-C ---------------------------------------------


@pytest.mark.parametrize("packet, peak", [(128, 2621e6), (256, 3419e6), (512, 3813e6), (1024, 3813e6)])
def test_fshmem_peak_bandwidth(packet, peak):
    for op in ("put", "get"):
        row = fabric.one_sided(fabric.fshmem_pair(packet), op=op, size=2 * MiB).rows[0]
        assert rel(row["bandwidth"], peak) < 0.02, (op, row)


@pytest.mark.parametrize("packet", [128, 256, 512, 1024])
def test_fshmem_half_bandwidth_near_2k(packet):
    sizes = [512, 1024, 2048, 4096, 8192, 2 * MiB]
    bw = [row["bandwidth"] for row in fabric.one_sided(fabric.fshmem_pair(packet), size=sizes).rows]
    half = bw[-1] / 2
    crossing = next(size for size, b in zip(sizes, bw) if b >= half)
    assert crossing in (1024, 2048, 4096)
    # 95 % of the peak from 32 KB on is the seed's other observation.
    big = fabric.one_sided(fabric.fshmem_pair(packet), size=64 * 1024).rows[0]["bandwidth"]
    assert big > 0.9 * bw[-1]


def test_fshmem_get_below_put():
    pair = fabric.fshmem_pair(512)
    sizes = [2048, 8192]
    put = fabric.one_sided(pair, op="put", size=sizes).rows
    get = fabric.one_sided(pair, op="get", size=sizes).rows
    below = [1 - g["bandwidth"] / p["bandwidth"] for g, p in zip(get, put)]
    assert below[0] == pytest.approx(0.20, abs=0.03)
    assert below[1] == pytest.approx(0.08, abs=0.02)


# --- the CusComNet paper, eq. 5: queueing--------------------------------------------


@pytest.mark.slow
def test_queue_wait_matches_mm1_and_md1():
    """5 million packets per point, batch means; M/D/1 waits half as long,
    where eq. 5 (M/M/1) is pessimistic for fixed-size packets."""
    for rho in (0.3, 0.6, 0.9):
        mm1 = fabric._sim.single_queue(rho, 5_000_000, True, 11, 50)
        service = mm1["service_mean"]
        dq, eq = 1 / service, rho / service
        assert rel(mm1["mean_wait"], rho / (dq - eq)) < 0.05, (rho, mm1)
        assert abs(mm1["mean_wait"] - rho / (dq - eq)) < 3 * mm1["ci_half_width"]
        md1 = fabric._sim.single_queue(rho, 5_000_000, False, 11, 50)
        pk = rho * service / (2 * (1 - rho))
        assert rel(md1["mean_wait"], pk) < 0.05, (rho, md1)
        assert md1["mean_wait"] < 0.6 * rho / (dq - eq)
