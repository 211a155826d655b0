"""LogGP's overheads under mpirun (tests/test_mpi.py starts them with 2 and
3 ranks): every rank gets the same timings, they are positive and small for
small messages, and any other rank count is refused on every rank."""

import pytest
from conftest import assert_all
from fpgacomm import _core, overhead


@pytest.mark.ranks(2)
def test_every_rank_gets_the_same_positive_overheads(comm):
    result = overhead.run(comm, sizes=[1, 64, 1 << 16], iterations=50, warmup=5)
    assert [row["size"] for row in result.rows] == [1, 64, 1 << 16]
    rows = comm.allgather(result.rows)
    assert_all(comm, all(r == rows[0] for r in rows), "ranks disagree on the timings")
    for row in result.rows:
        assert row["iterations"] == 50
        assert 0 < row["send_overhead_min"] <= row["send_overhead_p50"]
        assert 0 < row["recv_overhead_min"] <= row["recv_overhead_p50"]
        assert len(result.samples[f"{row['size']}/send"]) == 50
        assert row["send_overhead"] == pytest.approx(sum(result.samples[f"{row['size']}/send"]) / 50)
    # A call that starts a 1-byte send costs well under a millisecond on any machine.
    assert result.rows[0]["send_overhead_p50"] < 1e-3 and result.rows[0]["recv_overhead_p50"] < 1e-3


@pytest.mark.ranks(3)
def test_other_rank_counts_are_refused_on_every_rank(comm):
    with pytest.raises(_core.UsageError, match="overhead needs exactly 2 ranks, and this run has 3") as caught:
        overhead.run(comm, sizes=[1], iterations=1)
    assert caught.value.agreed
