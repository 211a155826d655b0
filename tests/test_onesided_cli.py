"""fpgacomm osu for the one-sided tests under mpirun: OMB's window creation and synchronisation choices."""

import pytest
from processes import fpgacomm

pytestmark = pytest.mark.mpi

CALLS = {
    "lock": "MPI_Win_lock/unlock",
    "flush": "MPI_Win_flush",
    "flush_local": "MPI_Win_flush_local",
    "lock_all": "MPI_Win_lock_all/unlock_all",
    "pscw": "MPI_Win_post/start/complete/wait",
    "fence": "MPI_Win_fence",
}


def test_defaults_are_omb_s_and_every_sync_prints_its_calls():
    for test, sync in [
        ("put_bw", None),
        ("put_bibw", None),
        ("get_latency", "flush_local"),
        ("put_bw", "LOCK_ALL"),
        ("get_bw", "pscw"),
        ("put_bibw", "fence"),
    ]:
        args = ["osu", test, "-m", "8:1K", "-i", "3", "-x", "1", "-c"] + (["-s", sync] if sync else [])
        run = fpgacomm(*args, ranks=2)
        assert run.returncode == 0, (args, run.stderr)
        expected = sync.lower() if sync else ("pscw" if test == "put_bibw" else "flush")
        assert "# Window creation: MPI_Win_allocate" in run.stdout
        assert f"# Synchronization: {CALLS[expected]}" in run.stdout, run.stdout
        rows = [line.split() for line in run.stdout.splitlines() if line[:1].isdigit()]
        assert [int(row[0]) for row in rows] == [8, 16, 32, 64, 128, 256, 512, 1024]
        assert all(row[2] == "Pass" for row in rows)


def test_dynamic_window_prints_its_creation_under_omb_s_title():
    run = fpgacomm("osu", "get_latency", "-w", "dynamic", "-m", "8:8", "-i", "3", "-c", ranks=2)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# OSU MPI_Get latency Test v")
    assert "# Window creation: MPI_Win_create_dynamic" in run.stdout
    run = fpgacomm("osu", "put_bw", "--mem", "D", "-m", "8:8", "-i", "3", "-W", "2", ranks=2)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# OSU MPI_Put-OpenCL Bandwidth Test v")


def test_a_sync_the_test_does_not_take_is_one_message_and_status_2():
    for sync in ("lock", "flush", "flush_local", "lock_all"):
        run = fpgacomm("osu", "put_bibw", "-s", sync, "-m", "8", ranks=2)
        message = f"osu put_bibw takes -s pscw or fence (both ranks put at once), as OMB, not -s {sync}"
        assert run.returncode == 2, run.stderr
        assert run.stderr.count(message) == 1, run.stderr
        assert "Traceback" not in run.stderr and not run.stdout
