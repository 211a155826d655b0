"""Where a run happened, recorded in every Result (its `env`)."""

from __future__ import annotations

import datetime
import os
import platform
import sys

import numpy

from .. import _core
from .._core import __version__
from . import mpi

_RUNTIME_VARIABLES = ("FPGA_MAPPING", "POCL_MAX_PTHREAD_COUNT", "POCL_CACHE_DIR", "OMP_NUM_THREADS",
                      "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES")
EMULATION_NOTE = ("software emulation: kernels and copies run on the host's cores, so these timings are the "
                  "emulator's, not an FPGA's performance")


def topology(env: dict) -> dict:
    """Nodes, the most ranks on one node, and whether the run stayed inside
    one node (scale-up) or crossed nodes (scale-out), from an env's
    ranks_per_node; {} for an env without it (a Result made by hand)."""
    per_node = env.get("ranks_per_node")
    if not per_node:
        return {}
    return {"nodes": len(per_node), "ranks_per_node": max(per_node.values()),
            "scale": "scale-up" if len(per_node) == 1 else "scale-out"}


def collect(comm, device=None, hosts: list[str] | None = None) -> dict:
    """Collective: hosts, ranks, MPI library and thread level, every rank's device."""
    MPI = mpi.MPI()
    hosts = hosts if hosts is not None else _core.host_names(comm)
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
        "mpi_library": MPI.Get_library_version().strip(),
        "mpi_version": "%d.%d" % MPI.Get_version(),
        "mpi_thread_level": mpi.thread_levels(),
        "rank_devices": devices,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "machine": platform.machine(),
        "variables": rank_variables[0],
    }
    if any(variables != rank_variables[0] for variables in host_variables.values()):
        env["host_variables"] = host_variables
    if info is not None:
        # The device API's key: "opencl", or "sycl" with its runtime's
        # version and backend (OMB-FPGA's -d sycl).
        runtime = {"runtime": info.api, "platform": info.platform_name, "platform_version": info.platform_version,
                   "device": info.name, "device_type": info.type, "device_version": info.version,
                   "driver_version": info.driver_version, "global_mem_bytes": info.global_mem_bytes,
                   "max_alloc_bytes": info.max_alloc_bytes,
                   "host_unified_memory": info.host_unified_memory, "emulated": info.emulated}
        if info.api == "sycl":
            from .devices import sycl_module

            runtime.update(version=sycl_module().runtime_version, backend=info.backend)
        if info.emulated:
            runtime["emulation"] = EMULATION_NOTE
        env[info.api] = runtime
    return env
