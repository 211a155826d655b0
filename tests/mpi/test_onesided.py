"""OSU one-sided tests under mpirun -np 2 (and their refusal under 3 and 4), validation on."""

import itertools

import numpy as np
import pytest

from fpgacomm import _core, onesided

SIZES = [1, 8192, 65536 + 12]
FAST = dict(sizes=SIZES, iterations=3, warmup=1, window=4, validate=True)
CASES = [(test, sync) for test, sync in itertools.product(onesided.TESTS, onesided.SYNC)
         if test != "put_bibw" or sync == "fence"]


@pytest.mark.ranks(2)
@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("window_creation", onesided.WINDOW_CREATION)
@pytest.mark.parametrize("test,sync", CASES)
def test_every_one_sided_test_delivers_intact_data(comm, test, sync, window_creation, mem, windows_over_user_memory):
    if window_creation == "create" and not windows_over_user_memory:
        with pytest.raises(_core.UsageError, match="cannot create a window over user memory.*use -w allocate") as caught:
            onesided.run(test, comm, mem=mem, sync=sync, window_creation=window_creation, **FAST)
        assert caught.value.agreed
        return
    result = onesided.run(test, comm, mem=mem, sync=sync, window_creation=window_creation, **FAST)
    assert [row["size"] for row in result.rows] == SIZES
    value = "latency_avg" if test.endswith("latency") else "bandwidth"
    for row in result.rows:
        assert row["validation"] == "pass" and row["validation_errors"] == 0
        assert row[value] > 0
        assert (row["staging_share"] > 0) == (mem == "D")
        if test.startswith("get_"):
            put = row[f"put_{value}"]
            assert row["overhead_vs_put"] == pytest.approx(onesided.overhead(row[value], put, value == "latency_avg"))
    assert result.params["sync"] == sync and result.params["window_creation"] == window_creation
    if value == "bandwidth":
        assert result.params["curve"]["peak_bandwidth"] == max(row["bandwidth"] for row in result.rows)


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", onesided.TESTS)
def test_corruption_after_the_operation_fails_validation(comm, test, windows_over_user_memory):
    """A hook adds one to a byte where data landed (the window made with
    -w create for PUT, the local device buffer for GET)."""
    if not windows_over_user_memory:
        pytest.skip("this MPI cannot MPI_Win_create over user memory, and the hook needs such a window")
    def corrupt(buffer, offset, nbytes):
        byte = buffer.read(1, offset + nbytes // 2)
        buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)

    _core.set_receive_hook(corrupt)
    try:
        result = onesided.run(test, comm, mem="D", window_creation="create", compare_put=False, **FAST)
    finally:
        _core.set_receive_hook(None)
    assert result.rows[0]["validation"] == "fail"
    assert len(result.rows) == 1


@pytest.mark.ranks(2)
def test_put_bibw_takes_fence_only(comm):
    with pytest.raises(_core.UsageError, match="supports only fence") as caught:
        onesided.put_bibw(comm, sizes=[8], sync="flush")
    assert caught.value.agreed


@pytest.mark.ranks(3, 4)
@pytest.mark.parametrize("test", onesided.TESTS)
def test_one_sided_tests_refuse_other_rank_counts(comm, test):
    ranks = comm.Get_size()
    with pytest.raises(_core.UsageError, match=f"needs exactly 2 ranks, and this run has {ranks}") as caught:
        onesided.run(test, comm, sizes=[8])
    assert caught.value.agreed


def test_curve_finds_half_and_saturation_sizes():
    rows = [{"size": s, "bandwidth": b} for s, b in [(1, 1.0), (2, 40.0), (4, 60.0), (8, 96.0), (16, 100.0), (32, 99.0)]]
    assert onesided.curve(rows) == {"peak_bandwidth": 100.0, "peak_size": 16, "half_bandwidth_size": 4,
                                    "saturation_95_size": 8}


def test_overhead_is_slower_time_or_missing_bandwidth():
    # Seed 001: GET 20% below PUT at 2 KB.
    assert onesided.overhead(0.8, 1.0, latency=False) == pytest.approx(0.2)
    assert onesided.overhead(1.25e-6, 1.0e-6, latency=True) == pytest.approx(0.25)
