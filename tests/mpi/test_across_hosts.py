"""Every benchmark family across two hosts with two ranks on each (ranks 0
and 1 on the first, 2 and 3 on the second), host and device buffers,
validation on wherever the test has it. tests/test_two_hosts.py starts this
module under mpirun on the two-host test bed (scripts/two_hosts.sh); the
text, figures, device maps and faults it checks from outside.

Every Result must name both hosts, the ranks on each and scale-out."""

import pytest
from conftest import assert_all
from fpgacomm import _core, beff, collectives, devbw, gather, onesided, osu, overhead, schedules
from fpgacomm.runtime.devices import DeviceOptions

# Two sizes: one message of a few bytes and one past OMB's 8 KiB switch to
# fewer iterations (and, for device buffers, past one staging chunk).
SIZES = [8, 70000]
FAST = dict(sizes=SIZES, iterations=3, warmup=1, validate=True)
KINDS = ("H", "D")
OTHER_HOST_ROOT = 3  # rank 0 times on the first host; the root sits on the second


@pytest.fixture(scope="module")
def hosts(comm):
    """Each rank's host; the module needs ranks 0 and 1 on one host, 2 and 3 on another."""
    names = _core.host_names(comm)
    assert_all(
        comm,
        len(names) == 4 and names[0] == names[1] != names[2] == names[3],
        f"needs mpirun -np 4 with two ranks on each of two hosts (--map-by slot), got {names}",
    )
    return names


@pytest.fixture(scope="module")
def pair(comm, hosts):
    """Ranks 0 and 2, or 1 and 3: a pair across the hosts. Both pairs run
    every two-rank test at once."""
    sub = comm.Split(comm.Get_rank() % 2, comm.Get_rank())
    yield sub
    sub.Free()


def check_placement(result, hosts: list, ranks: list) -> None:
    """The Result of a run over world ranks `ranks` names their hosts, the
    ranks on each and scale-out."""
    env = result.env
    mine = [hosts[rank] for rank in ranks]
    per_host = {host: mine.count(host) for host in dict.fromkeys(mine)}
    assert env["rank_hosts"] == mine and env["hosts"] == list(per_host)
    assert env["ranks_per_node"] == per_host and env["nodes"] == 2 and env["scale"] == "scale-out"


def pair_ranks(comm) -> list:
    return [comm.Get_rank() % 2, comm.Get_rank() % 2 + 2]


def all_pass(result) -> bool:
    return bool(result.rows) and all(
        row["validation"] == "pass" and row["validation_errors"] == 0 for row in result.rows
    )


@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
@pytest.mark.parametrize("send_kind,recv_kind", [("H", "H"), ("D", "D"), ("H", "D")])
def test_point_to_point_across_hosts(comm, pair, hosts, test, send_kind, recv_kind):
    result = osu.run(test, pair, mem=(send_kind, recv_kind), window=4, **FAST)
    assert_all(comm, all_pass(result) and [row["size"] for row in result.rows] == SIZES, f"{test}: {result.rows}")
    check_placement(result, hosts, pair_ranks(comm))


@pytest.mark.parametrize("test", ["multi_lat", "mbw_mr"])
@pytest.mark.parametrize("mem", KINDS)
def test_every_pair_crosses_the_hosts(comm, hosts, test, mem):
    """Rank i pairs with i + N/2: 0 with 2 and 1 with 3, each across the hosts."""
    result = osu.run(test, comm, mem=(mem, mem), **({"window": 4} if test == "mbw_mr" else {}), **FAST)
    assert_all(comm, all_pass(result), f"{test}: {result.rows}")
    assert result.params["pairs"] == 2
    check_placement(result, hosts, [0, 1, 2, 3])


@pytest.mark.parametrize("mem", KINDS)
@pytest.mark.parametrize("op", collectives.TESTS)
def test_collectives_with_the_root_on_the_other_host(comm, hosts, op, mem):
    root = OTHER_HOST_ROOT if op in collectives.ROOTED else None
    result = collectives.run(op, comm, mem=mem, root=root, **FAST)
    assert_all(comm, all_pass(result), f"{op}: {result.rows}")
    assert result.params["root"] == root and hosts[OTHER_HOST_ROOT] != hosts[0]
    assert (result.params["nodes"], result.params["ranks_per_node"], result.params["scale"]) == (2, 2, "scale-out")
    check_placement(result, hosts, [0, 1, 2, 3])


@pytest.mark.parametrize("mem", KINDS)
@pytest.mark.parametrize("test", onesided.TESTS)
def test_one_sided_across_hosts(comm, pair, hosts, test, mem):
    result = onesided.run(test, pair, mem=mem, window=4, **FAST)
    assert_all(comm, all_pass(result), f"{test}: {result.rows}")
    assert (result.params["nodes"], result.params["ranks_per_node"], result.params["scale"]) == (2, 1, "scale-out")
    check_placement(result, hosts, pair_ranks(comm))


@pytest.mark.parametrize("comm_type", ["cpu", "pcie", "kernel"])
def test_beff_ring_across_hosts(comm, hosts, comm_type):
    result = beff.run(
        comm,
        comm_type=comm_type,
        max_size=6,
        repetitions=1,
        upper=16,
        lower=2,
        offset=2,
        decrease=2,
        target_time=0.002,
        validation_iterations=1,
        ring_order="natural",
    )
    assert_all(comm, all_pass(result), f"beff {comm_type}: {result.rows}")
    assert {timing["host"] for timing in result.params["rank_timings"]} == set(hosts)
    check_placement(result, hosts, [0, 1, 2, 3])


def test_beff_iec_on_the_emulator_is_refused_across_hosts(comm, hosts):
    """Intel's FPGA emulator joins channels by named pipes of one host."""
    try:
        _core.select_devices("", "", "fpga")
    except _core.UsageError:
        pytest.skip("no FPGA platform here (scripts/setup.sh registers Intel's FPGA emulator)")
    with pytest.raises(_core.UsageError) as caught:
        beff.run(comm, comm_type="iec", max_size=2, repetitions=1, device=DeviceOptions(type="fpga"))
    message = str(caught.value)
    assert "named pipes, which cannot cross hosts" in message
    assert f"run on 2 hosts ({', '.join(sorted(set(hosts)))})" in message
    assert_all(comm, len(set(comm.allgather(message))) == 1, "every rank has the same message")


@pytest.mark.parametrize("schedule", schedules.NAMES)
def test_gather_schedules_with_the_root_on_the_other_host(comm, hosts, schedule):
    result = gather.run(
        comm, schedule=schedule, mem="D", sizes=[1000, 70001], iterations=2, warmup=1, root=OTHER_HOST_ROOT
    )
    stages = len(schedules.schedule(schedule, 4, 0, root=OTHER_HOST_ROOT).stages)
    assert_all(
        comm, all_pass(result) and all(row["stages"] == stages for row in result.rows), f"{schedule}: {result.rows}"
    )
    check_placement(result, hosts, [0, 1, 2, 3])


@pytest.mark.parametrize("collective", ["scatter", "allgather"])
def test_the_other_gather_collectives_across_hosts(comm, hosts, collective):
    result = gather.run(
        comm,
        schedule="tree",
        collective=collective,
        mem="H",
        sizes=[1000],
        iterations=2,
        warmup=1,
        root=OTHER_HOST_ROOT,
    )
    assert_all(comm, all_pass(result), f"{collective}: {result.rows}")
    check_placement(result, hosts, [0, 1, 2, 3])


def test_overheads_across_hosts(comm, pair, hosts):
    result = overhead.run(pair, sizes=[8, 70000], iterations=5, warmup=1)
    assert_all(
        comm,
        all(row["send_overhead_min"] > 0 and row["recv_overhead_min"] > 0 for row in result.rows),
        f"overhead: {result.rows}",
    )
    check_placement(result, hosts, pair_ranks(comm))


def test_device_copies_on_both_hosts(comm, hosts):
    result = devbw.run(comm, sizes=[8, 70000], iterations=2, warmup=1)
    assert_all(
        comm,
        sorted({row["rank"] for row in result.rows}) == [0, 1, 2, 3]
        and all(row["bandwidth"] > 0 for row in result.rows),
        f"devbw: {result.rows}",
    )
    check_placement(result, hosts, [0, 1, 2, 3])
