"""OSU collectives under mpirun -np 2, 3 and 4, host and device buffers, validation on."""

import numpy as np
import pytest
from conftest import assert_all, receive_fault
from fpgacomm import _core, collectives

# Multiples of 4 (so every datatype's elements fill them) that cross the
# 8 KiB iteration switch and do not divide evenly among 3 ranks.
SIZES = [4, 8196, 65548]
FAST = dict(sizes=SIZES, iterations=3, warmup=1, validate=True)


def root_for(op, comm):
    """The last rank, so no test passes only because the root is 0."""
    return comm.Get_size() - 1 if op in collectives.ROOTED else None


@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("op", collectives.TESTS)
def test_every_collective_delivers_the_exact_result(comm, op, mem):
    ranks = comm.Get_size()
    result = collectives.run(op, comm, mem=mem, root=root_for(op, comm), **FAST)
    expected_sizes = [0] if op == "barrier" else SIZES
    assert [row["size"] for row in result.rows] == expected_sizes
    for row in result.rows:
        assert row["validation"] == "pass" and row["validation_errors"] == 0
        assert 0 < row["latency_min"] <= row["latency_avg"] <= row["latency_max"]
        assert (row["staging_share"] > 0) == (mem == "D" and op != "barrier")
        if op == "barrier":
            assert row["algbw"] is None and row["busbw"] is None
            continue
        # The table's figures are held against nccl-tests' in tests/test_collective_table.py.
        assert row["nccl_bytes"] == collectives.nccl_bytes(op, row["size"], ranks)
        assert row["algbw"] == pytest.approx(row["nccl_bytes"] / row["latency_avg"])
        assert row["busbw"] == pytest.approx(row["algbw"] * collectives.busbw_factor(op, ranks))
    assert result.params["scale"] == "scale-up" and result.params["nodes"] == 1
    assert result.params["ranks_per_node"] == ranks
    assert result.params["root"] == (ranks - 1 if op in collectives.ROOTED else None)


def test_busbw_factors_are_nccl_tests():
    assert collectives.busbw_factor("allreduce", 4) == pytest.approx(1.5)
    for op in ("allgather", "reduce_scatter", "alltoall", "gather", "scatter"):
        assert collectives.busbw_factor(op, 4) == pytest.approx(0.75)
    assert collectives.busbw_factor("bcast", 4) == collectives.busbw_factor("reduce", 4) == 1.0


def test_omb_average_is_the_mean_of_the_iterations(comm):
    """OMB's avg (over ranks of per-rank means) equals the mean of the
    rank-averaged iterations, which the samples hold."""
    result = collectives.allreduce(comm, sizes=[64], iterations=40, warmup=2)
    samples = np.array(result.samples["64"])
    assert len(samples) == 40
    assert result.rows[0]["latency_avg"] == pytest.approx(samples.mean(), rel=1e-9)
    assert result.rows[0]["latency_p50"] <= result.rows[0]["latency_p99"]


@pytest.mark.parametrize("op", [op for op in collectives.TESTS if op != "barrier"])
def test_corruption_after_the_collective_fails_validation(comm, op):
    """A fault adds one to a byte of every received buffer after the
    collective; validation knows nothing of it and must see it."""

    def corrupt(buffer, offset, nbytes):
        byte = buffer.read(1, offset + nbytes // 2)
        buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)

    with receive_fault(comm, corrupt) as faulty:
        result = collectives.run(op, faulty, mem="D", root=root_for(op, comm), **FAST)
    # reduce_scatter's 4-byte vector leaves the other ranks empty, yet one rank receives.
    assert result.rows[0]["validation"] == "fail"
    assert len(result.rows) == 1  # the sweep stops at the first failing size


def test_root_out_of_range_is_refused_on_every_rank(comm):
    ranks = comm.Get_size()
    with pytest.raises(_core.UsageError, match=f"root {ranks} is out of range for {ranks} ranks") as caught:
        collectives.bcast(comm, sizes=[8], root=ranks)
    assert caught.value.agreed


@pytest.mark.parametrize("datatype,element", [("mpi_char", 1), ("mpi_int", 4), ("mpi_float", 4)])
@pytest.mark.parametrize("op", ["reduce", "allreduce", "reduce_scatter", "alltoall"])
def test_every_datatype_moves_whole_elements_and_skips_smaller_sizes(comm, op, datatype, element):
    """OSU Micro-Benchmarks' -T: a size carries size // element elements (6
    bytes of MPI_INT: one), a size below one element gets no row, and
    reductions of every datatype give the exact sum (MPI_CHAR modulo 256)."""
    sizes = [1, 2, 6, 8196]
    result = collectives.run(
        op, comm, sizes=sizes, datatype=datatype, root=root_for(op, comm), iterations=3, warmup=1, validate=True
    )
    assert result.params["datatype"] == datatype.upper()
    assert_all(
        comm,
        [row["size"] for row in result.rows] == [size for size in sizes if size >= element],
        f"{op} {datatype} rows",
    )
    assert_all(comm, all(row["validation"] == "pass" for row in result.rows), f"{op} {datatype} validation")


def test_sizes_without_one_element_are_refused_on_every_rank(comm):
    with pytest.raises(_core.UsageError, match=r"no message size of -m holds one MPI_INT \(4 bytes\)") as caught:
        collectives.allreduce(comm, sizes=[1, 2], datatype="mpi_int")
    assert caught.value.agreed
    with pytest.raises(_core.UsageError, match="unknown datatype 'mpi_double'") as caught:
        collectives.allreduce(comm, sizes=[8], datatype="mpi_double")
    assert caught.value.agreed


def test_root_of_a_rootless_collective_is_refused(comm):
    with pytest.raises(_core.UsageError, match="osu allgather has no root") as caught:
        collectives.allgather(comm, sizes=[8], root=0)
    assert caught.value.agreed


def test_reduce_scatter_blocks_cover_the_vector(comm):
    """With a vector that does not divide by the rank count, each rank still
    gets its exact block (validated), for host and device buffers alike."""
    ranks = comm.Get_size()
    size = 4 * (3 * ranks + 1)
    result = collectives.reduce_scatter(comm, sizes=[size], mem="D", iterations=2, warmup=0, validate=True)
    assert_all(comm, result.rows[0]["validation"] == "pass", "reduce_scatter of an uneven vector")


def test_the_binding_check_of_one_rank_alone_leaves_no_rank_out_of_the_next(comm):
    """environment.warn_if_unbound is collective on every call: a run on
    rank 0 alone first must not let rank 0 skip the next run's check while
    the others wait in it."""
    from fpgacomm.runtime import environment
    from mpi4py import MPI

    if comm.Get_rank() == 0:
        environment.warn_if_unbound(MPI.COMM_SELF)
    environment.warn_if_unbound(comm)
    assert_all(comm, True)
