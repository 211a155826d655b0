"""Where a run happened, recorded in every Result (its `env`), and the
state of the machine around it (CPU, cores, load, frequency governor)."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import sys

import numpy

from .. import _core
from .._core import __version__
from . import mpi
from .launcher import DAEMON_NAMES, MPIRUN_NAMES, process_arguments, process_name

# Open MPI's choice of how its shared memory copies a message between two ranks of a host: the
# parameter (read back through MPI's tool interface) and the variable that sets it (the environment's,
# or mpirun's --mca, which reaches the ranks as it).
SINGLE_COPY_PARAMETER = "btl_vader_single_copy_mechanism"
SINGLE_COPY_VARIABLE = f"OMPI_MCA_{SINGLE_COPY_PARAMETER}"
_RUNTIME_VARIABLES = (
    "FPGA_MAPPING",
    "POCL_MAX_PTHREAD_COUNT",
    "POCL_CACHE_DIR",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OCL_ICD_VENDORS",
    "OCL_ICD_FILENAMES",
    # Open MPI's transports and how its shared memory copies a message, where the launch's environment or
    # mpirun's --mca chooses them: a container image may set single copy to none (docs/PREDICTION.md).
    "OMPI_MCA_pml",
    "OMPI_MCA_btl",
    SINGLE_COPY_VARIABLE,
)
GOVERNOR_FILE = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
_warned_of_load = False  # the load warning is printed once per process
_warned_of_binding = False  # the binding warning too
EMULATION_NOTE = (
    "software emulation: kernels and copies run on the host's cores, so these timings are the "
    "emulator's, not an FPGA's performance"
)


def topology(env: dict) -> dict:
    """Nodes, the most ranks on one node, and whether the run stayed inside
    one node (scale-up) or crossed nodes (scale-out), from an env's
    ranks_per_node; {} for an env without it (a Result made by hand)."""
    per_node = env.get("ranks_per_node")
    if not per_node:
        return {}
    return {
        "nodes": len(per_node),
        "ranks_per_node": max(per_node.values()),
        "scale": "scale-up" if len(per_node) == 1 else "scale-out",
    }


def load_average() -> float | None:
    """The 1-minute load average of this host (None where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what the platform module says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def governor() -> str | None:
    """cpu0's frequency governor (performance, powersave, ...), None where unreadable."""
    try:
        with open(GOVERNOR_FILE, encoding="utf-8") as governor_file:
            return governor_file.read().strip() or None
    except OSError:
        return None


def affinity_cores() -> int:
    """The cores this process may run on (a launcher that binds a rank to one
    core leaves 1), the host's count where the system does not say."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine(load_before: float | None = None, load_after: float | None = None) -> dict:
    """env["machine"]: this host's CPU model, cores (logical CPUs, the host's
    count, against which the load is judged), the cores this process may run
    on (affinity_cores), frequency governor and the 1-minute load average
    before and after the run (both now where not given), and its
    architecture (x86_64, aarch64)."""
    now = load_average() if load_before is None or load_after is None else None
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count() or 1,
        "affinity_cores": affinity_cores(),
        "governor": governor(),
        "load_before": now if load_before is None else load_before,
        "load_after": now if load_after is None else load_after,
        "architecture": platform.machine(),
    }


def loaded_warning(load: float | None, cores: int) -> str:
    """The one warning line of a run started on a busy machine, or "" where
    the load does not exceed the cores."""
    if load is None or load <= cores:
        return ""
    return f"fpgacomm: warning: load average {load:.1f} exceeds the {cores} cores: figures may be noisy"


def warn_if_loaded(comm) -> float | None:
    """At the start of a measured run: this host's load average, and on rank
    0, where it exceeds the cores, loaded_warning's line on stderr, once per
    process (a suite of many runs warns once)."""
    global _warned_of_load
    load = load_average()
    warning = loaded_warning(load, os.cpu_count() or 1)
    if warning and comm.Get_rank() == 0 and not _warned_of_load:
        print(warning, file=sys.stderr, flush=True)
        _warned_of_load = True
    return load


def unbound(allowed: int, ranks_here: int, cores: int) -> bool:
    """Whether rank 0, free to run on `allowed` of its host's `cores`, is
    unbound where binding would keep the host's `ranks_here` ranks apart:
    more than two of them (Open MPI binds two to cores by default), and no
    more than the cores (no binding helps ranks that outnumber them)."""
    return allowed > 1 and 2 < ranks_here <= cores


def unbound_warning(allowed: int, ranks_here: int, cores: int) -> str:
    """The one warning line of a run whose rank 0 is `unbound`, or ""."""
    if not unbound(allowed, ranks_here, cores):
        return ""
    return (
        f"fpgacomm: warning: rank 0 may run on {allowed} cores, not bound to one: ranks that are not bound share "
        f"a core until the scheduler spreads them, and the first sizes measured then take milliseconds (b_eff's "
        f"1 B exchange 0.7-5.3 ms where bound ranks took 1 us, 32 ranks of a 32-core host); launch with "
        f"mpirun --bind-to core"
    )


def warn_if_unbound(comm) -> None:
    """At the start of a measured run, collectively (every call, so that a
    run on a sub-communicator first cannot leave ranks out of a later one):
    on rank 0, unbound_warning's line on stderr where it applies, once per
    process (a suite of many runs warns once)."""
    global _warned_of_binding
    hosts = _core.host_names(comm)
    if comm.Get_rank() == 0 and not _warned_of_binding:
        warning = unbound_warning(affinity_cores(), hosts.count(hosts[0]), os.cpu_count() or 1)
        if warning:
            print(warning, file=sys.stderr, flush=True)
            _warned_of_binding = True


def launcher() -> dict:
    """How this process was started: {"name": "mpirun" (or mpiexec, orterun),
    "srun" or "none", "command": the launcher's command line}. mpirun is
    this process's ancestor, or the daemon (orted) that it started here is;
    srun's tasks are the children of Slurm's step daemon, not of srun. A
    launcher that is no ancestor is looked for on this host (launched_by);
    its command is None where it runs on another host."""
    pid = os.getppid()
    while pid > 1:
        name = process_name(pid)
        if name in MPIRUN_NAMES:
            return {"name": name, "command": shlex.join(process_arguments(pid))}
        if name in DAEMON_NAMES:
            return {"name": "mpirun", "command": launched_by(MPIRUN_NAMES)}
        pid = _parent(pid)
    if "SLURM_STEP_ID" in os.environ and "SLURM_PROCID" in os.environ:
        return {"name": "srun", "command": launched_by(("srun",))}
    return {"name": "none", "command": None}


def _parent(pid: int) -> int:
    """pid's parent (0 where it has ended or cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def launched_by(names: tuple) -> str | None:
    """The command line of a process on this host named one of `names` whose
    arguments end with this process's (sys.argv after the program): the
    launcher that started it, the first by pid where several match; None
    where none does."""
    mine = sys.argv[1:]
    pids = sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit()) if os.path.isdir("/proc") else []
    for pid in pids:
        if process_name(pid) in names:
            arguments = process_arguments(pid)
            if len(arguments) > len(mine) and arguments[len(arguments) - len(mine) :] == mine:
                return shlex.join(arguments)
    return None


# Each rank's Slurm variables that the env records (SLURMD_NODENAME: the
# node Slurm runs the rank on; a rank that mpirun started on its own host
# inside an allocation has none).
_SLURM_VARIABLES = {
    "job_id": "SLURM_JOB_ID",
    "step_id": "SLURM_STEP_ID",
    "cluster": "SLURM_CLUSTER_NAME",
    "partition": "SLURM_JOB_PARTITION",
    "node_list": "SLURM_JOB_NODELIST",
    "mpi_type": "SLURM_MPI_TYPE",
}


def slurm(rank_nodes: list) -> dict | None:
    """env["slurm"] of a run inside a Slurm job: the job and step ids,
    cluster, partition, the job's node list, srun's --mpi type (each None
    where Slurm did not set it) and each rank's node (rank_nodes); None
    outside a job."""
    if "SLURM_JOB_ID" not in os.environ:
        return None
    return {**{key: os.environ.get(name) for key, name in _SLURM_VARIABLES.items()}, "rank_nodes": rank_nodes}


def collect(comm, device=None, hosts: list[str] | None = None) -> dict:
    """Collective: hosts, ranks, MPI library and thread level, every rank's
    device, the launcher and, in a Slurm job, the job (slurm). Where Slurm
    names every rank's node, the hosts are Slurm's node names (two nodes of
    one machine stay two nodes; each rank's host name is kept in
    slurm.rank_host_names where they differ)."""
    MPI = mpi.MPI()
    hosts = hosts if hosts is not None else _core.host_names(comm)
    rank_nodes = comm.allgather(os.environ.get("SLURMD_NODENAME"))
    slurm_job = slurm(rank_nodes)
    if all(rank_nodes) and rank_nodes != hosts:
        if slurm_job is not None:
            slurm_job["rank_host_names"] = hosts
        hosts = rank_nodes
    label = ""
    info = device.info if device is not None else None
    if info is not None:
        label = f"{info.label()} on '{info.platform_name}'" + (" (emulated)" if info.emulated else "")
    devices = comm.allgather(label)
    per_node = {host: hosts.count(host) for host in dict.fromkeys(hosts)}
    # Each host's launcher may set them apart (FPGA_MAPPING per host).
    rank_variables = comm.allgather({name: os.environ[name] for name in _RUNTIME_VARIABLES if name in os.environ})
    host_variables = {host: rank_variables[hosts.index(host)] for host in per_node}
    env = {
        "fpgacomm_version": __version__,
        "git_revision": _core.git_revision,
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "hosts": list(per_node),
        "ranks": comm.Get_size(),
        "ranks_per_node": per_node,
        "rank_hosts": hosts,
        "nodes": len(per_node),
        "scale": topology({"ranks_per_node": per_node})["scale"],
        "mpi_library": _core.mpi_library_version().strip(),
        "mpi_version": "{}.{}".format(*MPI.Get_version()),
        "mpi_thread_level": mpi.thread_levels(),
        "rank_devices": devices,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "variables": rank_variables[0],
        "machine": machine(),
        "launcher": launcher(),
    }
    # How the MPI copies a message between two ranks of a host (Open MPI's shared-memory transport: once by
    # the receiver with cma, xpmem or knem; twice, in and out of shared fragments, with none or emulated):
    # what a message costs the host's memory (docs/PREDICTION.md). Absent where the MPI has no such variable.
    single_copy = _core.mpi_control_variable(SINGLE_COPY_PARAMETER)
    if single_copy:
        env["shared_memory_single_copy"] = single_copy
    if slurm_job is not None:
        env["slurm"] = slurm_job
    if any(variables != rank_variables[0] for variables in host_variables.values()):
        env["host_variables"] = host_variables
    if info is not None:
        # The device API's key: "opencl", or "sycl" with its runtime's
        # version and backend (OMB-FPGA's -d sycl).
        runtime = {
            "runtime": info.api,
            "platform": info.platform_name,
            "platform_version": info.platform_version,
            "device": info.name,
            "device_type": info.type,
            "device_version": info.version,
            "driver_version": info.driver_version,
            "global_mem_bytes": info.global_mem_bytes,
            "max_alloc_bytes": info.max_alloc_bytes,
            "host_unified_memory": info.host_unified_memory,
            "emulated": info.emulated,
        }
        if info.api == "sycl":
            from .devices import sycl_module

            runtime.update(version=sycl_module().runtime_version, backend=info.backend)
        if info.emulated:
            runtime["emulation"] = EMULATION_NOTE
        env[info.api] = runtime
    return env
