"""fpgacomm devbw on whatever OpenCL device comes first (PoCL on the development machine):
values, sizes, every rank in the JSON, the helpers the campaign uses, and clear errors."""

import os
import subprocess
import sys

import pytest
from fpgacomm import Result, _core, devbw

pytestmark = pytest.mark.mpi

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def fpgacomm(*args, ranks=None, timeout=300):
    command = [sys.executable, "-m", "fpgacomm", *args]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """One run of two ranks, 1 B .. 64 KiB, shared by the tests below."""
    path = tmp_path_factory.mktemp("devbw") / "devbw.json"
    run = fpgacomm("devbw", "-m", "1:64K", "-i", "5", "-x", "1", "-f", "--json", str(path), ranks=2)
    assert run.returncode == 0, run.stderr
    return run, Result.read_json(path)


def test_every_rank_size_direction_and_kind_is_measured(two_ranks):
    _, result = two_ranks
    sizes = [1 << n for n in range(17)]
    assert result.benchmark == "devbw" and result.params["sizes"] == sizes
    measured = {(row["rank"], row["size"], row["direction"], row["host_kind"]) for row in result.rows}
    assert measured == {
        (rank, size, direction, kind)
        for rank in (0, 1)
        for size in sizes
        for direction in ("h2d", "d2h")
        for kind in ("H", "H!")
    }
    assert len(result.rows) == len(measured)
    assert len(result.env["rank_devices"]) == 2 and all(result.env["rank_devices"])


def test_times_are_positive_and_bandwidth_is_size_over_time(two_ranks):
    _, result = two_ranks
    for row in result.rows:
        # The average of equal samples may round a unit in the last place
        # below them (timers tick in steps: equal samples are common on NVIDIA).
        rounding = 1 + 1e-12
        assert 0 < row["time_min"] <= row["time_avg"] * rounding and row["time_avg"] <= row["time_max"] * rounding, row
        # Event timers tick in steps (1 us on NVIDIA): a tiny copy may read 0.
        assert 0 <= row["device_time_min"] <= row["device_time_avg"] * rounding, row
        if row["size"] == 65536:
            assert row["device_time_avg"] > 0, row
        assert row["bandwidth"] == pytest.approx(row["size"] / row["time_avg"], rel=1e-12)
        assert row["bandwidth_max"] == pytest.approx(row["size"] / row["time_min"], rel=1e-12)
        if row["device_time_avg"] > 0:
            assert row["device_bandwidth"] == pytest.approx(row["size"] / row["device_time_avg"], rel=1e-12)
        else:
            assert row["device_bandwidth"] is None
        assert row["iterations"] == 5
        key = devbw.sample_key(row["rank"], row["direction"], row["host_kind"], row["size"], "host")
        assert len(result.samples[key]) == 5
        assert sum(result.samples[key]) / 5 == pytest.approx(row["time_avg"], rel=1e-12)


def test_the_copy_runs_inside_the_host_timed_call(two_ranks):
    # The event interval lies within the blocking call that the host clock
    # times, so per iteration the device time cannot exceed the host time.
    _, result = two_ranks
    for key, host in result.samples.items():
        if key.endswith(" host"):
            device = result.samples[key[: -len("host")] + "device"]
            assert all(d <= h for d, h in zip(device, host)), key


def test_rank_0_prints_every_ranks_omb_style_table(two_ranks):
    run, result = two_ranks
    assert run.stdout.count("# fpgacomm Device Copy Bandwidth Test") == 1
    lines = run.stdout.splitlines()
    sizes = [1 << n for n in range(17)]
    for rank in (0, 1):
        start = lines.index(f"# Rank {rank}: {result.env['rank_devices'][rank]}")
        header = lines[start + 1].split()
        assert header[:3] == ["#", "Size", "H->D(MB/s)"] and "D->H!(us)" in header and "H!->D" in header
        table = lines[start + 2 : start + 2 + len(sizes)]
        assert [int(line.split()[0]) for line in table] == sizes
        by_key = {(row["size"], row["direction"], row["host_kind"]): row for row in result.rows if row["rank"] == rank}
        # Host-clock columns (the second 4) are positive and this rank's;
        # bandwidths print 0.00 MB/s where a 1 B copy takes over 0.2 ms (a
        # busy machine), and the event-timer columns may read 0 for tiny
        # copies where the timer ticks in microseconds (NVIDIA).
        for size, line in zip(sizes, table):
            values = [float(value) for value in line.split()[1:]]
            assert len(values) == 12 and all(v > 0 for v in values[4:8]) and all(v >= 0 for v in values), line
            assert values[0] == pytest.approx(by_key[(size, "h2d", "H")]["bandwidth"] / 1e6, abs=0.006)


def test_round_trip_and_peak_bandwidth_read_the_rows(two_ranks):
    _, result = two_ranks
    one_byte = {
        (row["direction"]): row["time_avg"]
        for row in result.rows
        if row["rank"] == 1 and row["size"] == 1 and row["host_kind"] == "H!"
    }
    assert devbw.round_trip(result, rank=1) == one_byte["h2d"] + one_byte["d2h"]
    large = [
        row["bandwidth"]
        for row in result.rows
        if row["rank"] == 0 and row["direction"] == "d2h" and row["host_kind"] == "H" and row["size"] >= 1024
    ]
    assert devbw.peak_bandwidth(result, "d2h", host_kind="H", min_size=1024) == max(large)
    with pytest.raises(ValueError, match="no d2h H! rows of rank 0 at 1048576 B"):
        devbw.peak_bandwidth(result, "d2h", min_size=1 << 20)


def test_one_direction_and_kind_concurrently(tmp_path):
    path = tmp_path / "d2h.json"
    run = fpgacomm(
        "devbw", "H!", "--direction", "d2h", "--concurrent", "-m", "4K:4K", "-i", "3", "--json", str(path), ranks=2
    )
    assert run.returncode == 0, run.stderr
    result = Result.read_json(path)
    assert {(row["rank"], row["direction"], row["host_kind"], row["size"]) for row in result.rows} == {
        (0, "d2h", "H!", 4096),
        (1, "d2h", "H!", 4096),
    }
    assert result.params["concurrent"] is True


def test_default_sizes_stop_at_256_mib_or_what_the_device_allocates(tmp_path):
    path = tmp_path / "defaults.json"
    run = fpgacomm("devbw", "H!", "--direction", "h2d", "-i", "1", "-x", "0", "--json", str(path))
    assert run.returncode == 0, run.stderr
    first = _core.select_devices()[0]
    largest = min(256 << 20, 1 << (first.max_alloc_bytes.bit_length() - 1))
    sizes = Result.read_json(path).params["sizes"]
    assert sizes[0] == 1 and sizes[-1] == largest and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))


def test_errors_are_clear_and_leave_no_json(tmp_path):
    target = tmp_path / "out.json"
    too_large = 2 * max(info.max_alloc_bytes for info in _core.all_devices())
    cases = [
        (("D",), "host kinds must be among H (pageable) and H! (pinned), got ['D']"),
        (("X",), "host kinds must be among"),
        (("-m", "0"), "has MIN 1 above MAX 0"),
        (("-m", "1:2X"), "unknown suffix"),
        (("-i", "0"), "iterations -i must be at least 1"),
        (("-m", f"{too_large}:{too_large}", "-i", "1"), f"cannot copy {too_large} bytes on "),
    ]
    for args, message in cases:
        run = fpgacomm("devbw", *args, "--json", str(target), ranks=2)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.count(message) == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr
        assert not target.exists()
