"""The staged engine's sizes chosen by measurement: the smallest fast copy in
each direction, the pipelining chunk and the staging slots (docs/METHODS.md,
"Copy calibration").

A short calibration, collective over the run's ranks, measures each rank's
copies with the ranks taking turns on their devices (as the two ends of a
ping-pong do), then the staged engine itself moving a window of messages
from rank 0 to rank 1 with each candidate chunk, and at the fastest chunk
with each candidate slot count. The figures and what was chosen from them
are cached per host, device, driver and number of ranks copying on the
device, in $XDG_CACHE_HOME/fpgacomm/calibration (default
~/.cache/fpgacomm/calibration), with how and when they were measured. An
entry that cannot be read, holds values out of range, comes from another
method or is older than MAX_AGE_DAYS is measured again, never trusted.
Devices whose copies run on the host's cores (CPU devices, emulators) keep
the defaults without calibration: there a measurement would take the very
cores the benchmark needs, and the defaults were measured for them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import _core
from ..units import human_bytes
from . import files

KiB, MiB = 1 << 10, 1 << 20
METHOD = 2  # raised whenever the measurement or the choices change: older entries are measured again
MAX_AGE_DAYS = 7
# Copies from 1 B to 256 KiB find the smallest fast copy; the chunk candidates and slot counts.
SMALL_SIZES = (1, 256, KiB, 2 * KiB, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB)
CHUNK_SIZES = (256 * KiB, 512 * KiB, MiB, 2 * MiB, 4 * MiB, 8 * MiB)
SLOT_COUNTS = (2, 3, 4, 6, 8)
CHUNK_SLOTS = 4  # the slots while chunks are compared
REPETITIONS = 7
# A copy is fast when it takes at most FAST_MARGIN times the fastest copy up to 256 KiB.
FAST_MARGIN = 1.25
# What the pipeline moves for each candidate: a window of messages posted at once, as osu bw does,
# of a size inside the bandwidth sweep's 16 to 64 MiB, long enough that filling the pipeline counts little.
PIPELINE_MESSAGE = 32 * MiB
PIPELINE_WINDOW = 4
WINDOW_BYTES = PIPELINE_MESSAGE * PIPELINE_WINDOW
# The fewest slots whose pipeline reaches this share of the best slot count's rate.
SLOT_SHARE = 0.98
HOST_CORES_SLOTS = 4
CACHE_ENV = "XDG_CACHE_HOME"
# What the folder check writes: more than an entry takes (a few KiB), so a nearly full disk shows.
PROBE_BYTES = 64 * KiB


@dataclass
class Sizing:
    """What the staged engine runs with, and where it came from."""

    chunk_bytes: int
    slots: int
    fast_to_device: int = 1
    fast_to_host: int = 1
    source: str = "default"  # default, cache, measured
    why: list = field(default_factory=list)
    measured_at: str | None = None  # UTC, ISO 8601

    def params(self) -> dict:
        return asdict(self)


def cache_folder() -> Path:
    base = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fpgacomm" / "calibration"


def key_of(device, sharing: int, host: str | None = None) -> dict:
    """What a calibration holds for: this host, device, driver, and the ranks copying on the device."""
    info = device.info
    return {
        "host": host or socket.gethostname(),
        "platform": info.platform_name,
        "platform_version": info.platform_version,
        "device": info.name,
        "driver": info.driver_version,
        "ranks_sharing_device": int(sharing),
        "method": METHOD,
    }


def cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_folder() / f"{digest}.json"


def copies_use_host_cores(device) -> bool:
    return device is None or device.info.type == "cpu" or device.info.emulated


def defaults(device) -> Sizing:
    """The measured defaults of devices whose copies run on the host's cores (bench/RESULTS.md)."""
    return Sizing(
        chunk_bytes=_core.default_chunk_bytes(device),
        slots=HOST_CORES_SLOTS,
        why=["copies run on the host's cores (CPU device or emulator): the measured defaults, no " "calibration"],
    )


# ------------------------------------------------------------------ choices


def fastest_small(rows: list, direction: str) -> int:
    """The smallest size from which copies take at most FAST_MARGIN times the
    fastest small copy; 1 when even the smallest does (nothing to widen)."""
    floor = min(row[direction] for row in rows)
    for row in sorted(rows, key=lambda r: r["bytes"]):
        if row[direction] <= FAST_MARGIN * floor:
            return max(1, int(row["bytes"]))
    return 1


def choose_chunk(seconds: dict) -> tuple[int, list]:
    """The chunk whose pipeline moved PIPELINE_MESSAGE fastest."""
    best = min(seconds, key=lambda chunk: (seconds[chunk], chunk))
    why = [
        f"chunk {human_bytes(chunk)} ({CHUNK_SLOTS} slots): {PIPELINE_WINDOW} x {human_bytes(PIPELINE_MESSAGE)} in "
        f"{t * 1e6:.0f} us, {WINDOW_BYTES / t / 1e9:.2f} GB/s" + ("  <- fastest" if chunk == best else "")
        for chunk, t in sorted(seconds.items())
    ]
    return best, why


def choose_slots(seconds: dict, chunk: int) -> tuple[int, list]:
    """The fewest slots within SLOT_SHARE of the fastest count (less pinned memory for the same speed)."""
    fastest = min(seconds.values())
    chosen = min(slots for slots, t in seconds.items() if fastest / t >= SLOT_SHARE)
    why = [
        f"{slots} slots (chunk {human_bytes(chunk)}): {WINDOW_BYTES / t / 1e9:.2f} GB/s"
        + (f"  <- fewest within {SLOT_SHARE:.0%} of the fastest" if slots == chosen else "")
        for slots, t in sorted(seconds.items())
    ]
    return chosen, why


def choose(small: list, chunks: dict, slots: dict, chunk: int) -> Sizing:
    """small: copy rows from 1 B up; chunks: {chunk: seconds}; slots: {count: seconds} at `chunk`."""
    _, chunk_why = choose_chunk(chunks)
    count, slot_why = choose_slots(slots, chunk)
    to_device, to_host = fastest_small(small, "to_device"), fastest_small(small, "to_host")
    why = [
        f"copies {human_bytes(row['bytes'])}: to device {row['to_device'] * 1e6:.1f} us, to host "
        f"{row['to_host'] * 1e6:.1f} us"
        for row in small
    ]
    why += [
        f"smallest fast copy (within {FAST_MARGIN}x of the fastest up to {human_bytes(SMALL_SIZES[-1])}): to device "
        f"{human_bytes(to_device)}, to host {human_bytes(to_host)}"
    ]
    return Sizing(
        chunk_bytes=chunk,
        slots=count,
        fast_to_device=to_device,
        fast_to_host=to_host,
        source="measured",
        why=why + chunk_why + slot_why,
    )


# ------------------------------------------------------------------ the cache


def load(key: dict, now: float | None = None) -> tuple[Sizing | None, str]:
    """The cached Sizing for `key`, or None and why it cannot be trusted:
    every field of the entry checked for its type, finiteness and range
    (entry_problem), so nothing malformed escapes as an exception or is
    trusted."""
    path = cache_path(key)
    if not path.exists():
        return None, "no entry"
    try:
        entry = files.read_json(path)  # a FIFO, /dev/zero or a broken file: a bad entry, measured again
    except files.ResultError as error:  # names the path itself
        return None, f"bad entry {error}"
    problem = entry_problem(entry, key)
    if problem:
        return None, f"bad entry {path}: {problem}"
    sizing = Sizing(**entry["sizing"])
    age = (time.time() if now is None else now) - entry["measured_at_epoch"]
    if age < -60:
        return None, f"bad entry {path}: measured in the future ({sizing.measured_at})"
    if age > MAX_AGE_DAYS * 86400:
        return None, f"stale entry {path}: measured {age / 86400:.1f} days ago (at most {MAX_AGE_DAYS})"
    sizing.source = "cache"
    return sizing, f"cached {path}"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_time(value) -> bool:
    """A finite number of seconds (a bool, NaN or infinity is none)."""
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _is_utc(value) -> bool:
    try:
        time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except (TypeError, ValueError):
        return False
    return True


def entry_problem(entry, key: dict) -> str:
    """What is wrong with a cache entry, field by field; "" when nothing is."""
    if not isinstance(entry, dict):
        return f"a JSON object was expected, found {type(entry).__name__}"
    if entry.get("key") != key:
        return "it was measured for another device, driver or method"
    sizing = entry.get("sizing")
    if not isinstance(sizing, dict):
        return f"'sizing' {sizing!r} is not an object"
    fields = set(Sizing.__dataclass_fields__)
    if set(sizing) != fields:
        missing, unknown = sorted(fields - set(sizing)), sorted(set(sizing) - fields)
        return "'sizing' " + "; ".join(
            ([f"lacks {', '.join(missing)}"] if missing else [])
            + ([f"has unknown {', '.join(unknown)}"] if unknown else [])
        )
    for name in ("chunk_bytes", "fast_to_device", "fast_to_host"):
        if not _is_int(sizing[name]) or not 1 <= sizing[name] <= _core.MAX_WIRE_CHUNK:
            return f"{name} {sizing[name]!r} is not a size from 1 B to 1 GiB"
    if not _is_int(sizing["slots"]) or not 1 <= sizing["slots"] <= 64:
        return f"slots {sizing['slots']!r} is not from 1 to 64"
    if not isinstance(sizing["source"], str):
        return f"source {sizing['source']!r} is not a string"
    if not isinstance(sizing["why"], list) or not all(isinstance(line, str) for line in sizing["why"]):
        return f"why {sizing['why']!r} is not a list of strings"
    if not _is_utc(sizing["measured_at"]):
        return f"measured_at {sizing['measured_at']!r} is not a UTC time such as 2026-11-27T08:30:28Z"
    if not _is_time(entry.get("measured_at_epoch")):
        return f"measured_at_epoch {entry.get('measured_at_epoch')!r} is not a finite number of seconds"
    return ""


def folder_problem(folder: Path | None = None) -> str:
    """Why the cache folder cannot take an entry ("" when it can): checked
    before anything is measured, by creating the folder and writing a file
    of an entry's size there, then removing it."""
    folder = cache_folder() if folder is None else folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".tmp-probe-")
    except OSError as error:
        return f"the calibration cache folder {folder} cannot be written ({error.strerror or error})"
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(b" " * PROBE_BYTES)
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        return f"the calibration cache folder {folder} cannot be written ({error.strerror or error})"
    finally:
        os.unlink(probe)
    return ""


def store(key: dict, sizing: Sizing, measurements: dict) -> Path:
    """Writes the entry atomically (a reader sees the old file or the new
    one); on failure removes what it wrote and raises the OSError."""
    path = cache_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "key": key,
        "sizing": sizing.params(),
        "measured_at_epoch": time.time(),
        "how": {
            "method": METHOD,
            "small_sizes": list(SMALL_SIZES),
            "chunk_sizes": list(CHUNK_SIZES),
            "slot_counts": list(SLOT_COUNTS),
            "pipeline_message": PIPELINE_MESSAGE,
            "pipeline_window": PIPELINE_WINDOW,
            "repetitions": REPETITIONS,
            "turns": "ranks take turns on their devices, each turn a write then a read per size",
            "pipeline": "the staged engine moving the message from rank 0 to rank 1, candidates taking "
            "turns in every repetition; median",
        },
        "measurements": measurements,
    }
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(entry, out, indent=1)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


# ------------------------------------------------------------------ collective


def measure(comm, device, copies: bool = True) -> tuple[Sizing, dict]:
    """Collective: this rank's Sizing from a fresh calibration, and the
    figures. A rank with copies False (it stages nothing) takes its turns
    idle and moves host memory in the pipeline, as the run will."""
    small = _core.measure_copies(comm, device, list(SMALL_SIZES), REPETITIONS, copies)
    candidates = [_core.TransferOptions(path="staged", chunk_bytes=chunk, slots=CHUNK_SLOTS) for chunk in CHUNK_SIZES]
    chunk_seconds = dict(
        zip(
            CHUNK_SIZES,
            _core.measure_pipeline(comm, device, PIPELINE_MESSAGE, PIPELINE_WINDOW, candidates, REPETITIONS, copies),
        )
    )
    chunk, _ = choose_chunk(chunk_seconds)  # the same on every rank: rank 0's figures
    candidates = [_core.TransferOptions(path="staged", chunk_bytes=chunk, slots=n) for n in SLOT_COUNTS]
    slot_seconds = dict(
        zip(
            SLOT_COUNTS,
            _core.measure_pipeline(comm, device, PIPELINE_MESSAGE, PIPELINE_WINDOW, candidates, REPETITIONS, copies),
        )
    )
    sizing = choose(small, chunk_seconds, slot_seconds, chunk)
    sizing.measured_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return sizing, {
        "small": small,
        "chunk_seconds": {str(k): v for k, v in chunk_seconds.items()},
        "slot_seconds": {str(k): v for k, v in slot_seconds.items()},
    }


def agreed_chunk(comm, chunk: int, copies: bool) -> int:
    """The smallest chunk any copying rank chose (both ends of a wire cut it alike); `chunk` where none copies."""
    from mpi4py import MPI

    agreed = comm.allreduce(chunk if copies else _core.MAX_WIRE_CHUNK, op=MPI.MIN)
    return chunk if agreed == _core.MAX_WIRE_CHUNK else agreed


def device_of(comm, device, hosts: list) -> tuple:
    return hosts[comm.Get_rank()], device.info.platform_index, device.info.device_index


def sharing(comm, device, hosts: list, copies: bool = True) -> list:
    """The ranks that copy on this rank's device in the run (same host, platform and device)."""
    mine = device_of(comm, device, hosts)
    return [rank for rank, (other, copying) in enumerate(comm.allgather((mine, copies))) if other == mine and copying]


def calibrate(comm, device, hosts: list, *, copies: bool = True, force: bool = False) -> tuple[Sizing, str]:
    """Collective: this rank's Sizing from the cache, or measured where any
    copying rank's entry is missing, bad or stale (or with force); and why.
    The entry is the one for as many copying ranks on the device as the run has.
    The cache folder is checked before anything is measured: with force
    (fpgacomm tune, whose figures are for the cache) a folder that cannot be
    written is a usage error; otherwise the run measures without caching,
    with one warning line."""
    copiers = sharing(comm, device, hosts, copies)
    key = key_of(device, len(copiers), hosts[comm.Get_rank()]) if copies else None
    cached, why = (None, "asked to measure again") if force else load(key) if copies else (None, "")
    if all(comm.allgather(cached is not None or not copies)):
        if not copies:
            return defaults(device), "this rank stages nothing"
        return cached, why
    writes = copies and copiers[0] == comm.Get_rank()  # one rank per device writes its entry
    caching = _agreed(comm, folder_problem() if writes else "", required=force)
    sizing, measurements = measure(comm, device, copies)
    problem = ""
    if writes and caching:
        try:
            store(key, sizing, measurements)
        except OSError as error:
            problem = f"cannot write the calibration entry {cache_path(key)} ({error.strerror or error})"
    _agreed(comm, problem, required=force, after=True)
    if not copies:
        return defaults(device), "this rank stages nothing"
    return sizing, f"measured ({why})"


def _agreed(comm, problem: str, required: bool, after: bool = False) -> bool:
    """Collective: whether no rank has a problem with the cache. Where one
    has, a usage error on every rank alike when the cache is required, else
    one warning line on rank 0."""
    problem = next((p for p in comm.allgather(problem) if p), "")
    if not problem:
        return True
    mend = "set XDG_CACHE_HOME to a folder that can be written"
    if required:
        from ..params import usage_error

        raise usage_error(
            f"{problem}; {'the figures measured were not cached' if after else 'nothing was measured'}"
            f"; {mend} and run fpgacomm tune again"
        )
    if comm.Get_rank() == 0:
        print(
            f"fpgacomm: warning: {problem}; {'the figures measured are' if after else 'measuring, and'} not cached "
            f"({mend} to keep them)",
            file=sys.stderr,
            flush=True,
        )
    return False


def resolve(comm, device, hosts: list, chunk_bytes: int | None, slots: int | None, stages: bool) -> Sizing:
    """Collective: the staged engine's sizes for a run. chunk_bytes and slots
    None mean auto. stages: this rank stages device memory. Without staging,
    or where copies use the host's cores, the defaults hold and nothing is
    measured; ranks that stage on an accelerator calibrate, as many taking
    turns on each device as the run has."""
    # The calibration's copies are OpenCL's (src/comm/calibration.cpp): a SYCL device keeps the defaults.
    measured = stages and isinstance(device, _core.Device) and not copies_use_host_cores(device)
    if any(comm.allgather(measured)):
        sizing, why = calibrate(comm, device, hosts, copies=measured)
        sizing.why = [why] + sizing.why
        sizing.chunk_bytes = agreed_chunk(comm, sizing.chunk_bytes, measured)
    else:
        sizing = (
            defaults(device) if device is not None else Sizing(chunk_bytes=0, slots=HOST_CORES_SLOTS, why=["no device"])
        )
    if chunk_bytes is not None:
        sizing.chunk_bytes = chunk_bytes
        sizing.why.append(f"chunk {human_bytes(chunk_bytes)} given (--chunk)")
    if slots is not None:
        sizing.slots = slots
        sizing.why.append(f"{slots} slots given (--slots)")
    return sizing


def tune(comm, options) -> list:
    """Collective: opens each rank's device (runtime.devices.DeviceOptions),
    measures again on every rank (fpgacomm tune), stores the entries, and
    returns every rank's report on rank 0 (None elsewhere): its device, the
    entry's file, the sizes chosen and why."""
    from .devices import open_device

    if comm.Get_size() < 2:
        from ..params import usage_error

        raise usage_error(
            "fpgacomm tune measures the copies of ranks taking turns on their devices and the staged "
            "pipeline from rank 0 to rank 1, and this run has 1 rank; start it as the benchmarks run, "
            "e.g. mpirun -np 2 fpgacomm tune --platform NAME"
        )
    hosts = _core.host_names(comm)
    device = open_device(comm, options, hosts)
    sizing, _ = calibrate(comm, device, hosts, force=True)
    key = key_of(device, len(sharing(comm, device, hosts)), hosts[comm.Get_rank()])
    note = (
        "runs on this device keep the defaults (chunk 1 MiB, 4 slots, nothing widened): its copies run on the "
        "host's cores, which the benchmark itself needs"
        if copies_use_host_cores(device)
        else "osu runs with --chunk auto and --slots auto (the defaults) use these figures"
    )
    report = {
        "rank": comm.Get_rank(),
        "key": key,
        "cache": str(cache_path(key)),
        "sizing": sizing.params(),
        "note": note,
    }
    return comm.gather(report, root=0)


def format_report(reports: list) -> str:
    lines = []
    for report in reports:
        key, sizing = report["key"], report["sizing"]
        lines.append(
            f"rank {report['rank']}: {key['device']} ({key['platform']}, driver {key['driver']}) on "
            f"{key['host']}, {key['ranks_sharing_device']} rank(s) sharing it; measured "
            f"{sizing['measured_at']}"
        )
        lines.append(
            f"  chose: chunk {human_bytes(sizing['chunk_bytes'])}, {sizing['slots']} slots, smallest fast copy "
            f"to device {human_bytes(sizing['fast_to_device'])}, to host {human_bytes(sizing['fast_to_host'])}"
        )
        lines.append("  why:")
        lines += [f"    {line}" for line in sizing["why"]]
        lines.append(f"  cached in {report['cache']}; {report['note']}")
    return "\n".join(lines)
