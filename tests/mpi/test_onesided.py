"""OSU one-sided tests under mpirun -np 2 (and their refusal under 3 and 4), validation on."""

import numpy as np
import pytest
from conftest import assert_all, receive_fault
from fpgacomm import _core, onesided

SIZES = [1, 8192, 65536 + 12]
WINDOW = 4
FAST = dict(sizes=SIZES, iterations=3, warmup=1, window=WINDOW, validate=True)
CASES = [(test, sync) for test in onesided.TESTS for sync in onesided.SYNC_CHOICES[test]]


def slots(test: str) -> int:
    """Operations per synchronisation, each at its own offset of the window."""
    return 1 if test.endswith("latency") else WINDOW


@pytest.mark.ranks(2)
@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("window_creation", onesided.WINDOW_CREATION)
@pytest.mark.parametrize("test,sync", CASES)
def test_every_one_sided_test_delivers_intact_data(comm, test, sync, window_creation, mem, windows_over_user_memory):
    if window_creation != "allocate" and not windows_over_user_memory:
        with pytest.raises(
            _core.UsageError, match="cannot create a window over user memory.*use -w allocate"
        ) as caught:
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


def receivers(test: str, sync: str) -> set:
    """The ranks where data lands: the target of PUT, the origin of GET,
    both in put_bibw and in the latency ping-pong of active target."""
    if test == "put_bibw" or (test.endswith("latency") and sync in ("pscw", "fence")):
        return {0, 1}
    return {1} if test.startswith("put_") else {0}


@pytest.mark.ranks(2)
@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("window_creation", ["create", "dynamic"])
@pytest.mark.parametrize("test,sync", CASES)
def test_each_operation_lands_at_its_own_offset(comm, test, sync, window_creation, mem, windows_over_user_memory):
    """A receive fault sees every slot where data landed (the window's
    memory for PUT, the local buffer for GET), in slot order, W per
    iteration: slot j lies at offset j * size and holds the peer's pattern
    of slot j in that iteration, so the W operations went to W offsets."""
    if not windows_over_user_memory:
        pytest.skip("this MPI cannot make windows over user memory, and the fault needs such a window")
    sizes, iterations, warmup = [8, 4096 + 4], 2, 1
    width, peer = slots(test), 1 - comm.rank
    seen = []

    def inspect(buffer, offset, nbytes):
        seen.append((offset, nbytes, buffer.read(nbytes, offset)))

    with receive_fault(comm, inspect) as faulty:
        result = onesided.run(
            test,
            faulty,
            mem=mem,
            sync=sync,
            window_creation=window_creation,
            sizes=sizes,
            iterations=iterations,
            warmup=warmup,
            window=WINDOW,
            validate=True,
            compare_put=False,
        )
    expected = []
    if comm.rank in receivers(test, sync):
        for size in sizes:
            for iteration in range(warmup + iterations):
                for slot in range(width):
                    pattern = bytes(
                        _core.testing.pattern_byte(i, size, iteration, peer * width + slot) for i in range(size)
                    )
                    expected.append((slot * size, size, pattern))
    landed = [(offset, nbytes, bytes(np.asarray(data, dtype=np.uint8))) for offset, nbytes, data in seen]
    assert_all(comm, landed == expected, f"{len(landed)} slots seen, {len(expected)} expected")
    assert all(row["validation"] == "pass" for row in result.rows)


FAULTS = ("misplaced", "missing")


@pytest.mark.ranks(2)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("test", ["put_bw", "get_bw", "put_bibw"])
def test_a_misplaced_or_missing_slot_fails_validation(comm, test, mem, fault, windows_over_user_memory):
    """After the operations landed, a fault copies slot 0 over slot 1 (as if
    two operations had gone to one offset) or zeroes the last slot (as if
    its operation never came): the size fails, and the sweep stops there."""
    if not windows_over_user_memory:
        pytest.skip("this MPI cannot make windows over user memory, and the fault needs such a window")

    def corrupt(buffer, offset, nbytes):
        if fault == "misplaced" and offset == nbytes:
            buffer.write(buffer.read(nbytes, 0), offset)
        if fault == "missing" and offset == (WINDOW - 1) * nbytes:
            buffer.write(np.zeros(nbytes, dtype=np.uint8), offset)

    with receive_fault(comm, corrupt) as faulty:
        result = onesided.run(test, faulty, mem=mem, window_creation="create", compare_put=False, **FAST)
    assert len(result.rows) == 1
    row = result.rows[0]
    assert row["validation"] == "fail"
    # 1-byte slots: a byte of the copied or zeroed slot may match by chance, not all of every iteration's.
    assert 0 < row["validation_errors"] <= len(receivers(test, "fence")) * 4 * row["size"]


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", onesided.TESTS)
def test_corruption_after_the_operation_fails_validation(comm, test, windows_over_user_memory):
    """A fault adds one to a byte where data landed (the window made with
    -w create for PUT, the local device buffer for GET)."""
    if not windows_over_user_memory:
        pytest.skip("this MPI cannot MPI_Win_create over user memory, and the fault needs such a window")

    def corrupt(buffer, offset, nbytes):
        byte = buffer.read(1, offset + nbytes // 2)
        buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)

    with receive_fault(comm, corrupt) as faulty:
        result = onesided.run(test, faulty, mem="D", window_creation="create", compare_put=False, **FAST)
    assert result.rows[0]["validation"] == "fail"
    assert len(result.rows) == 1


@pytest.mark.ranks(2)
@pytest.mark.parametrize("sync", ["lock", "flush", "flush_local", "lock_all"])
def test_put_bibw_refuses_passive_target(comm, sync):
    with pytest.raises(_core.UsageError, match=f"osu put_bibw takes -s pscw or fence .*, not -s {sync}$") as caught:
        onesided.put_bibw(comm, sizes=[8], sync=sync)
    assert caught.value.agreed


@pytest.mark.ranks(2)
def test_unknown_choices_name_omb_choices(comm):
    with pytest.raises(
        _core.UsageError,
        match="unknown synchronisation 'flushall'; choose flush, lock, " "flush_local, lock_all, pscw, fence",
    ) as caught:
        onesided.put_bw(comm, sizes=[8], sync="flushall")
    assert caught.value.agreed
    with pytest.raises(
        _core.UsageError, match="unknown window creation 'shared'; choose allocate, create, " "dynamic"
    ) as caught:
        onesided.put_bw(comm, sizes=[8], window_creation="shared")
    assert caught.value.agreed


@pytest.mark.ranks(3, 4)
@pytest.mark.parametrize("test", onesided.TESTS)
def test_one_sided_tests_refuse_other_rank_counts(comm, test):
    ranks = comm.Get_size()
    with pytest.raises(_core.UsageError, match=f"needs exactly 2 ranks, and this run has {ranks}") as caught:
        onesided.run(test, comm, sizes=[8])
    assert caught.value.agreed


def test_defaults_are_omb_s():
    """OMB 7.4: MPI_Win_allocate and MPI_Win_flush; put_bibw MPI_Win_post/start/complete/wait."""
    assert {test: _core.OneSidedOptions(test=test, sync=None).sync for test in onesided.TESTS} == {
        "put_latency": "flush",
        "get_latency": "flush",
        "put_bw": "flush",
        "get_bw": "flush",
        "put_bibw": "pscw",
    }
    assert onesided.SYNC_CHOICES["put_bibw"] == ("pscw", "fence")
    assert all(set(onesided.SYNC_CHOICES[test]) == set(onesided.SYNC) for test in onesided.TESTS if test != "put_bibw")
    assert onesided.ITERATIONS["put_latency"] == (10000, 100, 1000, 10)
    assert onesided.ITERATIONS["put_bw"] == (100, 10, 20, 2)


def test_curve_finds_half_and_saturation_sizes():
    rows = [
        {"size": s, "bandwidth": b} for s, b in [(1, 1.0), (2, 40.0), (4, 60.0), (8, 96.0), (16, 100.0), (32, 99.0)]
    ]
    assert onesided.curve(rows) == {
        "peak_bandwidth": 100.0,
        "peak_size": 16,
        "half_bandwidth_size": 4,
        "saturation_95_size": 8,
    }


def test_overhead_is_slower_time_or_missing_bandwidth():
    # The FSHMEM paper: GET 20% below PUT at 2 KB.
    assert onesided.overhead(0.8, 1.0, latency=False) == pytest.approx(0.2)
    assert onesided.overhead(1.25e-6, 1.0e-6, latency=True) == pytest.approx(0.25)
