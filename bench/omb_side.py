"""fpgacomm against OSU Micro-Benchmarks 7.4 itself, test for test: a thin
use of `fpgacomm compare --run`.

    python bench/omb_side.py [--tests LIST] [--rounds N] [--quick] [--ranks N] [--two-hosts NAME]

Builds OMB 7.4 from its source tarball (--omb-tarball) with mpicc in a
folder outside the repository (--omb-build; a build already there from the
same tarball, compiler and flags is reused, and programs it lacks are
added), then, for every case (a test the two suites share at one size, on
host buffers), runs `fpgacomm.compare(run=[OMB's program, fpgacomm osu
TEST], rounds=N)`: the two commands launched in turn, A B A B, one mpirun
each, ranks bound to cores, with the same -m, -i, -x and -W; every launch's
output kept under --out. Each case's verdict is compare's: fpgacomm's
figure over OMB's (latency for latency-type tests, lower is better;
bandwidth or message rate for the others, higher is better) with its 95 %
interval (Hodges-Lehmann) and the Mann-Whitney test, and a target, where
the case has one, is met when the whole interval lies inside it, missed when
the whole interval lies outside, undecided otherwise.

Writes the comparisons as JSON (--json) and the section "fpgacomm against
OSU Micro-Benchmarks 7.4" of bench/RESULTS.md (--results): the command, the
machine and its load, and per case the verdict with its interval. --report
writes the section from earlier --json files without measuring.

Exit status: 0 when no target is missed and nothing failed, 1 otherwise, 2
on bad input.
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
# be rounded by up to 3 %. Only the printing changes.
OMB_CFLAGS = "-g -O2 -DFLOAT_PRECISION=4"

# The tests both suites have, by OMB's folder.
PT2PT = ("latency", "bw", "bibw", "mbw_mr", "multi_lat")
COLLECTIVES = (
    "allreduce",
    "bcast",
    "gather",
    "alltoall",
    "scatter",
    "allgather",
    "reduce",
    "reduce_scatter",
    "barrier",
)
ONESIDED = ("put_latency", "get_latency", "put_bw", "get_bw", "put_bibw")
FAMILIES = {"pt2pt": PT2PT, "collective": COLLECTIVES, "onesided": ONESIDED}
OMB_DIRECTORIES = {
    "pt2pt": "c/mpi/pt2pt/standard",
    "collective": "c/mpi/collective/blocking",
    "onesided": "c/mpi/one-sided",
}
WINDOWED = ("bw", "bibw", "mbw_mr", "put_bw", "get_bw", "put_bibw")
TWO_RANKS = ("latency", "bw", "bibw") + ONESIDED
WINDOW = 64
# One-sided options, the same on both sides: OMB's defaults, except for
# put_bibw, whose default (post-start-complete-wait) fpgacomm does not offer.
ONESIDED_OPTIONS = {"put_bibw": ("allocate", "fence")}
ONESIDED_DEFAULT_OPTIONS = ("allocate", "flush")


def family(test: str) -> str:
    return next(name for name, tests in FAMILIES.items() if test in tests)


@dataclass(frozen=True)
class Target:
    """Bounds on fpgacomm / OMB; None leaves that side open."""

    low: float | None = None
    high: float | None = None

    def verdict(self, low: float | None, high: float | None, ratio: float) -> str:
        """met: the whole interval inside the bounds; missed: the whole
        interval outside; undecided: it straddles a bound. Without an
        interval (one launch a side), the ratio alone, said as such."""
        if low is None or high is None:
            inside = (self.low is None or ratio >= self.low) and (self.high is None or ratio <= self.high)
            return "met (no interval)" if inside else "missed (no interval)"
        if (self.low is None or low >= self.low) and (self.high is None or high <= self.high):
            return "met"
        if (self.low is not None and high < self.low) or (self.high is not None and low > self.high):
            return "missed"
        return "undecided"

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
    cases += [
        Case("mbw_mr", 8, Target(low=0.95)),
        Case("mbw_mr", 4 * MiB),
        Case("multi_lat", 8),
        Case("multi_lat", 4 * MiB),
    ]
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


# ---------------------------------------------------------------- building OMB


class UsageError(Exception):
    """Bad input or a missing prerequisite: one message, exit status 2."""


def omb_programs(build: Path, tests=TESTS) -> dict[str, Path]:
    """Each test's OMB program inside a build folder."""
    return {test: build / "src" / OMB_DIRECTORIES[family(test)] / f"osu_{test}" for test in tests}


def build_omb(tarball: Path, build: Path, jobs: int, tests=TESTS, log=print) -> dict[str, Path]:
    """OMB 7.4's programs of `tests`, built with mpicc in `build` (outside
    the repository): configured once per tarball, compiler and flags, and
    each program made where it is missing."""
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        raise UsageError("mpicc is not on PATH; install Open MPI's development package (scripts/setup.sh does)")
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    compiler = subprocess.run([mpicc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    stamp = {"tarball_sha256": digest, "cflags": OMB_CFLAGS, "mpicc": mpicc, "compiler": compiler}
    stamp_file, log_file = build / "fpgacomm-omb-build.json", build / "fpgacomm-omb-build.log"
    programs = omb_programs(build, tests)
    source = build / "src"
    configured = stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp
    if configured and all(program.exists() for program in programs.values()):
        log(f"OMB 7.4: reusing the build in {build}")
        return programs
    if build.exists() and any(build.iterdir()) and not (stamp_file.exists() or log_file.exists()):
        raise UsageError(
            f"{build} holds files that are not an OMB build of this script; give an empty or new "
            "folder with --omb-build"
        )
    started = time.monotonic()
    log(f"OMB 7.4: building in {build} (log: {log_file})")
    build.mkdir(parents=True, exist_ok=True)
    with open(log_file, "a") as output:

        def step(*command, cwd=source):
            subprocess.run(list(command), cwd=cwd, stdout=output, stderr=subprocess.STDOUT, check=True)

        try:
            if not configured:
                shutil.rmtree(source, ignore_errors=True)
                stamp_file.unlink(missing_ok=True)
                source.mkdir(parents=True)
                subprocess.run(["tar", "xzf", str(tarball), "-C", str(source)], check=True)
                if not (source / "configure").exists():  # a tarball with one top folder
                    (top,) = [p for p in source.iterdir() if p.is_dir()]
                    for item in top.iterdir():
                        item.rename(source / item.name)
                    top.rmdir()
                step("./configure", "CC=mpicc", "CXX=mpicxx", f"CFLAGS={OMB_CFLAGS}")
                stamp_file.write_text(json.dumps(stamp, indent=1))
            for directory in dict.fromkeys(OMB_DIRECTORIES[family(test)] for test in programs):
                names = [p.name for p in programs.values() if p.parent == source / directory and not p.exists()]
                if names:
                    step("make", f"-j{jobs}", *names, cwd=source / directory)
        except subprocess.CalledProcessError as error:
            raise UsageError(f"building OMB failed ({' '.join(map(str, error.cmd))}); see {log_file}") from None
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


def run_omb(program: Path, flags: list[str], ranks: int, extra: list[str], limit: float):
    """One mpirun of an OMB program, its text read as a Result (fpgacomm's
    reader of OMB's text); a RuntimeError with its status and last line
    when it fails."""
    import fpgacomm

    run = subprocess.run(
        mpirun_command(ranks, extra) + [str(program), *flags], capture_output=True, text=True, env=ENV, timeout=limit
    )
    if run.returncode != 0:
        last = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"{program.name} {' '.join(flags)}: status {run.returncode}: {last[0]}")
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as text:
        text.write(run.stdout)
        text.flush()
        return fpgacomm.Result.read(text.name)


def commands(case: Case, args, programs: dict[str, Path]) -> tuple[str, str]:
    """(OMB's command, fpgacomm's command) of one case, as shell commands;
    fpgacomm's own watchdog ends it at the time limit."""
    launcher = mpirun_command(ranks_for(case.test, args.ranks), shlex.split(args.mpirun_args))
    flags = common_flags(case, args.quick)
    omb = shlex.join(["timeout", f"{args.test_timeout:g}", *launcher, str(programs[case.test]), *flags])
    ours = shlex.join(
        [*launcher, str(args.python), "-m", "fpgacomm", "--timeout", f"{args.test_timeout:g}", "osu", case.test, *flags]
    )
    return omb, ours


def measure(args, programs: dict[str, Path], argv: list[str]) -> dict:
    """Every case of the selected tests, each a compare --run of OMB (A)
    against fpgacomm (B); the run's report."""
    import fpgacomm

    os.environ.update(ENV)  # the launches inherit Open MPI's root variables
    started, clock = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic()
    load_at_start = os.getloadavg()[0]
    rows = []
    for case in (case for case in CASES if case.test in args.selected):
        folder = args.out / f"{case.test}_{case.size}"
        omb, ours = commands(case, args, programs)
        row = {
            "test": case.test,
            "size": case.size,
            "ranks": ranks_for(case.test, args.ranks),
            "target": {"low": case.target.low, "high": case.target.high} if case.target else None,
            "commands": {"omb": omb, "fpgacomm": ours},
            "launches": str(folder),
        }
        try:
            comparison = fpgacomm.compare(run=[omb, ours], rounds=args.rounds, out=folder, labels=["OMB", "fpgacomm"])
        except Exception as error:  # a failed launch: its message, and the next case
            row["failure"] = str(error)
            print(f"omb_side: {case.test} {format_size(case.size)}: {error}", file=sys.stderr, flush=True)
        else:
            (found,) = [r for r in comparison.rows if r["size"] == case.size] or [comparison.rows[0]]
            row.update(
                {
                    key: found[key]
                    for key in (
                        "ratio",
                        "ratio_low",
                        "ratio_high",
                        "p",
                        "p_holm",
                        "verdict",
                        "median_base",
                        "median_candidate",
                        "n_base",
                        "n_candidate",
                    )
                },
                quantity=comparison.params["column"],
                under_load=comparison.env.get("under_load", {}),
            )
        rows.append(row)
    return {
        "command": reproduce_command(argv),
        "json": shown_path(args.json),
        "started": started,
        "seconds": time.monotonic() - clock,
        "machine": dict(machine(), load=[load_at_start, os.getloadavg()[0]]),
        "setup": {
            "section": args.section,
            "rounds": args.rounds,
            "ranks": args.ranks,
            "quick": args.quick,
            "rehearsal": args.rehearsal,
            "note": args.note,
            "mpirun_args": args.mpirun_args,
            "two_hosts": args.two_hosts,
            "out": str(args.out),
        },
        "rows": rows,
    }


# ---------------------------------------------------------------- reporting


def machine() -> dict:
    """Where the run happens: host, CPU, cores, system, MPI."""

    def first(path: str, prefix: str, separator: str) -> str | None:
        try:
            return next(
                line.split(separator, 1)[1].strip().strip('"')
                for line in Path(path).read_text().splitlines()
                if line.startswith(prefix)
            )
        except (OSError, StopIteration):
            return None

    launcher = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()
    library = re.match(r"mpirun \((.+)\) (\S+)", launcher[0]) if launcher else None
    return {
        "host": platform.node(),
        "cpu": first("/proc/cpuinfo", "model name", ":") or platform.machine(),
        "cores": cores(),
        "os": first("/etc/os-release", "PRETTY_NAME=", "=") or platform.system(),
        "mpi": " ".join(library.groups()) if library else (launcher[0] if launcher else "unknown"),
    }


def format_size(size: int) -> str:
    for unit, scale in (("MiB", MiB), ("KiB", KiB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def target_verdict(row: dict) -> str:
    if row.get("failure"):
        return "failed"
    if row["target"] is None:
        return ""
    return Target(row["target"]["low"], row["target"]["high"]).verdict(
        row["ratio_low"], row["ratio_high"], row["ratio"]
    )


def table_lines(rows: list[dict]) -> list[str]:
    lines = [
        "| test | size | ranks | compared | fpgacomm / OMB | 95 % interval | p | verdict | launches under load "
        "| target | |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        size = format_size(row["size"]) if row["test"] != "barrier" else "-"
        target = str(Target(row["target"]["low"], row["target"]["high"])) if row["target"] else "-"
        judged = target_verdict(row)
        marked = f"**{judged}**" if judged.startswith(("missed", "failed")) else judged
        if row.get("failure"):
            lines.append(f"| {row['test']} | {size} | {row['ranks']} | - | - | - | - | - | - | {target} | {marked} |")
            continue
        interval = "-" if row["ratio_low"] is None else f"{row['ratio_low']:.3f} to {row['ratio_high']:.3f}"
        p = "-" if row["p"] is None else f"{row['p']:.2g}"
        loaded = sum(len(names) for names in row.get("under_load", {}).values())
        lines.append(
            f"| {row['test']} | {size} | {row['ranks']} | {row['quantity']} | {row['ratio']:.3f} "
            f"| {interval} | {p} | {row['verdict']} | {loaded} of {row['n_base'] + row['n_candidate']} "
            f"| {target} | {marked} |"
        )
    return lines


SECTION_NAME = re.compile(r"^[A-Za-z0-9 .,_()]+(-[A-Za-z0-9 .,_()]+)*$")


def marks(name: str, script: str = "bench/omb_side.py") -> tuple[str, str]:
    """The comments around a section that `script` writes; each machine's section has its name."""
    return (
        f"<!-- {script}, {name}: begin (a rerun replaces everything up to the end mark) -->",
        f"<!-- {script}, {name}: end -->",
    )


METHOD = (
    "Each case is one `fpgacomm compare --run` (`fpgacomm.compare(run=...)`): OMB's program (A) and `fpgacomm "
    "osu TEST` (B) launched in turn, A B A B, one mpirun each, ranks bound to cores, host buffers, the same "
    "`-m`, `-i`, `-x` and `-W 64` (one-sided: `-w allocate -s flush`, put_bibw `-s fence`). The ratio is "
    "fpgacomm's over OMB's, of the latency (lower is better) or the bandwidth or message rate (higher is "
    "better): the Hodges-Lehmann estimate over the launches, with its 95 % interval, the Mann-Whitney p value "
    'and compare\'s verdict for fpgacomm (docs/METHODS.md, "Comparing runs"). A target is met when the whole '
    "interval lies inside it, missed when the whole interval lies outside, undecided otherwise. Collective "
    "sizes are per rank. OMB is built with `-DFLOAT_PRECISION=4` (four decimals in its printout instead of "
    "two; nothing else changes)."
)

TWO_HOSTS_NOTE = (
    " (the two-host test bed `{name}`, made first with `scripts/two_hosts.sh up {name}` as root: two "
    "network namespaces joined by a bridge, MPI over TCP between them, ranks unbound, one rank "
    "per host in the two-rank tests, multi-pair tests' pairs across the hosts)"
)


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
    runs' (each a subset of the tests)."""
    rows = merged_rows(parts)
    begin, end = marks(name)
    lines = [begin, f"## fpgacomm against OSU Micro-Benchmarks 7.4, side by side ({name}): `bench/omb_side.py`", ""]
    rehearsals = [part["setup"]["rehearsal"] for part in parts if part["setup"]["rehearsal"]]
    if rehearsals:
        lines += [
            f"**Rehearsal, not the record** ({'; '.join(rehearsals)}): these figures only show that the "
            "script runs end to end.",
            "",
        ]
    method = METHOD
    if any(part["setup"].get("two_hosts") for part in parts):
        method = method.replace("ranks bound to cores", "ranks unbound on the two-host test bed")
    lines += [method, ""]
    for number, part in enumerate(parts, 1):
        where, setup = part["machine"], part["setup"]
        label = f"Run {number} of {len(parts)}: " if len(parts) > 1 else ""
        lines += [
            "    " + part["command"],
            "",
            f"{label}{part['started']} on {where['host']} ({where['cpu']}, {where['cores']} cores, "
            f"{where['os']}), {where['mpi']}; {setup['rounds']} launches a side"
            f"{', a tenth of the iterations (quick mode)' if setup['quick'] else ''}, collectives and "
            f"multi-pair tests on {setup['ranks']} ranks"
            f"{', extra mpirun arguments ' + repr(setup['mpirun_args']) if setup['mpirun_args'] else ''}"
            f"{TWO_HOSTS_NOTE.format(name=setup['two_hosts']) if setup.get('two_hosts') else ''}; "
            f"{part['seconds']:.0f} s in all, load average {where['load'][0]:.1f} at the start and "
            f"{where['load'][1]:.1f} at the end; the comparisons in `{part['json']}`."
            f"{' ' + setup['note'] if setup['note'] else ''}",
            "",
        ]
    judged = [target_verdict(row) for row in rows if row["target"] is not None]
    counts = {word: sum(verdict.startswith(word) for verdict in judged) for word in ("met", "missed", "undecided")}
    lines += [
        f"Targets: {counts['met']} met, {counts['missed']} missed, {counts['undecided']} undecided, of "
        f"{len(judged)}.",
        "",
        *table_lines(rows),
    ]
    failures = [f"- {row['test']} {format_size(row['size'])}: {row['failure']}" for row in rows if row.get("failure")]
    if failures:
        lines += ["", "Failed:", *failures]
    return "\n".join([*lines, "", end]) + "\n"


def write_section(path: Path, text: str, name: str, script: str = "bench/omb_side.py") -> None:
    """Replaces the section `name` between its marks, or appends it."""
    old = path.read_text() if path.exists() else ""
    begin_mark, end_mark = marks(name, script)
    start, end = old.find(begin_mark), old.find(end_mark)
    if start >= 0 and end > start:
        rest = old[end + len(end_mark) :]
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
            raise UsageError(
                f"unknown test '{name}' in --tests; choose among {', '.join(TESTS)} or the groups "
                f"{', '.join(FAMILIES)}"
            )
    return list(dict.fromkeys(chosen))


def add_omb_options(parser: argparse.ArgumentParser) -> None:
    """Where OMB's source comes from and where it is built (shared with bench/pt2pt.py)."""
    parser.add_argument(
        "--omb-tarball",
        type=Path,
        default=DEFAULT_TARBALL,
        metavar="FILE",
        help="OSU Micro-Benchmarks 7.4 source tarball (default: %(default)s)",
    )
    parser.add_argument(
        "--omb-build",
        type=Path,
        default=DEFAULT_BUILD,
        metavar="DIR",
        help="folder outside the repository where OMB is built; a build already there from "
        "the same tarball, compiler and flags is reused (default: %(default)s)",
    )


def omb_from_options(args, tests=TESTS, log=print) -> dict[str, Path]:
    """Checks the OMB options and returns the built programs of `tests`."""
    tarball, build = args.omb_tarball.resolve(), args.omb_build.resolve()
    if not tarball.is_file():
        raise UsageError(
            f"OMB tarball {tarball} not found; give the OSU Micro-Benchmarks 7.4 source tarball " "with --omb-tarball"
        )
    if build == ROOT or ROOT in build.parents:
        raise UsageError(
            f"--omb-build {build} is inside the repository; give a folder outside it (such as " f"{DEFAULT_BUILD})"
        )
    return build_omb(tarball, build, max(1, cores()), tests, log)


def parse_arguments(argv: list[str]):
    parser = argparse.ArgumentParser(
        prog="omb_side.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_omb_options(parser)
    parser.add_argument(
        "--python",
        type=Path,
        default=DEFAULT_PYTHON,
        help="interpreter with fpgacomm installed, started by mpirun (default: %(default)s)",
    )
    parser.add_argument(
        "--mpirun-args",
        default="",
        metavar="ARGS",
        help='extra mpirun arguments for both sides, as one string (e.g. "--mca btl self,vader")',
    )
    parser.add_argument(
        "--two-hosts",
        metavar="NAME",
        help="run every measurement across the two-host test bed NAME (first, as root: "
        "scripts/two_hosts.sh up NAME): its mpirun options, unbound as it says, and --map-by "
        "node",
    )
    parser.add_argument(
        "--tests",
        default=",".join(FAMILIES),
        metavar="LIST",
        help=f"comma-separated tests or groups ({', '.join(FAMILIES)}; default all); tests: " f"{', '.join(TESTS)}",
    )
    parser.add_argument("--rounds", type=int, metavar="N", help="launches of each side per case (default 7; quick 3)")
    parser.add_argument(
        "--ranks",
        type=int,
        default=4 if cores() >= 4 else 2,
        metavar="N",
        help="ranks of multi_lat, mbw_mr and the collectives: even (default here %(default)s)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tenth of the iterations and 3 launches; the section says it is a rehearsal",
    )
    parser.add_argument(
        "--rehearsal",
        metavar="WHY",
        default="",
        help="mark the section as a rehearsal, saying why (e.g. 'a shared, busy machine')",
    )
    parser.add_argument("--note", default="", help="a sentence for the section (e.g. the machine's load)")
    parser.add_argument(
        "--test-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time limit of each mpirun (default: %(default)s)",
    )
    parser.add_argument(
        "--section",
        metavar="NAME",
        help="the section's name, one per machine, in its title and marks (default: 'N cores')",
    )
    parser.add_argument(
        "--results",
        metavar="FILE",
        help="Markdown file whose omb_side section is written or replaced, '' for none (default: " "bench/RESULTS.md)",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="the run's report (default: bench/results/omb_side-HOST.json)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="a new folder for every launch's output, a subfolder per case (default: a new " "temporary folder)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="measure nothing: write the section from these reports (--json files of earlier runs; "
        "a later file's row of a test and size replaces an earlier one's)",
    )
    args = parser.parse_args(argv)
    args.results = DEFAULT_RESULTS if args.results is None else (Path(args.results) if args.results else None)
    if args.section is not None and not SECTION_NAME.match(args.section):
        raise UsageError(f"--section {args.section!r}: use letters, digits, spaces and . , _ ( ) -, no '--'")
    if args.report:
        measuring = [
            f"--{name.replace('_', '-')}"
            for name in (
                "omb_tarball",
                "omb_build",
                "python",
                "mpirun_args",
                "two_hosts",
                "tests",
                "rounds",
                "ranks",
                "quick",
                "rehearsal",
                "note",
                "test_timeout",
                "json",
                "out",
            )
            if getattr(args, name) != parser.get_default(name)
        ]
        if measuring:
            raise UsageError(
                f"--report measures nothing, so {', '.join(measuring)} would do nothing; give those "
                "options to the run that measures"
            )
        missing = [str(path) for path in args.report if not path.is_file()]
        if missing:
            raise UsageError(f"no report at {', '.join(missing)}; give --json files of earlier runs")
        return args
    if args.rounds is None:
        args.rounds = 3 if args.quick else 7
    if args.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, got {args.rounds}")
    if args.ranks < 2 or args.ranks % 2:
        raise UsageError(
            f"--ranks must be even and at least 2 (multi_lat and mbw_mr pair the ranks), got " f"{args.ranks}"
        )
    if args.test_timeout <= 0:
        raise UsageError(f"--test-timeout must be positive, got {args.test_timeout:g}")
    if args.two_hosts:
        bed = TWO_HOSTS_STATE / args.two_hosts / "mpirun-options"
        if not bed.is_file():
            raise UsageError(
                f"no two-host test bed {args.two_hosts!r} ({bed} is missing); make it first, as root: "
                f"scripts/two_hosts.sh up {args.two_hosts}"
            )
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
    if shutil.which("mpirun") is None:
        raise UsageError("mpirun is not on PATH; install Open MPI (scripts/setup.sh does)")
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        raise UsageError(f"--out {args.out}: holds files already; give a new or empty folder")
    args.out = args.out or Path(tempfile.mkdtemp(prefix="omb_side-"))
    args.json = args.json or ROOT / "bench" / "results" / f"omb_side-{platform.node()}.json"
    return args


def shown_path(path: Path) -> str:
    """A path as the section shows it: relative to the repository when inside it."""
    path = path.absolute()
    return str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)


def reproduce_command(argv: list[str]) -> str:
    return shlex.join([shown_path(Path(sys.executable)), "bench/omb_side.py", *argv])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_arguments(argv)
        if args.report:
            # Each report's figures are where it lies now, not where it was written.
            parts = [dict(json.loads(path.read_text()), json=shown_path(path)) for path in args.report]
        else:
            parts = [measure(args, omb_from_options(args, args.selected), argv)]
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
    return 1 if any(target_verdict(row).startswith(("missed", "failed")) for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
