"""A real Slurm cluster of one or two nodes in a test's folder: munged,
slurmctld and a slurmd per node started in the foreground (no systemd),
with a private SLURM_CONF and ports of their own, and stopped by PID.

Two slurmd on one host are two nodes to Slurm: each listens on its own
port, keeps its spool in its own folder (SlurmdSpoolDir and TmpFS
.../%n) and is started with -N NAME. Open MPI as Debian builds it reaches
Slurm through PMIx only: srun --mpi=pmix.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "salloc", "scancel", "sinfo")
CPUS = os.cpu_count() or 1


def missing() -> list[str]:
    """The Slurm and MUNGE programs this machine lacks (scripts/setup.sh installs them)."""
    return [name for name in DAEMONS if shutil.which(name) is None and not os.path.exists(f"/usr/sbin/{name}")]


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for each in sockets:
            each.bind(("127.0.0.1", 0))
        return [each.getsockname()[1] for each in sockets]
    finally:
        for each in sockets:
            each.close()


def _program(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


class Cluster:
    """munged, slurmctld and `nodes` slurmd (n1, n2) in `folder`; env: the
    variables a command needs to reach it (SLURM_CONF, root for Open MPI)."""

    def __init__(self, folder: Path, nodes: int, path: str):
        self.folder, self.nodes = folder, [f"n{index + 1}" for index in range(nodes)]
        self.processes: list[subprocess.Popen] = []
        (folder / "munge").mkdir(parents=True)
        (folder / "state").mkdir()
        for node in self.nodes:
            (folder / node).mkdir()
        key = folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = folder / "munge" / "munge.socket"
        controller, *node_ports = _free_ports(1 + nodes)
        host = socket.gethostname()
        lines = [
            "ClusterName=fpgacommtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={controller}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self.socket}",
            "CredType=cred/munge",
            f"StateSaveLocation={folder}/state",
            f"SlurmdSpoolDir={folder}/%n",
            f"TmpFS={folder}/%n",
            f"SlurmctldPidFile={folder}/slurmctld.pid",
            f"SlurmdPidFile={folder}/%n/slurmd.pid",
            f"SlurmctldLogFile={folder}/slurmctld.log",
            f"SlurmdLogFile={folder}/%n/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/affinity",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "ReturnToService=2",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/builtin",
            "InactiveLimit=0",
            "KillWait=5",
            "MailProg=/bin/true",
        ]
        # Each node has the host's cores: Slurm binds a task to its own.
        lines += [
            f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={CPUS} "
            f"CoresPerSocket={CPUS} ThreadsPerCore=1 State=UNKNOWN"
            for node, port in zip(self.nodes, node_ports)
        ]
        lines.append(
            f"PartitionName=debug Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP "
            "OverSubscribe=YES"
        )
        self.conf = folder / "slurm.conf"
        self.conf.write_text("\n".join(lines) + "\n")
        # Ranks on two nodes of one host would each take the other for a
        # remote peer, yet both make Open MPI's shared-memory segments in the
        # one /dev/shm, named alike, and crash in them (seen in the vader
        # transport): the cluster's ranks talk over TCP, as between real nodes.
        self.env = {
            **os.environ,
            "SLURM_CONF": str(self.conf),
            "PATH": path,
            "OMPI_MCA_btl": "self,tcp",
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        }
        for name in [
            variable for variable in self.env if variable.startswith(("SLURM_", "SLURMD_")) and variable != "SLURM_CONF"
        ]:
            del self.env[name]  # a test run inside someone's job must not join it

    def start(self) -> Cluster:
        folder = self.folder
        self._start(
            "munged",
            [
                "munged",
                "-F",
                "-f",
                f"--socket={self.socket}",
                f"--key-file={folder}/munge/munge.key",
                f"--pid-file={folder}/munge/munged.pid",
                f"--log-file={folder}/munged.log",
                f"--seed-file={folder}/munge/seed",
            ],
        )
        self._wait(lambda: self.socket.exists(), "munged's socket")
        self._start("slurmctld", ["slurmctld", "-D", "-i"])
        for node in self.nodes:
            self._start(f"slurmd-{node}", ["slurmd", "-D", "-N", node])
        self._wait(lambda: self._idle() == len(self.nodes), f"{len(self.nodes)} idle nodes")
        return self

    def _start(self, label: str, command: list[str]) -> None:
        with open(self.folder / f"{label}.out", "wb") as output:
            self.processes.append(
                subprocess.Popen(
                    [_program(command[0]), *command[1:]],
                    env=self.env,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )

    def _idle(self) -> int:
        states = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%t"], env=self.env, capture_output=True, text=True, timeout=30
        ).stdout.split()
        return states.count("idle")

    def _wait(self, ready, what: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not ready():
            ended = [process.args[0] for process in self.processes if process.poll() is not None]
            if ended or time.monotonic() > deadline:
                logs = "\n".join(
                    f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}"
                    for path in sorted(self.folder.glob("*.out"))
                )
                raise RuntimeError(
                    f"Slurm test cluster: no {what} ({'ended: ' + ', '.join(ended) if ended else 'timed out'})"
                    f"\n{logs}"
                )
            time.sleep(0.2)

    def run(self, command: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """`command` (a shell line, as a user types it) against this cluster."""
        return subprocess.run(
            command, shell=True, env=self.env, cwd=cwd or self.folder, capture_output=True, text=True, timeout=timeout
        )

    def stop(self) -> None:
        """Cancels what still runs, then ends the daemons by PID, slurmd first."""
        if self.processes:
            subprocess.run(["scancel", "--partition=debug"], env=self.env, capture_output=True, timeout=30)
        for process in reversed(self.processes):
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        self.processes = []
