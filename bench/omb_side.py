"""fpgacomm against OSU Micro-Benchmarks 7.4 itself, test for test, side by side.

    python bench/omb_side.py [--quick] [--tests LIST] [--rounds N] [--ranks N] [--two-hosts NAME]

Builds OMB 7.4 from its source tarball (--omb-tarball) with mpicc in a
folder outside the repository (--omb-build; a build already there from the
same tarball, compiler and flags is reused), then runs every test the two
suites share on host buffers: fpgacomm as `python -m fpgacomm osu TEST ...
--json FILE` under the interpreter --python, and OMB's program, with the
same -m, -i, -x and -W, one mpirun per measurement with ranks bound to
cores, fpgacomm and OMB taking turns to go first from round to round. Each
figure is the median over the rounds; each ratio is fpgacomm's median over
OMB's: latencies for latency-type tests (lower is better), bandwidths or
message rates for the others (higher is better).

Writes the run's report, every figure of every round included, as JSON
(--json), and the section "fpgacomm against OSU Micro-Benchmarks 7.4" of
bench/RESULTS.md (--results): the exact command, the machine, the MPI
library, thread level and datatype each side ran with, the ratios and each
target met or missed. A rerun replaces the section. --report writes the
section from earlier reports without measuring: from a machine whose
results come back as files, or from several runs that each took part of
the tests.

Across hosts: `--two-hosts NAME` runs both sides on the two-host test bed
NAME of scripts/two_hosts.sh (made first, as root), one rank per host.

Ranks: latency, bw, bibw and the one-sided tests on 2; multi_lat, mbw_mr
and the collectives on --ranks. A full run (5 rounds of every test) took
7 minutes on a busy 2-core VM, --quick 5 (starting mpirun dominates).
Exit status: 0 when every target is met, 1 when one is missed or a
measurement failed, 2 on bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402

KiB, MiB = 1 << 10, 1 << 20
DEFAULT_TARBALL = ROOT.parent / "shared" / "peers" / "omb-7.4.tar.gz"
DEFAULT_BUILD = Path(tempfile.gettempdir()) / "fpgacomm-omb-7.4"
DEFAULT_PYTHON = ROOT / ".venv" / "bin" / "python"
DEFAULT_RESULTS = ROOT / "bench" / "RESULTS.md"
TWO_HOSTS_STATE = Path("/run/fpgacomm-two-hosts")  # where scripts/two_hosts.sh keeps each bed
EXIT_USAGE = 2

# OMB prints two decimals unless FLOAT_PRECISION is defined at build time
# (osu_util.h leaves it open for that): an 8-byte latency of 0.15 us would
# be rounded by up to 3 %, all the latency target allows. Only the printing changes.
OMB_CFLAGS = "-g -O2 -DFLOAT_PRECISION=4"

# The tests both suites have, by OMB's folder, and how each is compared.
PT2PT = ("latency", "bw", "bibw", "mbw_mr", "multi_lat")
COLLECTIVES = ("allreduce", "bcast", "gather", "alltoall", "scatter", "allgather", "reduce", "reduce_scatter",
               "barrier")
ONESIDED = ("put_latency", "get_latency", "put_bw", "get_bw", "put_bibw")
FAMILIES = {"pt2pt": PT2PT, "collective": COLLECTIVES, "onesided": ONESIDED}
OMB_DIRECTORIES = {"pt2pt": "c/mpi/pt2pt/standard", "collective": "c/mpi/collective/blocking",
                   "onesided": "c/mpi/one-sided"}
LATENCY_TESTS = ("latency", "multi_lat", "put_latency", "get_latency") + COLLECTIVES
WINDOWED = ("bw", "bibw", "mbw_mr", "put_bw", "get_bw", "put_bibw")
TWO_RANKS = ("latency", "bw", "bibw") + ONESIDED
WINDOW = 64
# One-sided options, the same on both sides: OMB's defaults, except for
# put_bibw, whose default (post-start-complete-wait) fpgacomm does not offer.
ONESIDED_OPTIONS = {"put_bibw": ("allocate", "fence")}
ONESIDED_DEFAULT_OPTIONS = ("allocate", "flush")


def family(test: str) -> str:
    return next(name for name, tests in FAMILIES.items() if test in tests)


def metric(test: str) -> str:
    """The figure a test's ratio compares: latency (s, lower is better),
    bandwidth (B/s) or message_rate (1/s), both higher is better."""
    if test in LATENCY_TESTS:
        return "latency"
    return "message_rate" if test == "mbw_mr" else "bandwidth"


def lower_is_better(test: str) -> bool:
    return metric(test) == "latency"


@dataclass(frozen=True)
class Target:
    """Bounds on fpgacomm / OMB; None leaves that side open."""
    low: float | None = None
    high: float | None = None

    def met(self, ratio: float) -> bool:
        return (self.low is None or ratio >= self.low) and (self.high is None or ratio <= self.high)

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{self.low:g} to {self.high:g}"
        return f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"


@dataclass(frozen=True)
class Case:
    test: str
    size: int  # bytes; per rank for collectives (OMB's convention); 0 for barrier
    target: Target | None = None


def _cases() -> list[Case]:
    cases = [Case("latency", 8, Target(high=1.03)), Case("latency", 4 * MiB)]
    for test in ("bw", "bibw"):
        cases += [Case(test, 8, Target(low=0.95)), Case(test, 4 * MiB, Target(low=0.97))]
    cases.insert(-2, Case("bibw", 1, Target(low=0.95)))  # bibw's smallest message as well
    cases += [Case("mbw_mr", 8, Target(low=0.95)), Case("mbw_mr", 4 * MiB), Case("multi_lat", 8),
              Case("multi_lat", 4 * MiB)]
    for test in ("allreduce", "bcast", "gather", "alltoall"):
        cases += [Case(test, 8, Target(high=1.05)), Case(test, MiB, Target(high=1.03))]
    for test in ("scatter", "allgather", "reduce", "reduce_scatter"):
        cases += [Case(test, 8), Case(test, MiB)]
    cases.append(Case("barrier", 0))
    for test in ("put_bw", "get_bw", "put_latency"):
        cases += [Case(test, size, Target(low=0.90, high=1.10)) for size in (8, 64 * KiB, MiB)]
    for test in ("get_latency", "put_bibw"):
        cases += [Case(test, 8), Case(test, MiB)]
    return cases


CASES = _cases()
TESTS = tuple(dict.fromkeys(case.test for case in CASES))


def work(test: str, size: int, quick: bool) -> tuple[int, int]:
    """(timed iterations, warm-up) given to both sides: long enough for a
    stable mean (tens to hundreds of milliseconds per measurement), a tenth
    of that in quick mode."""
    small = size <= 8 * KiB
    if test in WINDOWED:
        timed, warmup = (2000, 200) if small else ((100, 10) if size <= 64 * KiB else (20, 2))
    elif family(test) == "collective":
        timed, warmup = (10000, 1000) if small else (300, 30)
    else:
        timed, warmup = (20000, 1000) if small else ((2000, 200) if size <= 64 * KiB else (300, 30))
    if quick:
        timed, warmup = max(timed // 10, 5), max(warmup // 10, 1)
    return timed, warmup


def ranks_for(test: str, ranks: int) -> int:
    return 2 if test in TWO_RANKS else ranks


def common_flags(case: Case, quick: bool) -> list[str]:
    """OMB's flags, which fpgacomm's osu takes with the same meaning."""
    timed, warmup = work(case.test, case.size, quick)
    flags = [] if case.test == "barrier" else ["-m", f"{case.size}:{case.size}"]
    flags += ["-i", str(timed), "-x", str(warmup)]
    if case.test in WINDOWED:
        flags += ["-W", str(WINDOW)]
    if family(case.test) == "onesided":
        creation, sync = ONESIDED_OPTIONS.get(case.test, ONESIDED_DEFAULT_OPTIONS)
        flags += ["-w", creation, "-s", sync]
    return flags


# ---------------------------------------------------------------- parsing

def parse_omb(text: str, test: str) -> dict:
    """OMB's printed table: {"datatype": name or None, "rows": {size: value}}
    with values in SI units (s, B/s, messages/s). osu_barrier prints its
    latency without a size; it comes back as size 0. Raises ValueError
    when no row is found."""
    datatype, rows = None, {}
    for line in text.splitlines():
        line = line.strip()
        found = re.match(r"# Datatype: (\S+?)\.?$", line)
        if found:
            datatype = found.group(1)
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        try:
            numbers = [float(field) for field in fields]
        except ValueError:
            continue  # a warning or other text among the rows
        if test == "barrier" and len(numbers) == 1:
            rows[0] = numbers[0] * 1e-6
        elif len(numbers) >= 2 and numbers[0].is_integer():
            size = int(numbers[0])
            if test == "mbw_mr":
                if len(numbers) < 3:
                    raise ValueError(f"osu_mbw_mr printed no message rate for {size} B: {line!r}")
                rows[size] = numbers[2]
            else:
                rows[size] = numbers[1] * (1e-6 if metric(test) == "latency" else 1e6)
    if not rows:
        raise ValueError(f"no table rows in osu_{test}'s output")
    return {"datatype": datatype, "rows": rows}


def fpgacomm_figure(result: dict, test: str, size: int) -> float:
    """The figure of one size from an fpgacomm Result's JSON (dict)."""
    key = {"latency": "latency_avg", "bandwidth": "bandwidth", "message_rate": "message_rate"}[metric(test)]
    for row in result["rows"]:
        if row["size"] == size:
            return float(row[key])
    raise ValueError(f"fpgacomm osu {test}: no row of {size} B")


def fpgacomm_context(result: dict) -> dict:
    """What fpgacomm's Result says about how it ran."""
    env, params = result.get("env", {}), result.get("params", {})
    levels = env.get("mpi_thread_level") or {}
    library = (env.get("mpi_library") or "").replace("\x00", "").strip()
    return {"mpi_library": library.splitlines()[0].split(",")[0] if library else None,
            "thread_level": f"{levels.get('provided')} (asked {levels.get('requested')})" if levels else None,
            "datatype": params.get("datatype"),
            "version": f"fpgacomm {env.get('fpgacomm_version')} (git {env.get('git_revision')})"}


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def compare(case: Case, fpgacomm: list, omb: list) -> dict:
    """Medians, their ratio (fpgacomm / OMB), the per-round ratios' range and
    the verdict. Rounds where either side failed are left out of the ratios
    but not of the medians of the side that succeeded."""
    ours, theirs = median([v for v in fpgacomm if v is not None]), median([v for v in omb if v is not None])
    paired = [a / b for a, b in zip(fpgacomm, omb) if a is not None and b]
    ratio = ours / theirs if ours is not None and theirs else None
    verdict = None
    if case.target is not None:
        verdict = "failed" if ratio is None else ("met" if case.target.met(ratio) else "missed")
    return {"fpgacomm": ours, "omb": theirs, "ratio": ratio,
            "round_ratios": [min(paired), max(paired)] if paired else None, "verdict": verdict}


# ---------------------------------------------------------------- building OMB

class UsageError(Exception):
    """Bad input or a missing prerequisite: one message, exit status 2."""


def omb_programs(build: Path) -> dict[str, Path]:
    """Each shared test's OMB program inside a build folder."""
    return {test: build / "src" / OMB_DIRECTORIES[family(test)] / f"osu_{test}" for test in TESTS}


def build_omb(tarball: Path, build: Path, jobs: int, log=print) -> dict[str, Path]:
    """OMB 7.4's programs of the shared tests, built with mpicc in `build`
    (outside the repository), or reused from there when the same tarball
    was built with the same compiler and flags."""
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        raise UsageError("mpicc is not on PATH; install Open MPI's development package (scripts/setup.sh does)")
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    compiler = subprocess.run([mpicc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    stamp = {"tarball_sha256": digest, "cflags": OMB_CFLAGS, "mpicc": mpicc, "compiler": compiler}
    stamp_file, log_file = build / "fpgacomm-omb-build.json", build / "fpgacomm-omb-build.log"
    programs = omb_programs(build)
    if stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp and all(
            p.exists() for p in programs.values()):
        log(f"OMB 7.4: reusing the build in {build}")
        return programs
    if build.exists() and any(build.iterdir()) and not (stamp_file.exists() or log_file.exists()):
        raise UsageError(f"{build} holds files that are not an OMB build of this script; give an empty or new "
                         "folder with --omb-build")
    started = time.monotonic()
    log(f"OMB 7.4: building in {build} (log: {log_file})")
    shutil.rmtree(build / "src", ignore_errors=True)
    stamp_file.unlink(missing_ok=True)
    (build / "src").mkdir(parents=True)
    subprocess.run(["tar", "xzf", str(tarball), "-C", str(build / "src")], check=True)
    source = build / "src"
    if not (source / "configure").exists():  # a tarball with one top folder
        (top,) = [p for p in source.iterdir() if p.is_dir()]
        for item in top.iterdir():
            item.rename(source / item.name)
        top.rmdir()
    with open(log_file, "w") as output:
        def step(*command, cwd=source):
            subprocess.run(list(command), cwd=cwd, stdout=output, stderr=subprocess.STDOUT, check=True)

        try:
            step("./configure", "CC=mpicc", "CXX=mpicxx", f"CFLAGS={OMB_CFLAGS}")
            for directory in OMB_DIRECTORIES.values():
                names = [p.name for p in programs.values() if p.parent == source / directory]
                step("make", f"-j{jobs}", *names, cwd=source / directory)
        except subprocess.CalledProcessError as error:
            raise UsageError(f"building OMB failed ({' '.join(map(str, error.cmd))}); see {log_file}")
    stamp_file.write_text(json.dumps(stamp, indent=1))
    log(f"OMB 7.4: built in {time.monotonic() - started:.0f} s")
    return programs


# ---------------------------------------------------------------- running

def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def mpirun_command(ranks: int, extra: list[str]) -> list[str]:
    """Ranks bound to cores; oversubscribed (and then unbound: binding two
    ranks to one core would serialise them) only when ranks exceed cores.
    Extra arguments that say how to bind (the two-host bed's --bind-to
    none) bind instead."""
    if "--bind-to" in extra:
        placement = []
    else:
        placement = ["--bind-to", "core"] if ranks <= cores() else ["--oversubscribe", "--bind-to", "none"]
    return ["mpirun", "-np", str(ranks), *placement, *extra]


def run_measurement(command: list[str], limit: float) -> tuple[int | None, str]:
    """Runs one mpirun in its own process group; on the time limit, ends
    that group. Returns (exit status or None on time-out, output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=limit)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return None, output


def failure(status: int | None, output: str, limit: float) -> str:
    """Why a measurement failed, in one line: fpgacomm's own message when it
    printed one (mpirun's report of the exit follows it), else the last lines."""
    if status is None:
        return f"time limit of {limit:g} s"
    # mpirun's rules of dashes may run on from a rank's last line.
    lines = [line.strip().rstrip("-=") for line in output.splitlines() if line.strip().strip("-=")]
    own = [line for line in lines if line.startswith("fpgacomm")]
    return f"exit {status}: {own[-1] if own else ' | '.join(lines[-3:])}"


class Runner:
    """Runs one measurement of either side and returns (figure or None, note)."""

    def __init__(self, args, programs: dict[str, Path], scratch: Path):
        self.args, self.programs, self.scratch = args, programs, scratch
        self.contexts = {"fpgacomm": {}, "omb": {}}

    def fpgacomm(self, case: Case) -> tuple[float | None, str]:
        output_file = self.scratch / f"{case.test}_{case.size}.json"
        output_file.unlink(missing_ok=True)
        status, output = run_measurement(fpgacomm_command(case, self.args, str(output_file)),
                                         self.args.test_timeout + 10)
        if status != 0:
            return None, failure(status, output, self.args.test_timeout)
        try:
            result = json.loads(output_file.read_text())
            value = fpgacomm_figure(result, case.test, case.size)
        except (OSError, ValueError, KeyError) as error:
            return None, f"its Result: {error}"
        self.contexts["fpgacomm"][case.test] = fpgacomm_context(result)
        return value, ""

    def omb(self, case: Case) -> tuple[float | None, str]:
        value, note, datatype = run_omb(self.programs[case.test], case.test, case.size,
                                        common_flags(case, self.args.quick), ranks_for(case.test, self.args.ranks),
                                        shlex.split(self.args.mpirun_args), self.args.test_timeout)
        if value is not None:
            self.contexts["omb"][case.test] = {"datatype": datatype}
        return value, note


def run_omb(program: Path, test: str, size: int, flags: list[str], ranks: int, extra: list[str],
            limit: float) -> tuple[float | None, str, str | None]:
    """One mpirun of an OMB program: (the figure of `size` in SI units or
    None, why not, the datatype OMB printed)."""
    status, output = run_measurement(mpirun_command(ranks, extra) + [str(program), *flags], limit)
    if status != 0:
        return None, failure(status, output, limit), None
    try:
        parsed = parse_omb(output, test)
    except ValueError as error:
        return None, str(error), None
    value = parsed["rows"].get(size)
    return value, "" if value is not None else f"no row of {size} B in OMB's output", parsed["datatype"]


def fpgacomm_command(case: Case, args, output_file: str) -> list[str]:
    """One fpgacomm measurement; its own watchdog ends it at the time limit too."""
    return mpirun_command(ranks_for(case.test, args.ranks), shlex.split(args.mpirun_args)) + [
        str(args.python), "-m", "fpgacomm", "--timeout", f"{args.test_timeout:g}", "osu", case.test,
        *common_flags(case, args.quick), "--json", output_file]


def command_for(case: Case, args, programs: dict[str, Path], side: str) -> str:
    """The mpirun command line of one measurement, as the report records it."""
    if side == "omb":
        return shlex.join(mpirun_command(ranks_for(case.test, args.ranks), shlex.split(args.mpirun_args)) + [
            str(programs[case.test]), *common_flags(case, args.quick)])
    return shlex.join(fpgacomm_command(case, args, "FILE"))


def mpi_init_thread_level(python: Path) -> str:
    """The thread level MPI_Init gives in this MPI (what OMB runs at: it calls
    MPI_Init), asked through mpi4py with its MPI_Init_thread call turned off."""
    probe = ("import mpi4py; mpi4py.rc.threads = False; from mpi4py import MPI; "
             "print({0: 'single', 1: 'funneled', 2: 'serialized', 3: 'multiple'}[MPI.Query_thread()])")
    status, output = run_measurement(mpirun_command(1, []) + [str(python), "-c", probe], 60)
    lines = output.strip().splitlines()
    return lines[-1] if status == 0 and lines else "unknown (the probe failed)"


# ---------------------------------------------------------------- reporting

def machine() -> dict:
    """Where the run happens: host, CPU, cores, system, MPI."""
    def first(path: str, prefix: str, separator: str) -> str | None:
        try:
            return next(line.split(separator, 1)[1].strip().strip('"') for line in Path(path).read_text().splitlines()
                        if line.startswith(prefix))
        except (OSError, StopIteration):
            return None

    launcher = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()
    library = re.match(r"mpirun \((.+)\) (\S+)", launcher[0]) if launcher else None
    return {"host": platform.node(), "cpu": first("/proc/cpuinfo", "model name", ":") or platform.machine(),
            "cores": cores(), "os": first("/etc/os-release", "PRETTY_NAME=", "=") or platform.system(),
            "mpi": " ".join(library.groups()) if library else (launcher[0] if launcher else "unknown"),
            "mpicc": shutil.which("mpicc")}


def contexts(runner: Runner, omb_thread_level: str, where: dict) -> dict:
    """Per side: MPI library, thread level, and the datatype of each test."""
    ours = runner.contexts["fpgacomm"]

    def datatypes(per_test: dict) -> str:
        seen: dict[str, list] = {}
        for test, context in per_test.items():
            name = "none (no data)" if test == "barrier" else context.get("datatype") or "not recorded"
            seen.setdefault(name, []).append(test)
        return "; ".join(f"{name}: {', '.join(tests)}" for name, tests in seen.items()) or "-"

    def joined(key: str) -> str:
        return ", ".join(sorted({c[key] for c in ours.values() if c.get(key)})) or "-"

    return {"fpgacomm": {"mpi_library": joined("mpi_library"), "thread_level": joined("thread_level"),
                         "datatypes": datatypes(ours), "version": joined("version")},
            "omb": {"mpi_library": f"{where['mpi']} (built with {where['mpicc']})",
                    "thread_level": f"{omb_thread_level} (MPI_Init, no level asked)",
                    "datatypes": datatypes(runner.contexts["omb"])}}


def format_size(size: int) -> str:
    for unit, scale in (("MiB", MiB), ("KiB", KiB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def format_figure(test: str, value: float | None) -> str:
    if value is None:
        return "-"
    kind = metric(test)
    if kind == "latency":
        return f"{value * 1e6:.3f} us"
    if kind == "message_rate":
        return f"{value:.4g} /s"
    # Small messages between hosts move well under a GB/s.
    return f"{value / 1e9:.3f} GB/s" if value >= 1e8 else f"{value / 1e6:.3f} MB/s"


def row_case(row: dict) -> Case:
    target = row["target"]
    return Case(row["test"], row["size"], Target(target["low"], target["high"]) if target else None)


def table_lines(rows: list[dict]) -> list[str]:
    lines = ["| test | size | ranks | -i / -x | compared | fpgacomm | OMB 7.4 | fpgacomm / OMB | rounds' range "
             "| target | |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        case = row_case(row)
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3f}"
        spread = "-" if row["round_ratios"] is None else "{:.3f} to {:.3f}".format(*row["round_ratios"])
        compared = f"{metric(case.test).replace('_', ' ')} ({'lower' if lower_is_better(case.test) else 'higher'} " \
                   "is better)"
        verdict = {"met": "met", "missed": "**missed**", "failed": "**failed**"}.get(row["verdict"], "")
        if row["ratio"] is None:
            verdict = "**failed**"
        lines.append(f"| {case.test} | {format_size(case.size) if case.test != 'barrier' else '-'} | {row['ranks']} "
                     f"| {row['iterations']} | {compared} | {format_figure(case.test, row['fpgacomm'])} "
                     f"| {format_figure(case.test, row['omb'])} | {ratio} | {spread} "
                     f"| {case.target or '-'} | {verdict} |")
    return lines


SECTION_NAME = re.compile(r"^[A-Za-z0-9 .,_()]+(-[A-Za-z0-9 .,_()]+)*$")


def marks(name: str) -> tuple[str, str]:
    """The comments around a section; each machine's section has its name."""
    return (f"<!-- bench/omb_side.py, {name}: begin (a rerun replaces everything up to the end mark) -->",
            f"<!-- bench/omb_side.py, {name}: end -->")


METHOD = ("Both sides on host buffers, ranks bound to cores, one mpirun per measurement with the same `-m`, `-i`, "
          "`-x` and `-W 64` (one-sided: `-w allocate -s flush`, put_bibw `-s fence`), fpgacomm and OMB taking "
          "turns to go first from round to round. Each figure is the median over the rounds; the ratio is "
          "fpgacomm's median over OMB's: latencies for latency-type tests (lower is better), bandwidths or message "
          "rates for the others (higher is better); the range is that of the ratios within each round. Collective "
          "sizes are per rank. OMB is built with `-DFLOAT_PRECISION=4` (four decimals in its printout instead of "
          "two; nothing else changes).")


TWO_HOSTS_NOTE = (" (the two-host test bed `{name}`, made first with `scripts/two_hosts.sh up {name}` as root: two "
                  "network namespaces joined by a bridge, MPI over TCP between them, ranks unbound, one rank "
                  "per host in the two-rank tests, multi-pair tests' pairs across the hosts)")


def merged_rows(parts: list[dict]) -> list[dict]:
    """Every part's rows in the cases' order; a later part's row of the same
    test and size replaces an earlier one's."""
    rows = {}
    for number, part in enumerate(parts, 1):
        for row in part["rows"]:
            rows[(row["test"], row["size"])] = dict(row, part=number)
    order = {(case.test, case.size): index for index, case in enumerate(CASES)}
    return sorted(rows.values(), key=lambda row: order.get((row["test"], row["size"]), len(order)))


def section(parts: list[dict], name: str) -> str:
    """bench/RESULTS.md's section `name` from one run's report, or several
    runs' (each a subset of the tests, e.g. on a machine that gives 10
    minutes a command)."""
    rows = merged_rows(parts)
    begin, end = marks(name)
    lines = [begin, f"## fpgacomm against OSU Micro-Benchmarks 7.4, side by side ({name}): `bench/omb_side.py`", ""]
    rehearsals = [part["setup"]["rehearsal"] for part in parts if part["setup"]["rehearsal"]]
    if rehearsals:
        lines += [f"**Rehearsal, not the record** ({'; '.join(rehearsals)}): these figures only show that the "
                  "script runs end to end.", ""]
    method = METHOD
    if any(part["setup"].get("two_hosts") for part in parts):
        method = method.replace("ranks bound to cores", "ranks unbound on the two-host test bed (its hosts share "
                                "the machine's cores)")
    lines += [method, ""]
    for number, part in enumerate(parts, 1):
        where, setup = part["machine"], part["setup"]
        label = f"Run {number} of {len(parts)}: " if len(parts) > 1 else ""
        lines += ["    " + part["command"], "",
                  f"{label}{part['started']} on {where['host']} ({where['cpu']}, {where['cores']} cores, "
                  f"{where['os']}), {where['mpi']}; {setup['rounds_run']} of {setup['rounds']} rounds"
                  f"{', a tenth of the iterations (quick mode)' if setup['quick'] else ''}, collectives and "
                  f"multi-pair tests on {setup['ranks']} ranks"
                  f"{', extra mpirun arguments ' + repr(setup['mpirun_args']) if setup['mpirun_args'] else ''}"
                  f"{TWO_HOSTS_NOTE.format(name=setup['two_hosts']) if setup.get('two_hosts') else ''}; "
                  f"{part['seconds']:.0f} s in all, load average {where['load'][0]:.1f} at the start and "
                  f"{where['load'][1]:.1f} at the end; every round's figures in `{part['json']}`."
                  f"{' ' + setup['note'] if setup['note'] else ''}", ""]
    lines += ["| run | side | MPI library | thread level | datatype |", "|---|---|---|---|---|"]
    for number, part in enumerate(parts, 1):
        for side, name in (("fpgacomm", part["contexts"]["fpgacomm"]["version"]), ("omb", "OMB 7.4")):
            context = part["contexts"][side]
            lines.append(f"| {number} | {name} | {context['mpi_library']} | {context['thread_level']} "
                         f"| {context['datatypes']} |")
    met = sum(row["verdict"] == "met" for row in rows)
    targeted = sum(row["target"] is not None for row in rows)
    lines += ["", f"Targets met: {met} of {targeted}.", "", *table_lines(rows)]
    failures = [f"- {row['test']} {format_size(row['size'])}, {side}, {note}" for row in rows
                for side, note in row["failures"]]
    if failures:
        lines += ["", "Failed measurements:", *failures]
    return "\n".join([*lines, "", end]) + "\n"


def write_section(path: Path, text: str, name: str) -> None:
    """Replaces the section `name` between its marks, or appends it."""
    old = path.read_text() if path.exists() else ""
    begin_mark, end_mark = marks(name)
    start, end = old.find(begin_mark), old.find(end_mark)
    if start >= 0 and end > start:
        rest = old[end + len(end_mark):]
        new = old[:start] + text + (rest[1:] if rest.startswith("\n") else rest)
    else:
        new = old.rstrip("\n") + "\n\n" + text if old else text
    path.write_text(new)


# ---------------------------------------------------------------- driver

def select(tests: str) -> list[str]:
    chosen = []
    for name in (t.strip() for t in tests.split(",") if t.strip()):
        if name in FAMILIES:
            chosen += FAMILIES[name]
        elif name in TESTS:
            chosen.append(name)
        else:
            raise UsageError(f"unknown test '{name}' in --tests; choose among {', '.join(TESTS)} or the groups "
                             f"{', '.join(FAMILIES)}")
    return list(dict.fromkeys(chosen))


def add_omb_options(parser: argparse.ArgumentParser) -> None:
    """Where OMB's source comes from and where it is built (shared with bench/pt2pt.py)."""
    parser.add_argument("--omb-tarball", type=Path, default=DEFAULT_TARBALL, metavar="FILE",
                        help="OSU Micro-Benchmarks 7.4 source tarball (default: %(default)s)")
    parser.add_argument("--omb-build", type=Path, default=DEFAULT_BUILD, metavar="DIR",
                        help="folder outside the repository where OMB is built; a build already there from "
                             "the same tarball, compiler and flags is reused (default: %(default)s)")


def omb_from_options(args, log=print) -> dict[str, Path]:
    """Checks the OMB options and returns the built programs."""
    tarball, build = args.omb_tarball.resolve(), args.omb_build.resolve()
    if not tarball.is_file():
        raise UsageError(f"OMB tarball {tarball} not found; give the OSU Micro-Benchmarks 7.4 source tarball "
                         "with --omb-tarball")
    if build == ROOT or ROOT in build.parents:
        raise UsageError(f"--omb-build {build} is inside the repository; give a folder outside it (such as "
                         f"{DEFAULT_BUILD})")
    return build_omb(tarball, build, max(1, cores()), log)


def parse_arguments(argv: list[str]):
    parser = argparse.ArgumentParser(prog="omb_side.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_omb_options(parser)
    parser.add_argument("--python", type=Path, default=DEFAULT_PYTHON,
                        help="interpreter with fpgacomm installed, started by mpirun (default: %(default)s)")
    parser.add_argument("--mpirun-args", default="", metavar="ARGS",
                        help="extra mpirun arguments for both sides, as one string (e.g. \"--mca btl self,vader\")")
    parser.add_argument("--two-hosts", metavar="NAME",
                        help="run every measurement across the two-host test bed NAME (first, as root: "
                             "scripts/two_hosts.sh up NAME): its mpirun options, unbound as it says, and --map-by "
                             "node, so that the two ranks of latency, bw, bibw and the one-sided tests sit on "
                             "different hosts and the pairs of multi_lat and mbw_mr cross them")
    parser.add_argument("--tests", default=",".join(FAMILIES), metavar="LIST",
                        help=f"comma-separated tests or groups ({', '.join(FAMILIES)}; default all); tests: "
                             f"{', '.join(TESTS)}")
    parser.add_argument("--rounds", type=int, metavar="N", help="rounds, each measuring both sides once (default 5; quick 3)")
    parser.add_argument("--ranks", type=int, default=4 if cores() >= 4 else 2, metavar="N",
                        help="ranks of multi_lat, mbw_mr and the collectives: even (default here %(default)s: 4 "
                             "where the machine has 4 cores or more, else 2)")
    parser.add_argument("--quick", action="store_true",
                        help="a tenth of the iterations and 3 rounds; the section says it is a rehearsal")
    parser.add_argument("--rehearsal", metavar="WHY", default="",
                        help="mark the section as a rehearsal, saying why (e.g. 'a shared, busy machine')")
    parser.add_argument("--note", default="", help="a sentence for the section (e.g. the machine's load)")
    parser.add_argument("--test-timeout", type=float, default=120.0, metavar="SECONDS",
                        help="time limit of each mpirun (default: %(default)s)")
    parser.add_argument("--deadline", type=float, metavar="SECONDS",
                        help="start no round that would end after this many seconds, judging by the last round "
                             "(for machines that limit a command's time); the section says how many ran")
    parser.add_argument("--section", metavar="NAME",
                        help="the section's name, one per machine, in its title and marks (default: 'N cores', "
                             "from this machine; with --report, the name the first run used)")
    parser.add_argument("--results", metavar="FILE",
                        help="Markdown file whose omb_side section is written or replaced, '' for none (default: "
                             "bench/RESULTS.md)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="the run's report with every figure of every round (default: "
                             "bench/results/omb_side-HOST.json)")
    parser.add_argument("--report", type=Path, nargs="+", metavar="JSON",
                        help="measure nothing: write the section from these reports (--json files of earlier "
                             "runs, e.g. of other machines or of parts of the tests; a later file's row of a test "
                             "and size replaces an earlier one's)")
    args = parser.parse_args(argv)
    args.results = DEFAULT_RESULTS if args.results is None else (Path(args.results) if args.results else None)
    if args.section is not None and not SECTION_NAME.match(args.section):
        raise UsageError(f"--section {args.section!r}: use letters, digits, spaces and . , _ ( ) -, no '--'")
    if args.report:
        measuring = [f"--{name.replace('_', '-')}" for name in ("omb_tarball", "omb_build", "python", "mpirun_args",
                                                                "two_hosts",
                                                                "tests", "rounds", "ranks", "quick", "rehearsal",
                                                                "note", "test_timeout", "deadline", "json")
                     if getattr(args, name) != parser.get_default(name)]
        if measuring:
            raise UsageError(f"--report measures nothing, so {', '.join(measuring)} would do nothing; give those "
                             "options to the run that measures")
        missing = [str(path) for path in args.report if not path.is_file()]
        if missing:
            raise UsageError(f"no report at {', '.join(missing)}; give --json files of earlier runs")
        return args
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, got {args.rounds}")
    if args.ranks < 2 or args.ranks % 2:
        raise UsageError(f"--ranks must be even and at least 2 (multi_lat and mbw_mr pair the ranks), got "
                         f"{args.ranks}")
    for name in ("test_timeout", "deadline"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive, got {value:g}")
    if args.two_hosts:
        bed = TWO_HOSTS_STATE / args.two_hosts / "mpirun-options"
        if not bed.is_file():
            raise UsageError(f"no two-host test bed {args.two_hosts!r} ({bed} is missing); make it first, as root: "
                             f"scripts/two_hosts.sh up {args.two_hosts}")
        args.mpirun_args = " ".join([bed.read_text().strip(), "--map-by node", args.mpirun_args]).strip()
    args.section = args.section or (f"two hosts on {cores()} cores" if args.two_hosts else f"{cores()} cores")
    if args.quick and not args.rehearsal:
        args.rehearsal = "quick mode"
    args.selected = select(args.tests)
    if not args.selected:
        raise UsageError("--tests names no test")
    args.python = args.python if args.python.is_absolute() else Path.cwd() / args.python
    if not os.access(args.python, os.X_OK):
        raise UsageError(f"no interpreter at {args.python}; run scripts/setup.sh, or give --python")
    if subprocess.run([str(args.python), "-c", "import fpgacomm._core"], capture_output=True).returncode:
        raise UsageError(f"{args.python} cannot import fpgacomm; run scripts/setup.sh (FPGACOMM_PYTHON=PYTHON "
                         "scripts/setup.sh for another interpreter), or give --python")
    if shutil.which("mpirun") is None:
        raise UsageError("mpirun is not on PATH; install Open MPI (scripts/setup.sh does)")
    args.json = args.json or ROOT / "bench" / "results" / f"omb_side-{platform.node()}.json"
    return args


def shown_path(path: Path) -> str:
    """A path as the section shows it: relative to the repository when inside it."""
    path = path.absolute()
    return str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)


def reproduce_command(argv: list[str]) -> str:
    return shlex.join([shown_path(Path(sys.executable)), "bench/omb_side.py", *argv])


def measure(args, programs: dict[str, Path], argv: list[str]) -> dict:
    """Every case of the selected tests, round after round; the run's report."""
    started, clock = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic()
    load_at_start = os.getloadavg()[0]
    cases = [case for case in CASES if case.test in args.selected]
    records = {case: {"fpgacomm": [], "omb": [], "failures": [], "seconds": []} for case in cases}
    rounds_run, last_round = 0, 0.0
    with tempfile.TemporaryDirectory(prefix="omb_side-") as scratch:
        runner = Runner(args, programs, Path(scratch))
        for number in range(args.rounds):
            if args.deadline and number and time.monotonic() - clock + last_round > args.deadline:
                print(f"stopping after {number} rounds: another would pass --deadline {args.deadline:g} s")
                break
            round_clock = time.monotonic()
            for case in cases:
                record = records[case]
                for side in ("fpgacomm", "omb") if number % 2 == 0 else ("omb", "fpgacomm"):
                    side_clock = time.monotonic()
                    value, note = getattr(runner, side)(case)
                    record["seconds"].append((side, round(time.monotonic() - side_clock, 2)))
                    record[side].append(value)
                    if note:
                        record["failures"].append((side, f"round {number + 1}: {note}"))
                print(f"round {number + 1}/{args.rounds} {case.test:>14} {format_size(case.size):>7}: fpgacomm "
                      f"{format_figure(case.test, record['fpgacomm'][-1]):>13}, OMB "
                      f"{format_figure(case.test, record['omb'][-1]):>13}", flush=True)
            rounds_run, last_round = number + 1, time.monotonic() - round_clock
        omb_thread_level = mpi_init_thread_level(args.python)
    where = dict(machine(), load=[load_at_start, os.getloadavg()[0]])
    rows = []
    for case, record in records.items():
        timed, warmup = work(case.test, case.size, args.quick)
        rows.append({"test": case.test, "size": case.size,
                     "target": {"low": case.target.low, "high": case.target.high} if case.target else None,
                     "ranks": ranks_for(case.test, args.ranks), "iterations": f"{timed} / {warmup}",
                     **compare(case, record["fpgacomm"], record["omb"]), "failures": record["failures"],
                     "rounds": {"fpgacomm": record["fpgacomm"], "omb": record["omb"]}, "seconds": record["seconds"],
                     "commands": {side: command_for(case, args, programs, side) for side in ("fpgacomm", "omb")}})
    return {"command": reproduce_command(argv), "json": shown_path(args.json), "started": started,
            "seconds": time.monotonic() - clock,
            "machine": where, "contexts": contexts(runner, omb_thread_level, where),
            "setup": {"section": args.section, "rounds": args.rounds, "rounds_run": rounds_run, "ranks": args.ranks, "quick": args.quick,
                      "rehearsal": args.rehearsal, "note": args.note, "mpirun_args": args.mpirun_args,
                      "two_hosts": args.two_hosts},
            "rows": rows}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_arguments(argv)
        if args.report:
            # Each report's figures are where it lies now, not where it was written.
            parts = [dict(json.loads(path.read_text()), json=shown_path(path)) for path in args.report]
        else:
            parts = [measure(args, omb_from_options(args), argv)]
    except UsageError as error:
        print(f"omb_side: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    rows = merged_rows(parts)
    print("\n" + "\n".join(table_lines(rows)))
    if not args.report:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(parts[0], indent=1))
        print(f"\nwrote {args.json}")
    if args.results:
        name = args.section or parts[0]["setup"]["section"]
        write_section(args.results, section(parts, name), name)
        print(f"wrote the section '{name}' of {args.results}")
    return 1 if any(row["ratio"] is None or row["verdict"] == "missed" for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
