"""Processes seen through /proc, for the tests that signal or kill ranks."""

from fpgacomm.runtime.launcher import running  # noqa: F401 (the tests' too)


def rank_pids(mpirun_pid: int) -> dict[int, int]:
    """rank -> pid of the MPI ranks an mpirun started on this host: its
    children that carry OMPI_COMM_WORLD_RANK (none yet while it starts them)."""
    with open(f"/proc/{mpirun_pid}/task/{mpirun_pid}/children") as children:
        pids = [int(pid) for pid in children.read().split()]
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                variables = dict(item.split(b"=", 1) for item in environ.read().split(b"\0") if b"=" in item)
        except FileNotFoundError:
            continue
        if b"OMPI_COMM_WORLD_RANK" in variables:
            found[int(variables[b"OMPI_COMM_WORLD_RANK"])] = pid
    return found
