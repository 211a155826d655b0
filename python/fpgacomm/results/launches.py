"""Interleaved launches (`fpgacomm compare --run`): each command run N
times, taking turns (A B A B ...), every launch's output kept in a folder
per command, ready to be compared.

Separate launches, not rounds inside one job, because process placement,
memory layout and the MPI library's choices change from launch to launch,
and on shared machines that is where most of the variation lives; taking
turns spreads the machine's drift over every command alike
(docs/METHODS.md, "Comparing runs").

A command is a shell command: an fpgacomm command (the path of the
launch's Result reaches it through the environment, FPGACOMM_JSON, which
fpgacomm's --json defaults to: the command line stays the user's) or any
program printing OSU Micro-Benchmarks 7.x text (OMB's programs under
mpirun). Folder layout: OUT/A/01.txt (stdout), 01.err (stderr), 01.json
(fpgacomm's Result), and OUT/A/launches.json, the record of the command and
of each launch (status, seconds, 1-minute load average before it and the
cores; "interrupted" where the campaign ended during it).

Each launch runs in a session of its own: when the campaign ends early
(its time limit, a signal), every process of that session is ended
(SIGTERM, then SIGKILL), the ranks of an mpirun too, which Open MPI puts in
process groups of their own. Each command's first launch is checked at
once: a failure, or an output that holds no result, ends the campaign
there rather than after every launch.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

from ..params import usage_error
from . import launch_record
from .result import Result

#: The environment variable that gives an fpgacomm command its --json.
JSON_VARIABLE = "FPGACOMM_JSON"
# Seconds between asking a launch's processes to end (SIGTERM) and killing
# them: mpirun, so asked, ends its ranks within 2 s.
KILL_AFTER = 3.0


def is_fpgacomm(command: str) -> bool:
    """Whether a shell command runs fpgacomm (`fpgacomm ...`, a path to it,
    or `python -m fpgacomm`), possibly under mpirun."""
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise usage_error(f"--run {command!r}: {error}") from None
    return any(os.path.basename(word) == "fpgacomm" for word in words) or any(
        word == "-m" and following == "fpgacomm" for word, following in zip(words, words[1:])
    )


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
        words = shlex.split(command)
        if is_fpgacomm(command) and any(word == "--json" or word.startswith("--json=") for word in words):
            raise usage_error(
                f"--run {command!r}: compare gives each launch its own --json (through "
                f"{JSON_VARIABLE}); leave it out"
            )
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise usage_error(
            f"--out {out}: holds files already; give a new or empty folder (the launches of a "
            "campaign are kept together)"
        )


def run(commands: list, rounds: int, out, *, log=None) -> list:
    """Launches each command `rounds` times, taking turns, keeping every
    output under `out`; returns the command folders (A, B, ...). A launch
    that fails, or a first launch whose output holds no result, stops the
    campaign with a usage error giving its status and the last line of its
    stderr; an interrupt (KeyboardInterrupt: a signal, the time limit) ends
    the launch running, with every process of its session, records it as
    interrupted and goes on as itself, its message naming `out`. What ran
    before stays on disk."""
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
            output = os.path.basename(stem) + (".json" if record["fpgacomm"] else ".txt")
            load = os.getloadavg()[0]
            started = time.monotonic()
            launch = {"launch": number, "output": output, "load_before": load, "cores": cores}
            try:
                status = _launch(record["command"], stem, record["fpgacomm"])
            except KeyboardInterrupt as stop:
                record["launches"].append(
                    {
                        **launch,
                        "status": None,
                        "interrupted": str(stop),
                        "seconds": round(time.monotonic() - started, 3),
                    }
                )
                launch_record.write(folder, record)
                print(
                    f"compare: {stop}: launch {number} of {rounds} of {os.path.basename(folder)} ended with every "
                    f"process it started; the outputs of the launches are in {out}",
                    file=sys.stderr,
                    flush=True,
                )
                stop.reported = True  # the command adds no line after this one
                raise
            seconds = time.monotonic() - started
            record["launches"].append({**launch, "status": status, "seconds": round(seconds, 3)})
            launch_record.write(folder, record)
            if log:
                log(
                    f"compare: launch {number}/{rounds} of {os.path.basename(folder)}: status {status}, "
                    f"{seconds:.1f} s, load {load:.1f} on {cores} cores"
                )
            if status != 0:
                raise usage_error(
                    f"--run {record['command']!r} failed in launch {number} of {rounds} with status "
                    f"{status}: {_last_line(stem + '.err') or '(nothing on stderr)'}; the outputs of "
                    f"the launches so far are kept in {out}"
                )
            if number == 1:
                _check_first(record, os.path.join(folder, output), out)
    return folders


def _launch(command: str, stem: str, fpgacomm: bool) -> int:
    """Runs one launch in a session of its own, its stdout and stderr into
    STEM.txt and STEM.err, an fpgacomm command's Result to STEM.json;
    returns its status. Interrupted while it runs, it ends the session's
    every process before the interrupt goes on."""
    environment = dict(os.environ)
    environment.pop(JSON_VARIABLE, None)
    if fpgacomm:
        environment[JSON_VARIABLE] = os.path.abspath(stem + ".json")
    with open(stem + ".txt", "wb") as stdout, open(stem + ".err", "wb") as stderr:
        process = subprocess.Popen(
            command, shell=True, stdout=stdout, stderr=stderr, env=environment, start_new_session=True
        )
        try:
            return process.wait()
        except BaseException:
            end_session(process.pid)
            process.wait()
            raise


def session_processes(session: int) -> list:
    """The pids of the processes of `session` (their session id, /proc/PID/stat's sixth field)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(int(name))
    return found


def end_session(session: int) -> None:
    """Ends every process of a launch's session: SIGTERM, then SIGKILL to
    those left KILL_AFTER seconds later (mpirun's ranks, in process groups
    of their own, are found by their session)."""
    for number in (signal.SIGTERM, signal.SIGKILL):
        for pid in session_processes(session):
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + KILL_AFTER
        while session_processes(session) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not session_processes(session):
            return


def _check_first(record: dict, path: str, out: str) -> None:
    """A usage error where a command's first launch left no result to
    compare: no fpgacomm Result where one was expected, or text that reads
    as no table of OSU Micro-Benchmarks or another peer."""
    command = record["command"]
    if record["fpgacomm"] and not os.path.exists(path):
        raise usage_error(
            f"--run {command!r}: its first launch wrote no fpgacomm Result (it takes its --json from "
            f"{JSON_VARIABLE}; a command that starts fpgacomm on another host, or through a program "
            f"that clears the environment, does not pass it on); the launch's outputs are in {out}"
        )
    try:
        rows = Result.read(path).rows
    except (OSError, ValueError) as error:
        raise usage_error(
            f"--run {command!r}: the output of its first launch ({path}) holds no result to compare: "
            f"{error}; the launch's outputs are in {out}"
        ) from None
    if not rows:
        raise usage_error(
            f"--run {command!r}: the output of its first launch ({path}) holds no row to compare; "
            f"the launch's outputs are in {out}"
        )


def _last_line(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as file:
        lines = [line.strip() for line in file if line.strip()]
    return lines[-1] if lines else ""
