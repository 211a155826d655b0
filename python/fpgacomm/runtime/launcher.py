"""The MPI launcher's waiting, when a host stops answering.

A rank that ends abnormally (its time limit, an interrupt, an abort) leaves
Open MPI to end the job: mpirun tells the daemon (orted) on each host to
end its ranks and waits for every daemon to say so. A daemon behind a link
that went down never says so, and Open MPI 4.1 has no limit on that wait:
mpirun hangs, and so does the cut-off daemon, which cannot reach mpirun
either (it ignores SIGTERM while it tries).

outlive_launcher() starts, beside the ending rank, a small detached
process (this file run as a program) that waits WAIT seconds for the
rank's parent (mpirun on mpirun's host, orted on the others) to end by
itself, and otherwise ends it:

- mpirun: the daemons it still waits for are its children that launch them
  (ssh, or the plm_rsh_agent), one per remote host, whose command line
  names the host; it says which hosts stopped answering, ends those, then
  mpirun itself (SIGKILL: it was asked once already) if it still waits;
- orted: the daemon of a host cut off from mpirun; it is ended, with its
  own children.

Nothing is done where the parent is no Open MPI launcher (a plain process,
srun), or where it ends by itself: a job whose hosts all answer never
meets this.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

# Seconds the launcher has to end the job by itself after a rank ended.
WAIT = 3.0
# Seconds between asking a process to end (SIGTERM) and ending it (SIGKILL).
KILL_AFTER = 1.5
MPIRUN_NAMES = ("mpirun", "mpiexec", "orterun")
DAEMON_NAMES = ("orted",)
SHELLS = ("sh", "bash", "dash")


def outlive_launcher() -> None:
    """Starts the watcher of this rank's launcher (see the module), when the
    parent is Open MPI's mpirun or orted. Call it just before the rank ends
    abnormally."""
    parent = os.getppid()
    if process_name(parent) not in MPIRUN_NAMES + DAEMON_NAMES:
        return
    try:
        # This file alone, by path, without site packages: it needs the standard library only, and starts
        # fast on a loaded host.
        # Without Open MPI's variables: the watcher is no rank of the job, and
        # whatever finds a job's ranks by them (OMPI_COMM_WORLD_RANK) must not take it for one.
        environment = {key: value for key, value in os.environ.items() if not key.startswith(("OMPI_", "PMIX_"))}
        subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, str(parent), str(os.getpid())],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env=environment,
        )
    except OSError:
        pass  # the rank ends all the same; the launcher may then wait


def process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return ""


def process_arguments(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return [word.decode(errors="replace") for word in cmdline.read().split(b"\0") if word]
    except OSError:
        return []


def running(pid: int) -> bool:
    """Whether process pid still runs (a zombie has ended; only its exit status waits to be read)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(child) for child in children.read().split()]
    except OSError:
        return []


def _ended_within(pids: list, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(running(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _end(pids: list) -> None:
    """SIGTERM, then SIGKILL to those still running KILL_AFTER seconds later."""
    for number in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass
        if _ended_within(pids, KILL_AFTER):
            return


def launched_host(arguments: list) -> str:
    """The host a remote launcher's command line names: `ssh [-x ...] HOST
    orted ...` or `AGENT HOST orted ...` (a script: `sh AGENT HOST ...`); "" if none."""
    words = arguments[1:]
    if arguments and os.path.basename(arguments[0]) in SHELLS and words and not words[0].startswith("-"):
        words = words[1:]  # the agent script the shell runs
    host = next((word for word in words if not word.startswith("-")), "")
    return "" if "orted" in host or " " in host else host


def _say(text: str) -> None:
    try:
        print(f"fpgacomm: {text}", file=sys.stderr, flush=True)
    except OSError:
        pass  # nobody reads any more: the ending goes on


def main(parent: int, rank_pid: int) -> None:
    if _ended_within([parent], WAIT):
        return
    if process_name(parent) in DAEMON_NAMES:
        # Seen by the user only where mpirun's host still answers: mpirun then waits for another host's daemon,
        # a wait no process of this host can end (mpirun runs elsewhere, on a host without ranks).
        _say(
            f"Open MPI's daemon on this host (orted, pid {parent}) still runs {WAIT:g} s after a rank ended: mpirun, "
            "on another host, waits for a host that stopped answering; ending this daemon and its ranks. mpirun "
            "ends once Open MPI finds that host lost: within seconds with --mca oob_tcp_keepalive_time 2 --mca "
            "oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3 (docs/METHODS.md), else after minutes"
        )
        _end(_children(parent) + [parent])
        return
    launchers = [
        pid for pid in _children(parent) if pid != rank_pid and "OMPI_COMM_WORLD_RANK" not in _environment(pid)
    ]
    if not launchers:
        return  # a job of this host alone: mpirun waits for nobody, only its ranks, which are ending
    hosts = [launched_host(process_arguments(pid)) or f"pid {pid}" for pid in launchers]
    _say(
        f"mpirun still waits {WAIT:g} s after a rank ended: its daemons on {', '.join(hosts)} "
        "stopped answering; ending their launchers, then mpirun if it still waits"
    )
    _end(launchers)
    if not _ended_within([parent], KILL_AFTER):
        # Asked already (the rank's end), mpirun would wait again on SIGTERM, then crash in PMIx_Finalize.
        os.kill(parent, signal.SIGKILL)


def _environment(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return environ.read().decode(errors="replace")
    except OSError:
        return ""


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
