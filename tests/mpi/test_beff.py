"""Ring b_eff under mpirun with 1, 2, 3 and 4 ranks (tests/test_mpi.py starts
them): every communication type delivers intact, stamped messages on rings of
any size, the reductions follow the formulas, and every injected fault fails
validation on every rank."""

import math

import numpy as np
import pytest
from conftest import assert_all, receive_fault
from fpgacomm import _core, beff

# Small sizes (1 B .. 4 KiB, 1 B included: HPCC FPGA's validation passes it
# trivially) and short loops so that CI stays short.
FAST = dict(
    max_size=12, repetitions=2, upper=64, lower=4, offset=4, decrease=3, target_time=0.002, validation_iterations=2
)
TYPES = ["cpu", "pcie", "kernel"]


@pytest.mark.parametrize("comm_type", TYPES)
def test_every_type_delivers_intact_messages_on_any_ring(comm, comm_type):
    result = beff.run(comm, comm_type=comm_type, **FAST)
    ranks = comm.Get_size()
    assert [row["size"] for row in result.rows] == [1 << m for m in range(13)]
    assert all(row["validation"] == "pass" and row["validation_errors"] == 0 for row in result.rows)
    assert result.params["ranks"] == ranks and result.params["exchanges_per_iteration"] == 2
    assert result.params["route"] == ("direct" if comm_type == "cpu" else "staged")
    assert result.params["loop_rule"] == ("hpcc" if comm_type == "cpu" else "adaptive")
    if comm_type == "cpu":
        assert [row["loop_length"] for row in result.rows] == [beff.hpcc_loop_length(m, 64, 4, 4, 3) for m in range(13)]


def test_bandwidth_and_b_eff_follow_hpcc_fpga_from_every_ranks_times(comm):
    result = beff.run(comm, comm_type="cpu", **FAST)
    ranks = comm.Get_size()
    timings = result.params["rank_timings"]
    for row in result.rows:
        mine = [t for t in timings if t["size"] == row["size"]]
        assert sorted(t["rank"] for t in mine) == list(range(ranks))
        assert all(len(t["times"]) == 2 for t in mine)
        # T(m): each rank's best repetition, then the slowest rank.
        slowest_best = max(min(t["times"]) for t in mine)
        assert row["time"] == slowest_best
        assert row["bandwidth"] == pytest.approx(ranks * 2 * row["size"] * row["loop_length"] / row["time"])
        assert row["pair_bandwidth"] == pytest.approx(row["bandwidth"] / (ranks * 2))
    assert result.params["b_eff"] == pytest.approx(np.mean([row["bandwidth"] for row in result.rows]))
    assert "13 sizes" in result.params["b_eff_reduction"]
    # Every rank holds the same Result: positions come from one ring.
    order = result.params["rings"]["ring"]
    assert sorted(order) == list(range(ranks))
    assert_all(comm, comm.allgather(order) == [order] * ranks, "ranks disagree on the ring")
    assert all(t["position"] == order.index(t["rank"]) for t in timings)


def test_rabenseifner_reduction_takes_logavg_over_ring_and_random_rings(comm):
    result = beff.run(
        comm, comm_type="cpu", reduction="rabenseifner", random_rings=2, seed=5, **{**FAST, "max_size": 3}
    )
    assert list(result.params["rings"]) == ["natural", "random0", "random1"]
    assert result.params["rings"]["natural"] == list(range(comm.Get_size()))
    means = result.params["b_eff_per_pattern"]
    expected = math.sqrt(means["natural"] * math.sqrt(means["random0"] * means["random1"]))
    assert result.params["b_eff"] == pytest.approx(expected)
    # Per pattern and size: each repetition's slowest rank, then the best repetition.
    for row in result.rows:
        times = [
            t["times"]
            for t in result.params["rank_timings"]
            if t["pattern"] == row["pattern"] and t["size"] == row["size"]
        ]
        assert row["time"] == min(max(rank[r] for rank in times) for r in range(2))


class Fault:
    """Receive faults that break what arrived, unknown to the validation code."""

    def __init__(self, kind):
        self.kind, self.previous = kind, {}

    def __call__(self, buffer, offset, nbytes):
        if self.kind == "corrupt":  # one wrong byte in the middle
            byte = buffer.read(1, offset + nbytes // 2)
            buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)
        elif self.kind == "lost":  # nothing arrived: the cleared buffer stays clear
            buffer.write(np.zeros(nbytes, np.uint8), offset)
        elif self.kind == "stale":  # the previous message again (a duplicate, or a failed exchange)
            arrived = buffer.read(nbytes, offset)
            key = (id(buffer), nbytes)
            if key in self.previous:
                buffer.write(self.previous[key], offset)
            self.previous[key] = arrived


@pytest.mark.parametrize("fault", ["corrupt", "lost", "stale"])
@pytest.mark.parametrize("comm_type", TYPES)
def test_every_fault_fails_validation_on_every_rank(comm, comm_type, fault):
    breaking = Fault(fault) if comm.Get_rank() == comm.Get_size() - 1 else None
    with receive_fault(comm, breaking) as faulty:
        result = beff.run(faulty, comm_type=comm_type, **{**FAST, "max_size": 4})
    # 1-byte messages included: the stamp makes them fail too.
    assert beff.failed_sizes(result) == [1, 2, 4, 8, 16]
    assert all(row["validation_errors"] > 0 for row in result.rows)


def test_simulated_type_needs_no_device_and_scales_with_fpgas(comm):
    result = beff.run(comm, comm_type="sim", max_size=10, nodes=4)
    assert result.params["fabric"] == "beff_520n" and result.params["ranks"] == 4
    for row in result.rows:
        assert row["bandwidth"] == pytest.approx(4 * 2 * row["pair_bandwidth"])
        assert row["loop_length"] == 1 and row["validation"] is None


def test_iec_says_why_it_is_not_available(comm):
    with pytest.raises(_core.UsageError, match="needs Intel external channels") as caught:
        beff.run(comm, comm_type="iec")
    assert caught.value.agreed
