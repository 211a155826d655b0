"""Which device each rank uses, and what every device can give.

A device is OpenCL's (fpgacomm._core) or, with api "sycl", SYCL's
(fpgacomm._sycl, imported only then, so that other runs never load libsycl).
Ranks map to devices by node-local rank modulo the number of matching
devices, unless FPGA_MAPPING=2:0:3 or --device-map lists a device index per
node-local rank (docs/GUIDE.md, "Which device each rank uses"). Opening is
collective: a rank that cannot open its device makes every rank raise the
same error.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import _core
from ..params import MEMORY_KINDS, usage_error
from . import sycl_runtime

PACKAGE = __package__.rpartition(".")[0]  # fpgacomm

DEVICELESS_KINDS = ("H",)  # pageable host memory: the only kind that needs no OpenCL device
APIS = ("opencl", "sycl")
# OMB-FPGA's SYCL interface offers host memory and device global memory only.
SYCL_KINDS = ("H", "D")


@dataclass(frozen=True)
class DeviceOptions:
    """How to choose devices: platform and device by index or name substring,
    type fpga|gpu|cpu|all, an explicit map, a vendor binary, a memory bank,
    and the API that drives the devices (opencl, or sycl: OMB-FPGA's -d sycl)."""

    platform: str = ""
    device: str = ""
    type: str = "auto"
    device_map: str | None = None
    binary: str = ""
    bank: int = 0
    api: str = "opencl"

    def params(self) -> dict:
        return {
            "platform": self.platform,
            "device": self.device,
            "device_type": self.type,
            "device_map": self.device_map or os.environ.get("FPGA_MAPPING"),
            "binary": self.binary,
            "bank": self.bank,
            "device_api": self.api,
        }


def has_sycl_module() -> bool:
    """Whether this build has fpgacomm._sycl (found without loading it)."""
    return importlib.util.find_spec(f"{PACKAGE}._sycl") is not None


def sycl_module():
    """fpgacomm._sycl, imported on first use, after its runtime's libraries
    have been checked (runtime/sycl_runtime.py); a usage error (the same on
    every rank) where this build has none or its runtime cannot load."""
    loaded = sys.modules.get(f"{PACKAGE}._sycl")
    if loaded is not None:
        return loaded
    if not has_sycl_module():
        raise usage_error(
            "-d sycl needs fpgacomm's SYCL module, and this build of fpgacomm has none (it was built "
            "without Intel's SYCL runtime, or with FPGACOMM_SYCL=no); rebuild with scripts/setup.sh, "
            "which downloads the runtime, or run scripts/sycl_runtime.sh and pip install again "
            '(docs/GUIDE.md, "SYCL"); or use -d opencl'
        )
    damage = sycl_runtime.damage()
    if damage:
        raise usage_error(damage)
    try:
        sycl_runtime.load()
        from .. import _sycl
    except (ImportError, OSError) as error:
        raise usage_error(
            f"fpgacomm's SYCL module cannot load Intel's SYCL runtime ({error}); run "
            "scripts/setup.sh, which caches it again, or use -d opencl"
        ) from None
    return _sycl


def check_api(options: DeviceOptions, kinds, test: str = "") -> None:
    """Refuses what the device API cannot do, before anything is opened:
    an unknown API, and with SYCL the kinds OMB-FPGA's SYCL interface lacks
    (B and P: it cannot choose a memory bank from the host; H! too), a
    --binary (no kernels), and a build without SYCL."""
    if options.api not in APIS:
        raise usage_error(f"unknown device API '{options.api}'; choose {' or '.join(APIS)}")
    if options.api != "sycl":
        return
    for kind in kinds:
        if kind in ("B", "P"):
            raise usage_error(
                f"-d sycl cannot place buffers in {_core.mem_kind_name(kind)}: the SYCL interface "
                "cannot choose a memory bank from the host (OMB-FPGA, section 3.3); use D, or "
                "-d opencl for B and P"
            )
        if kind not in SYCL_KINDS:
            raise usage_error(
                f"-d sycl offers H (host) and D (device) memory, as OMB-FPGA's SYCL interface does, "
                f"not {kind}; use H or D"
            )
    if options.binary:
        raise usage_error(
            "--binary loads OpenCL kernels, and fpgacomm's SYCL path has no kernels; drop --binary " "or use -d opencl"
        )
    sycl_module()


def kernel_dir() -> str:
    """``kernels/*.cl`` as installed with the package."""
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


EMULATOR_LIBRARY = "libintelocl_emu.so"  # Intel's FPGA emulation platform for OpenCL


def leave_out_unasked_emulator(options: DeviceOptions) -> None:
    """Points the OpenCL ICD loader at the registered drivers without Intel's
    FPGA emulator where the run cannot take it: an OpenCL run of type auto
    (which never takes an emulator while another device is registered), cpu
    or gpu, on no named platform. Loading it costs time and, on CPUs its
    LLVM does not know, a line on stderr ("SYCL CPU RT Warning: Unknown host
    CPU.", which nothing switches off). Runs that may take it (-d sycl,
    --device-type fpga or all, --platform), `fpgacomm devices`, and a user's
    own OCL_ICD_FILENAMES or file in OCL_ICD_VENDORS keep every driver.
    Call it before the process's first OpenCL call, as the loader reads the
    registry once."""
    if options.api != "opencl" or options.type not in ("auto", "cpu", "gpu") or options.platform:
        return
    folder = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    if "OCL_ICD_FILENAMES" in os.environ or not os.path.isdir(folder):
        return
    drivers = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".icd"):
            with open(os.path.join(folder, name)) as registration:
                drivers[name] = registration.read()
    others = {name: text for name, text in drivers.items() if EMULATOR_LIBRARY not in text}
    if len(others) == len(drivers) or not others:
        return
    without = os.path.join(tempfile.gettempdir(), f"fpgacomm-{os.getuid()}", "icd-without-emulator")
    os.makedirs(without, exist_ok=True)
    for name, text in others.items():  # ranks write the same files at once: each replaced whole
        partial = os.path.join(without, f".{name}.{os.getpid()}")
        with open(partial, "w") as registration:
            registration.write(text)
        os.replace(partial, os.path.join(without, name))
    for name in os.listdir(without):
        if name.endswith(".icd") and name not in others:
            with contextlib.suppress(FileNotFoundError):  # another rank removed it first
                os.remove(os.path.join(without, name))
    os.environ["OCL_ICD_VENDORS"] = without


def configure_runtime(local_rank: int, local_ranks: int) -> None:
    """Environment the OpenCL runtime reads once, before its first call.

    The ICD loader's registry (use_user_icd_vendors: chosen here, where
    fpgacomm opens OpenCL, and not at import, which must leave a user's
    environment alone); each rank's own PoCL kernel cache (ranks sharing one
    have crashed) and, unless the user set it, an equal share of the cores
    for PoCL's worker threads, so ranks on one node do not oversubscribe it.
    """
    use_user_icd_vendors()
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
        return (
            f"cannot read device binary '{options.binary}' (--binary): {why}; give the vendor binary's path "
            f"(.aocx, .xclbin) or leave --binary out"
        )
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
    chosen = unused_choices(options)
    if chosen and comm.Get_rank() == 0:
        warnings.warn(
            f"this run opens no device (its buffers are host memory, or it moves no data), so "
            f"{', '.join(chosen)} changes nothing; give a device kind (D, B or P) to use a device",
            DeviceUnused,
            stacklevel=2,
        )
    return None


class DeviceUnused(UserWarning):
    """Device options given to a run that opens no device."""


def unused_choices(options: DeviceOptions) -> list[str]:
    """The device options that differ from their defaults, as the command
    line names them: what a run that opens no device would silently ignore."""
    defaults = DeviceOptions()
    names = {
        "platform": "--platform",
        "device": "--device",
        "type": "--device-type",
        "device_map": "--device-map",
        "binary": "--binary",
        "bank": "--bank",
        "api": "-d",
    }
    return [
        f"{flag} {getattr(options, field)}"
        for field, flag in names.items()
        if getattr(options, field) != getattr(defaults, field)
    ]


def open_device(comm, options: DeviceOptions, hosts: list[str] | None = None):
    """This rank's Device (OpenCL's or SYCL's, as options.api says), opened
    collectively (every rank calls it). With SYCL the rank's device is the
    nth that matches, as OMB-FPGA's nth-device selector takes it."""
    _core.agree(comm, options_problem(options), True)
    hosts = hosts if hosts is not None else _core.host_names(comm)
    rank = comm.Get_rank()
    configure_runtime(_core.node_local_rank(hosts, rank), hosts.count(hosts[rank]))
    leave_out_unasked_emulator(options)
    device, failure, usage = None, "", True
    try:
        api = sycl_module() if options.api == "sycl" else _core
        candidates = api.select_devices(options.platform, options.device, options.type)
        info = candidates[device_for(hosts, rank, len(candidates), options)]
        device = api.Device(info) if options.api == "sycl" else _core.Device(info, kernel_dir(), options.binary)
    except _core.Error as error:
        failure, usage = str(error), isinstance(error, _core.UsageError)
    _core.agree(comm, failure, usage)
    return device


def describe(probe: bool = True, bank: int = 0) -> list[dict]:
    """Every OpenCL platform and device, with the memory kinds each can
    give, then every SYCL device where this build has SYCL.

    Kinds are found by extension queries and a trial allocation (probe);
    without probe only H is known.
    """
    configure_runtime(0, 1)
    table = []
    for info in _core.all_devices():
        row = {
            "api": "opencl",
            "platform_index": info.platform_index,
            "device_index": info.device_index,
            **_shared_description(info),
            "host_unified_memory": info.host_unified_memory,
            "emulated": info.emulated,
            "kinds": [],
            "unavailable": {},
        }
        if probe:
            device = _core.Device(info, kernel_dir())
            for kind in MEMORY_KINDS:
                supported, reason = device.probe_kind(kind, bank)
                if supported:
                    row["kinds"].append(kind)
                else:
                    row["unavailable"][kind] = reason
        table.append(row)
    return table + describe_sycl(probe)


def _shared_description(info) -> dict:
    """What `devices` tells of an OpenCL and a SYCL device alike (both
    bindings' device infos have these attributes)."""
    return {
        "platform": info.platform_name,
        "platform_version": info.platform_version,
        "name": info.name,
        "vendor": info.vendor,
        "type": info.type,
        "version": info.version,
        "driver_version": info.driver_version,
        "global_mem_bytes": info.global_mem_bytes,
        "max_alloc_bytes": info.max_alloc_bytes,
    }


def describe_sycl(probe: bool = True) -> list[dict]:
    """Every SYCL device (none where this build has no SYCL): its backend,
    whether it gives USM device allocations, and, probed, H and D as a trial
    allocation with a write and read-back finds them."""
    if not has_sycl_module():
        return []
    try:
        sycl = sycl_module()
    except _core.UsageError as error:
        return [{"api": "sycl", "error": str(error)}]
    table = []
    for info in sycl.all_devices():
        row = {
            "api": "sycl",
            "runtime_version": sycl.runtime_version,
            "backend": info.backend,
            "device_index": info.device_index,
            **_shared_description(info),
            "usm_device_allocations": info.usm_device_allocations,
            "emulated": info.emulated,
            "kinds": [],
            "unavailable": {},
        }
        if probe and info.usm_device_allocations:
            device = sycl.Device(info)
            for kind in SYCL_KINDS:
                supported, reason = device.probe_kind(kind)
                if supported:
                    row["kinds"].append(kind)
                else:
                    row["unavailable"][kind] = reason
        elif probe:
            row["kinds"] = ["H"]
            row["unavailable"]["D"] = "no USM device allocations (malloc_device)"
        table.append(row)
    return table
