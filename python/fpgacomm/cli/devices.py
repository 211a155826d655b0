"""fpgacomm devices: every platform and device, and the memory kinds it gives."""

from __future__ import annotations

import json

from ..units import human_bytes


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devices",
        help="list OpenCL platforms, devices and their memory kinds, then the "
        "SYCL devices (where fpgacomm was built with SYCL)",
    )
    parser.add_argument("--no-probe", action="store_true", help="skip the trial allocations that find the memory kinds")
    parser.add_argument("--bank", type=int, default=0, help="memory bank to try for B and P")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    parser.set_defaults(run=run)


def format_table(table: list[dict]) -> str:
    """Every device with its memory kinds; why a kind is missing is said
    once, after the devices, for every device it holds for."""
    if not table:
        return "No OpenCL device found (is an ICD such as pocl-opencl-icd installed?)."
    lines = []
    missing: dict[tuple, list] = {}  # (kind, reason) -> the devices it holds for
    for row in table:
        if row.get("api") == "sycl":
            lines += _sycl_lines(row)
            continue
        lines.append(f"platform {row['platform_index']} '{row['platform']}' ({row['platform_version']})")
        lines.append(f"  device {row['device_index']}: {row['name']}")
        emulated = " (emulated: timings are not the device's)" if row["emulated"] else ""
        lines.append(f"    type {row['type']}{emulated}, {row['version']}, driver {row['driver_version']}")
        lines.append(
            f"    global memory {human_bytes(row['global_mem_bytes'])}, "
            f"max allocation {human_bytes(row['max_alloc_bytes'])}, "
            f"host-unified memory {'yes' if row['host_unified_memory'] else 'no'}"
        )
        if row["kinds"] or row["unavailable"]:
            absent = f"; not {', '.join(row['unavailable'])} (below)" if row["unavailable"] else ""
            lines.append(f"    memory kinds: {' '.join(row['kinds']) or 'none'}{absent}")
        for kind, reason in row["unavailable"].items():
            missing.setdefault((kind, reason), []).append(
                f"platform {row['platform_index']} device " f"{row['device_index']}"
            )
    for (kind, reason), devices in missing.items():
        lines.append(f"no {kind} on {', '.join(devices)}: {reason}")
    return "\n".join(lines)


def _sycl_lines(row: dict) -> list[str]:
    """A SYCL device (-d sycl): its backend, USM device allocations, and whether it is emulated; or why
    SYCL cannot load."""
    if "error" in row:
        return [f"SYCL: no devices listed: {row['error']}"]
    emulated = " (emulated: timings are not the device's)" if row["emulated"] else ""
    lines = [
        f"SYCL device {row['device_index']}: {row['name']} on '{row['platform']}'",
        f"    type {row['type']}{emulated}, backend {row['backend']}, SYCL runtime {row['runtime_version']}, "
        f"driver {row['driver_version']}",
        f"    global memory {human_bytes(row['global_mem_bytes'])}, "
        f"max allocation {human_bytes(row['max_alloc_bytes'])}, "
        f"USM device allocations {'yes' if row['usm_device_allocations'] else 'no (not usable with -d sycl)'}",
    ]
    if row["kinds"] or row["unavailable"]:
        lines.append(f"    memory kinds with -d sycl: {' '.join(row['kinds']) or 'none'}")
        for kind, reason in row["unavailable"].items():
            lines.append(f"      no {kind}: {reason}")
    return lines


def run(args) -> int:
    from ..results.result import atomic_write
    from ..runtime.devices import describe

    table = describe(probe=not args.no_probe, bank=args.bank)
    print(format_table(table))
    if args.json:
        atomic_write(args.json, lambda f: json.dump(table, f, indent=2), newline=None)
    return 0
