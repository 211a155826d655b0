"""Interleaved launches (`fpgacomm compare --run`): each command run N
times, taking turns (A B A B ...), every launch's output kept in a folder
per command, ready to be compared.

Separate launches, not rounds inside one job, because process placement,
memory layout and the MPI library's choices change from launch to launch,
and on shared machines that is where most of the variation lives; taking
turns spreads the machine's drift over every command alike
(docs/METHODS.md, "Comparing runs").

A command is a shell command: an fpgacomm command (it gets a --json of the
launch's own) or any program printing OSU Micro-Benchmarks 7.x text (OMB's
programs under mpirun). Folder layout: OUT/A/01.txt (stdout), 01.err
(stderr), 01.json (fpgacomm's Result), and OUT/A/launches.json, the record
of the command and of each launch (status, seconds, 1-minute load average
before it and the cores).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time

from ..params import usage_error
from ..runtime import files
from ..runtime.files import ResultError

#: Each command folder's record of its launches.
LAUNCHES = "launches.json"


def is_fpgacomm(command: str) -> bool:
    """Whether a shell command runs fpgacomm (`fpgacomm ...`, a path to it,
    or `python -m fpgacomm`), possibly under mpirun."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise usage_error(f"--run {command!r}: {error}") from None
    return any(os.path.basename(word) == "fpgacomm" for word in words) or any(
        word == "-m" and following == "fpgacomm" for word, following in zip(words, words[1:]))


def labels(count: int) -> list:
    return [chr(ord("A") + index) for index in range(count)]


def check(commands: list, rounds, out) -> None:
    """Usage errors of a --run campaign, before anything runs."""
    if len(commands) < 2:
        raise usage_error(f"compare --run needs two commands at least (--run 'A' --run 'B'), got {len(commands)}")
    if len(commands) > 26:
        raise usage_error(f"compare --run takes at most 26 commands (A to Z), got {len(commands)}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise usage_error(f"rounds: a whole number of launches of each command, 1 or more; got {rounds!r}")
    for command in commands:
        if not command.strip():
            raise usage_error("--run '': give a command to launch")
        if is_fpgacomm(command) and "--json" in shlex.split(command):
            raise usage_error(f"--run {command!r}: compare adds the --json of each launch itself; leave it out")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise usage_error(f"--out {out}: holds files already; give a new or empty folder (the launches of a "
                          "campaign are kept together)")


def run(commands: list, rounds: int, out, *, log=None) -> list:
    """Launches each command `rounds` times, taking turns, keeping every
    output under `out`; returns the command folders (A, B, ...). A launch
    that fails stops the campaign with a usage error giving its status and
    the last line of its stderr; what ran before it stays on disk."""
    out = os.fspath(out)
    check(commands, rounds, out)
    folders = [os.path.join(out, label) for label in labels(len(commands))]
    records = []
    for folder, command in zip(folders, commands):
        os.makedirs(folder)
        records.append({"command": command, "fpgacomm": is_fpgacomm(command), "rounds": rounds, "launches": []})
    cores = os.cpu_count() or 1
    for number in range(1, rounds + 1):
        for folder, record in zip(folders, records):
            stem = os.path.join(folder, f"{number:02d}")
            command = record["command"] + (f" --json {shlex.quote(stem + '.json')}" if record["fpgacomm"] else "")
            load = os.getloadavg()[0]
            started = time.monotonic()
            with open(stem + ".txt", "wb") as stdout, open(stem + ".err", "wb") as stderr:
                status = subprocess.run(command, shell=True, stdout=stdout, stderr=stderr).returncode
            seconds = time.monotonic() - started
            output = os.path.basename(stem) + (".json" if record["fpgacomm"] else ".txt")
            record["launches"].append({"launch": number, "output": output, "status": status,
                                       "seconds": round(seconds, 3), "load_before": load, "cores": cores})
            _write_record(folder, record)
            if log:
                log(f"compare: launch {number}/{rounds} of {os.path.basename(folder)}: status {status}, "
                    f"{seconds:.1f} s, load {load:.1f} on {cores} cores")
            if status != 0:
                raise usage_error(f"--run {record['command']!r} failed in launch {number} of {rounds} with status "
                                  f"{status}: {_last_line(stem + '.err') or '(nothing on stderr)'}; the outputs of "
                                  f"the launches so far are kept in {out}")
    return folders


def _write_record(folder: str, record: dict) -> None:
    path = os.path.join(folder, LAUNCHES)
    with open(path + ".tmp", "w", encoding="utf-8") as file:
        json.dump(record, file, indent=1)
    os.replace(path + ".tmp", path)


def _last_line(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as file:
        lines = [line.strip() for line in file if line.strip()]
    return lines[-1] if lines else ""


def record(folder) -> dict | None:
    """A command folder's launch record, or None where it has none; a
    ResultError where launches.json is not the record compare --run writes
    (runtime/files.py reads it, every field used is checked)."""
    path = os.path.join(os.fspath(folder), LAUNCHES)
    if not os.path.lexists(path):
        return None
    data = files.read_json(path, what="the record fpgacomm compare --run writes")
    try:
        _check_record(data)
    except ValueError as error:
        raise ResultError(path, f"{error}; it is not the record fpgacomm compare --run writes (rename it, or "
                                "run the campaign again)") from None
    return data


def _check_record(data) -> None:
    """The fields of a launch record that readers use, of their types."""
    files.of_type("the record", data, (dict,), "an object {command, fpgacomm, rounds, launches}")
    files.of_type("command", data.get("command"), (str,), "a command's text")
    launches = files.of_type("launches", data.get("launches"), (list,), "a list of launches")
    for number, launch in enumerate(launches, start=1):
        where = f"launch {number}"
        files.of_type(where, launch, (dict,), "an object {launch, output, status, seconds, load_before, cores}")
        files.of_type(f"{where} output", launch.get("output"), (str,), "a file name")
        files.number(f"{where} status", launch.get("status"), integer=True)
        files.number(f"{where} load_before", launch.get("load_before"), minimum=0, none=True)
        files.number(f"{where} cores", launch.get("cores"), integer=True, minimum=1)
