"""Tests that run inside every rank of an mpirun (tests/test_mpi.py starts them).

Pass/fail is collective: a check that fails on one rank fails on all, so no
rank runs ahead into the next test's communication and hangs.
"""

import contextlib

import pytest
from fpgacomm import _core, mpi


@pytest.fixture(scope="session")
def comm():
    return mpi.world()


@pytest.fixture(scope="session")
def windows_over_user_memory(comm) -> bool:
    """Whether this MPI can MPI_Win_create over memory it did not allocate
    (Open MPI 4.1 on shared memory without single copy cannot)."""
    from mpi4py import MPI

    try:
        window = MPI.Win.Create(bytearray(8), 1, comm=comm)
        window.Free()
        works = True
    except MPI.Exception:
        works = False
    return all(comm.allgather(works))


def assert_all(comm, ok: bool, message: str = "") -> None:
    """Fails on every rank when `ok` is false on any rank."""
    failing = comm.allgather(bool(ok))
    bad = [rank for rank, good in enumerate(failing) if not good]
    assert not bad, f"failed on ranks {bad}: {message}"


@contextlib.contextmanager
def receive_fault(comm, fault):
    """A duplicate of comm over which this rank's benchmark runs call
    fault(buffer, offset, nbytes) on each region their validation reads,
    unknown to the validation code (None: this rank's data stays intact).
    Collective; the duplicate is freed after."""
    faulty = comm.Dup()
    try:
        if fault is not None:
            _core.testing.attach_receive_fault(faulty, fault)
        yield faulty
    finally:
        faulty.Free()


def pytest_collection_modifyitems(config, items):
    """Skips tests written for another rank count, saying so."""
    size = mpi.world().Get_size()
    for item in items:
        marker = item.get_closest_marker("ranks")
        if marker and size not in marker.args:
            item.add_marker(pytest.mark.skip(reason=f"needs {marker.args} ranks, this run has {size}"))


def pytest_configure(config):
    config.addinivalue_line("markers", "ranks(*counts): run only under these rank counts")
