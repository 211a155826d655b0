"""Which OpenCL device each rank uses, and what every device can give.

Ranks map to devices by node-local rank modulo the number of matching
devices, unless FPGA_MAPPING=2:0:3 or --device-map lists a device index per
node-local rank (README.md, "Which device each rank uses"). Opening is
collective: a rank that cannot open its device makes every rank raise the
same error.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import _core
from ..params import MEMORY_KINDS

DEVICELESS_KINDS = ("H",)  # pageable host memory: the only kind that needs no OpenCL device


@dataclass(frozen=True)
class DeviceOptions:
    """How to choose devices: platform and device by index or name substring,
    type fpga|gpu|cpu|all, an explicit map, a vendor binary and a memory bank."""

    platform: str = ""
    device: str = ""
    type: str = "auto"
    device_map: str | None = None
    binary: str = ""
    bank: int = 0

    def params(self) -> dict:
        return {"platform": self.platform, "device": self.device, "device_type": self.type,
                "device_map": self.device_map or os.environ.get("FPGA_MAPPING"), "binary": self.binary,
                "bank": self.bank}


def kernel_dir() -> str:
    """kernels/*.cl as installed with the package."""
    return str(Path(__file__).resolve().parent.parent / "kernels")


def user_icd_vendors() -> str:
    """The folder where scripts/fpga_emulator.sh registers the FPGA emulator,
    beside copies of the system's .icd files, when set-up runs without root."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "fpgacomm", "OpenCL", "vendors")


def use_user_icd_vendors() -> None:
    """Points the ICD loader at user_icd_vendors() when set-up made it and the
    user chose no registry (OCL_ICD_VENDORS, OCL_ICD_FILENAMES): without root
    the emulator cannot be registered globally. Debian's loader reads the
    variable at the first OpenCL call, so this works after loading _core."""
    folder = user_icd_vendors()
    if "OCL_ICD_VENDORS" not in os.environ and "OCL_ICD_FILENAMES" not in os.environ and os.path.isdir(folder):
        os.environ["OCL_ICD_VENDORS"] = folder


def configure_runtime(local_rank: int, local_ranks: int) -> None:
    """Environment the OpenCL runtime reads once, before its first call.

    Each rank gets its own PoCL kernel cache (ranks sharing one have crashed)
    and, unless the user set it, an equal share of the cores for PoCL's
    worker threads, so ranks on one node do not oversubscribe it.
    """
    cache = os.path.join(tempfile.gettempdir(), f"fpgacomm-pocl-{os.getuid()}", f"rank{local_rank}")
    os.makedirs(cache, exist_ok=True)
    os.environ.setdefault("POCL_CACHE_DIR", cache)
    share = max(1, (os.cpu_count() or 1) // max(1, local_ranks))
    os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(share))


def mapping_spec(options: DeviceOptions) -> tuple[list[int], str]:
    """The explicit device map and where it came from: --device-map wins over FPGA_MAPPING."""
    if options.device_map is not None:
        return _core.parse_device_map(options.device_map, "--device-map"), "--device-map"
    env = os.environ.get("FPGA_MAPPING")
    if env is not None:
        return _core.parse_device_map(env, "FPGA_MAPPING"), "FPGA_MAPPING"
    return [], ""


def device_for(hosts: list[str], rank: int, candidates: int, options: DeviceOptions) -> int:
    """Index among the matching devices for `rank`, given every rank's host name."""
    mapping, source = mapping_spec(options)
    return _core.device_index(_core.node_local_rank(hosts, rank), candidates, mapping, source)


def needs_device(kinds) -> bool:
    return any(kind not in DEVICELESS_KINDS for kind in kinds)


def options_problem(options: DeviceOptions) -> str:
    """What makes the device options wrong whatever the run: a malformed
    --device-map or FPGA_MAPPING, a --binary that cannot be read; "" if none."""
    try:
        mapping_spec(options)
    except _core.UsageError as error:
        return str(error)
    if options.binary and (os.path.isdir(options.binary) or not os.access(options.binary, os.R_OK)):
        why = "a directory, not a file" if os.path.isdir(options.binary) else "no such file, or not readable"
        return (f"cannot read device binary '{options.binary}' (--binary): {why}; give the vendor binary's path "
                f"(.aocx, .xclbin) or leave --binary out")
    return ""


def open_device_if(needed: bool, comm, options: DeviceOptions, hosts: list[str] | None = None):
    """open_device where the run needs a device, else None. The device
    options are checked either way, collectively: a malformed map or an
    unreadable binary is the same mistake whether or not this run's memory
    kinds open a device, and refused alike (docs/METHODS.md, "Errors and time
    limits")."""
    if needed:
        return open_device(comm, options, hosts)
    _core.agree(comm, options_problem(options), True)
    return None


def open_device(comm, options: DeviceOptions, hosts: list[str] | None = None):
    """This rank's Device, opened collectively (every rank calls it), once
    the options are known to be right (options_problem, agreed)."""
    _core.agree(comm, options_problem(options), True)
    hosts = hosts if hosts is not None else _core.host_names(comm)
    rank = comm.Get_rank()
    configure_runtime(_core.node_local_rank(hosts, rank), hosts.count(hosts[rank]))
    device, failure, usage = None, "", True
    try:
        candidates = _core.select_devices(options.platform, options.device, options.type)
        info = candidates[device_for(hosts, rank, len(candidates), options)]
        device = _core.Device(info, kernel_dir(), options.binary)
    except _core.Error as error:
        failure, usage = str(error), isinstance(error, _core.UsageError)
    _core.agree(comm, failure, usage)
    return device


def describe(probe: bool = True, bank: int = 0) -> list[dict]:
    """Every platform and device, with the memory kinds each can give.

    Kinds are found by extension queries and a trial allocation (probe);
    without probe only H is known.
    """
    configure_runtime(0, 1)
    table = []
    for info in _core.all_devices():
        row = {"platform_index": info.platform_index, "device_index": info.device_index,
               "platform": info.platform_name, "platform_version": info.platform_version,
               "name": info.name, "vendor": info.vendor, "type": info.type, "version": info.version,
               "driver_version": info.driver_version, "global_mem_bytes": info.global_mem_bytes,
               "max_alloc_bytes": info.max_alloc_bytes, "host_unified_memory": info.host_unified_memory,
               "emulated": info.emulated, "kinds": [], "unavailable": {}}
        if probe:
            device = _core.Device(info, kernel_dir())
            for kind in MEMORY_KINDS:
                supported, reason = device.probe_kind(kind, bank)
                if supported:
                    row["kinds"].append(kind)
                else:
                    row["unavailable"][kind] = reason
        table.append(row)
    return table
