"""Gather schedules on real ranks under mpirun -np 2, 3 and 4: every schedule
with host and device buffers, blocks checked at the end, corruption caught,
both control modes, the memory check before any transfer."""

import numpy as np
import pytest
from conftest import assert_all, receive_fault
from fpgacomm import _core, gather

# Odd sizes, so a block landing one position off cannot match.
SIZES = [1000, 70001]
FAST = dict(sizes=SIZES, iterations=2, warmup=1)


def check_rows(comm, result, name, collective="gather"):
    nodes = comm.Get_size()
    stages = len(gather.schedule(name, nodes, 0, collective=collective).stages)
    assert [row["size"] for row in result.rows] == SIZES
    for row in result.rows:
        assert row["validation"] == "pass" and row["validation_errors"] == 0
        assert row["schedule"] == name and row["nodes"] == nodes and row["stages"] == stages
        assert row["time"] > 0 and row["throughput"] == pytest.approx((nodes - 1) * row["size"] / row["time"])
        key = f"{nodes}/{row['size']}"
        for phase in ("setup", "transfer", "barrier"):
            per_stage = result.samples[f"{key}/{phase}"]
            assert len(per_stage) == stages and row[phase] == pytest.approx(sum(per_stage))
        assert len(result.samples[f"{key}/time"]) == row["iterations"] == 2
        assert len(result.samples[f"{key}/stage"]) == 2 * stages


@pytest.mark.parametrize("mem", ["H", "D"])
@pytest.mark.parametrize("name", gather.NAMES)
def test_every_schedule_delivers_every_block_intact(comm, name, mem):
    result = gather.run(comm, schedule=name, mem=mem, **FAST)
    check_rows(comm, result, name)
    assert result.benchmark == "gather" and result.params["mem"] == mem
    assert result.params["route"] == "direct" if mem == "H" else result.params["route"] in ("staged", "mapped")


@pytest.mark.parametrize("collective", ["scatter", "allgather"])
@pytest.mark.parametrize("name", gather.NAMES)
def test_scatter_and_allgather_leave_the_blocks_where_they_belong(comm, name, collective):
    root = comm.Get_size() - 1  # not 0, so no test passes only because the root is 0
    result = gather.run(comm, schedule=name, mem="D", collective=collective, root=root, **FAST)
    check_rows(comm, result, name, collective)
    assert result.params["collective"] == collective and result.params["root"] == root


@pytest.mark.parametrize("name", ["ring", "tree", "mpi"])
def test_local_control_has_no_barrier_and_barrier_control_has_one(comm, name):
    local = gather.run(comm, schedule=name, mem="D", control="local", **FAST)
    barrier = gather.run(comm, schedule=name, mem="D", control="barrier", **FAST)
    check_rows(comm, local, name)
    check_rows(comm, barrier, name)
    assert all(row["barrier"] == 0 for row in local.rows)
    assert all(row["barrier"] > 0 for row in barrier.rows)
    assert local.params["control"] == "local"


def corrupting(fault_kind):
    """Receive faults: add one to a byte of every checked block, or blank it
    (a block that never came)."""

    def corrupt(buffer, offset, nbytes):
        if nbytes == 0:
            return
        if fault_kind == "flip":
            byte = buffer.read(1, offset + nbytes // 2)
            buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)
        else:
            buffer.write(np.zeros(nbytes, dtype=np.uint8), offset)

    return corrupt


@pytest.mark.parametrize("fault", ["flip", "blank"])
@pytest.mark.parametrize("name", gather.NAMES)
def test_corrupted_blocks_fail_validation(comm, name, fault):
    with receive_fault(comm, corrupting(fault)) as faulty:
        result = gather.run(faulty, schedule=name, mem="D", **FAST)
    assert result.rows[0]["validation"] == "fail" and result.rows[0]["validation_errors"] > 0
    assert len(result.rows) == 1  # the sweep stops at the first failing size
    assert gather.failed_sizes(result) == [SIZES[0]]


@pytest.mark.parametrize("name", gather.NAMES)
def test_validation_reads_the_blocks_once_per_size_after_the_timed_iterations(comm, name):
    # Validation is one untimed iteration of its own (src/bench/gather.cpp): the timed iterations leave the
    # blocks alone, so that a validated run is timed as a plain one.
    read = []
    with receive_fault(comm, lambda buffer, offset, nbytes: read.append((offset, nbytes))) as watched:
        result = gather.run(watched, schedule=name, mem="H", sizes=SIZES, iterations=3, warmup=1)
    _, checks = gather.expected_blocks("gather", comm.Get_size(), 0, comm.Get_rank())
    expected = [(position * size, size) for size in SIZES for position in checks]
    assert_all(comm, read == expected, f"the validation read {read}, expected {expected}")
    assert [row["iterations"] for row in result.rows] == [3, 3]
    assert all(row["validation"] == "pass" for row in result.rows)


def test_zero_byte_stages_and_the_barrier_reference(comm):
    result = gather.run(comm, schedule="ring", mem="D", sizes=[0], iterations=5, warmup=1, barrier_reference=7)
    row = result.rows[0]
    assert row["size"] == 0 and row["throughput"] == 0 and row["validation"] == "pass"
    assert len(result.samples["barrier_reference"]) == 7
    assert all(t > 0 for t in result.samples["barrier_reference"])


def test_a_size_beyond_the_device_is_refused_before_any_transfer(comm):
    received = []
    with receive_fault(comm, lambda buffer, offset, nbytes: received.append(nbytes)) as faulty:
        with pytest.raises(_core.UsageError, match="exceed the device's memory") as caught:
            gather.run(faulty, schedule="tree", mem="D", sizes=[1024, 1 << 42], iterations=1)
    assert caught.value.agreed
    assert "use --sizes up to" in str(caught.value)
    assert_all(comm, received == [], f"transfers ran before the memory check: {received}")


@pytest.mark.parametrize(
    "options,message",
    [
        (dict(control="global"), "unknown control 'global'; choose barrier"),
        (dict(schedule="star"), "unknown schedule 'star'"),
        (dict(ports=3), "3 ports per node"),
        (dict(virtual_ports=3), "3 virtual ports per port"),
        (dict(collective="reduce"), "unknown collective 'reduce'"),
        (dict(root=99), "root 99"),
        (dict(sizes=[-1]), "gather: size per node -1; give whole bytes, 0 or more"),
        (dict(mem="Q"), "Q"),
        (dict(iterations=0), "iterations -i must be at least 1"),
    ],
)
def test_bad_parameters_are_one_agreed_usage_error(comm, options, message):
    with pytest.raises(_core.UsageError, match=message) as caught:
        gather.run(comm, **{"sizes": [8], **options})
    assert caught.value.agreed
