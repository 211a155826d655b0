"""What an MPI library runs for a gather (simulation/mpi_library.py): Open MPI
4.1's decision at its thresholds, and the simulated algorithms against LogGP
times worked out by hand."""

import pytest
from fpgacomm import _core, fabric, gather_sim
from fpgacomm.calibration import fit
from fpgacomm.results.result import Result
from fpgacomm.simulation import mpi_library, patterns

KiB = 1 << 10

# coll_tuned_decision_fixed.c (v4.1.6), ompi_coll_tuned_gather_intra_dec_fixed: per communicator
# size, the block bytes either side of each threshold and the algorithm there.
OPEN_MPI_41_GATHER = [
    (2, 1, "linear_sync"),
    (3, 2, "basic_linear"),
    (2, 3, "basic_linear"),
    (3, 4, "binomial"),
    (2, 32767, "binomial"),
    (2, 32768, "basic_linear"),
    (3, 65535, "basic_linear"),
    (2, 65536, "binomial"),
    (3, 131071, "binomial"),
    (2, 131072, "linear_sync"),
    (3, 16 << 20, "linear_sync"),
    (4, 1023, "binomial"),
    (7, 1024, "basic_linear"),
    (4, 8191, "basic_linear"),
    (7, 8192, "binomial"),
    (4, 32767, "binomial"),
    (7, 32768, "basic_linear"),
    (4, 262143, "basic_linear"),
    (7, 262144, "linear_sync"),
    (8, 1, "binomial"),
    (8, 16 << 20, "binomial"),
    (255, 5000, "binomial"),
    (256, 2047, "binomial"),
    (511, 2048, "basic_linear"),
    (256, 8191, "basic_linear"),
    (511, 8192, "binomial"),
    (512, 5000, "binomial"),
    (4096, 1, "binomial"),
]


@pytest.mark.parametrize("nodes, block, expected", OPEN_MPI_41_GATHER)
def test_open_mpi_41_gather_decision_at_its_thresholds(nodes, block, expected):
    assert mpi_library.algorithm("openmpi-4.1", "MPI_Gather", nodes, block) == expected


@pytest.mark.parametrize("nodes, block", [(2, 1), (7, 65536), (32, 16 << 20), (1024, 64)])
def test_open_mpi_41_gatherv_is_basics_linear_one(nodes, block):
    # coll/tuned has no gatherv (coll_gatherv = NULL): coll/basic's linear gatherv runs.
    assert mpi_library.algorithm("openmpi-4.1", "MPI_Gatherv", nodes, block) == "basic_linear"
    assert mpi_library.algorithm("concurrent", "MPI_Gatherv", nodes, block) == "concurrent"


def test_an_unknown_library_is_an_error_and_the_version_strings_map():
    with pytest.raises(_core.UsageError, match="mpi_library 'mpich-4'"):
        fabric.cluster(4, mpi_library="mpich-4")
    assert mpi_library.of_version("Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6") == "openmpi-4.1"
    assert mpi_library.of_version("MPICH Version: 4.1.2") is None


# --- simulated, against LogGP by hand: o_s 1 us, o_r 2 us, L 0.5 us, B 5 GB/s, rendezvous 7 us past 4 KiB;
# one host whose bus (1 PB/s) never limits, so that concurrent messages to different ranks do not meet.
COSTS = dict(
    ranks_per_host=64,
    send_overhead=1e-6,
    recv_overhead=2e-6,
    gap=0.5e-6,
    intra_latency=0.5e-6,
    intra_bandwidth=5e9,
    host_bandwidth=1e15,
    eager_threshold=4096,
    rendezvous_latency=7e-6,
)


def one_way(size: int) -> float:
    """o_s + L + size / B + o_r, and the rendezvous past the eager threshold."""
    return 1e-6 + 0.5e-6 + size / 5e9 + 2e-6 + (7e-6 if size > 4096 else 0.0)


def test_the_binomial_gather_is_one_message_per_round_of_its_subtrees_blocks():
    # 12 ranks: rounds of 1, 2, 4 blocks, then rank 8's subtree of 4 (8..11): four one-way times.
    d = 64 * KiB
    row = patterns.mpi_gather(fabric.cluster(12, **COSTS), size=d).rows[0]
    assert row["algorithm"] == "binomial"
    # (Concurrent messages take turns on the bus by 64 KiB segment: well under a ns at 1 PB/s.)
    assert row["time"] == pytest.approx(one_way(d) + one_way(2 * d) + one_way(4 * d) + one_way(4 * d), rel=1e-5)


def test_linear_sync_waits_for_the_roots_go_ahead_before_each_block():
    # 3 ranks, 128 KiB: per rank an empty go-ahead and the block, then the last rank's empty second segment.
    d = 128 * KiB
    row = patterns.mpi_gather(fabric.cluster(3, **COSTS), size=d).rows[0]
    assert row["algorithm"] == "linear_sync"
    assert row["time"] == pytest.approx(2 * (one_way(0) + one_way(d)) + one_way(0), rel=1e-9)


def test_the_mpi_schedule_is_basic_linear_gatherv_one_rendezvous_after_another():
    d = 64 * KiB
    fab = fabric.cluster(6, **COSTS)
    row = gather_sim.run("mpi", fab, nodes=[6], sizes=[d]).rows[0]
    assert row["transfer"] == pytest.approx(5 * one_way(d), rel=1e-9)
    assert patterns.mpi_gather(fab, size=d, call="MPI_Gatherv").rows[0]["time"] == pytest.approx(row["transfer"])
    # Eager blocks all leave at once; the root takes them one per o_r.
    small = gather_sim.run("mpi", fab, nodes=[6], sizes=[KiB]).rows[0]
    assert small["transfer"] == pytest.approx(one_way(KiB) + 4 * 2e-6, rel=1e-3)
    # The previous model, every block at once, stays available by name.
    at_once = gather_sim.run("mpi", fabric.cluster(6, **COSTS, mpi_library="concurrent"), nodes=[6], sizes=[d])
    # ... whose five blocks the root still copies at its one rate: o_s + R + L + 5 d / B + o_r.
    assert at_once.rows[0]["transfer"] == pytest.approx(one_way(d) + 4 * d / 5e9, rel=1e-9)
    assert at_once.params["mpi_algorithms"] == {f"6/{d}": "concurrent"}


def test_the_fit_names_the_launches_mpi_and_says_when_it_has_no_rules():
    said = []
    launch = Result("calibration", {}, {"mpi_library": "Open MPI v4.1.6, package: Debian OpenMPI"}, [], {})
    assert fit.mpi_library([launch], said) == "openmpi-4.1" and "'openmpi-4.1'" in said[0]
    other = Result("calibration", {}, {"mpi_library": "MPICH Version: 4.1.2"}, [], {})
    assert fit.mpi_library([other], said) == "concurrent" and "no declared rules" in said[1]


def test_the_fit_says_when_mbw_mr_never_saw_the_bus():
    def row(pairs, time):
        return {"family": "mbw_mr", "pairs": pairs, "size": 1 << 20, "time": time}

    # The archived 32-core host: 1 to 4 pairs at 1 MiB took 80.8 to 82.7 us a message.
    assert fit.bus_saturation([row(1, 80.79e-6), row(2, 82.37e-6), row(4, 82.67e-6)]) == (
        pytest.approx(1.023, abs=1e-3),
        4,
    )
    assert fit.bus_saturation([row(1, 80e-6), row(4, 160e-6)])[0] == pytest.approx(2.0)
