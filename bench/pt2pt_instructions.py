"""Instructions per message of fpgacomm's point-to-point loops against OSU
Micro-Benchmarks 7.4's, counted with callgrind: a figure that holds on a
loaded machine, where timings do not.

    python bench/pt2pt_instructions.py [--tests bw,bibw,mbw_mr,latency,multi_lat] [--size 8]
        [--iterations 200,1200] [--repeat 2] [--json FILE] [--results FILE]

For each test, each side (OMB's program, `fpgacomm osu TEST H H`) and each
rank of a pair, one mpirun of two ranks runs that rank under callgrind and
the other natively, at two iteration counts with the same -m, -x and -W.
What a message costs is the difference of the counts over the difference
of the messages, so start-up, set-up and reporting, which do not grow with
the iterations, cancel:

    per message = (count(i2) - count(i1)) / ((i2 - i1) * messages per iteration)

OMB's count is its whole process; fpgacomm's is what callgrind collects
inside the timed operation (Runner::exchange and the transfer engine below
it), since its Python code that turns samples into rows also grows with
the iterations. fpgacomm's core is built once more without stripping its
symbols (build/callgrind, with the same compiler and flags) so callgrind
can name its functions.

Two figures per rank: everything, and everything outside the MPI calls
that wait (MPI_Recv, MPI_Wait, MPI_Waitall, MPI_Barrier), where a rank
polls until its peer is there: on a loaded machine the number of polls
depends on the scheduler, not on the program, so the first figure is the
smallest of --repeat launches and the second is the one that decides.
Both programs make the same waiting calls with the same arguments (the
window's MPI_Waitall, the acknowledgement's MPI_Recv, the multi-pair
tests' barrier), so what the second figure leaves out is alike on both
sides, and what it keeps is each program's own work per message: posting
it to MPI and everything around that. The target: fpgacomm within 10 % of
OMB.

Writes the section "Instructions per message" of bench/RESULTS.md
(--results) and the figures as JSON (--json). Exit status 0 when every
test meets the target, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402
from omb_side import UsageError, add_omb_options, marks, omb_from_options, write_section  # noqa: E402

PYTHON = ROOT / ".venv" / "bin" / "python"
CORE_BUILD = ROOT / "build" / "callgrind"
TARGET = 1.10  # fpgacomm / OMB, instructions per message
WINDOW = 64
TESTS = ("bw", "bibw", "mbw_mr", "latency", "multi_lat")
# Messages one rank sends or receives per iteration: a window's, or a
# ping-pong's one each way.
WINDOWED = ("bw", "bibw", "mbw_mr")
TOGGLE = "*Runner::exchange*"  # fpgacomm's timed operation
SECTION = "Instructions per message"
SCRIPT = "bench/pt2pt_instructions.py"
WAITS = ("Recv", "Wait", "Waitall", "Barrier")  # MPI calls that poll until the peer is there


def unstripped_package() -> Path:
    """The installed fpgacomm package with a _core module whose symbols are
    kept, in build/callgrind/overlay (PYTHONPATH puts it first)."""
    import fpgacomm

    installed = Path(fpgacomm.__file__).parent
    cache = subprocess.run(
        ["cmake", "-L", "-N", str(next(ROOT.glob("build/cp*")))], capture_output=True, text=True
    ).stdout
    pybind = re.search(r"pybind11_DIR:PATH=(.*)", cache)
    configure = [
        "cmake",
        "-S",
        str(ROOT),
        "-B",
        str(CORE_BUILD),
        "-G",
        "Ninja",
        "-DSKBUILD=ON",
        "-DSKBUILD_PROJECT_VERSION=0.1.0",
        "-DCMAKE_BUILD_TYPE=Release",
        # pybind11 strips Release modules with CMAKE_STRIP; this keeps the symbols.
        "-DCMAKE_STRIP=/bin/true",
        "-DFPGACOMM_SYCL=OFF",
        f"-DPython_EXECUTABLE={PYTHON}",
    ]
    if pybind:
        configure.append(f"-Dpybind11_DIR={pybind.group(1)}")
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    for command in (configure, ["ninja", "-C", str(CORE_BUILD), "_core"]):
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            raise UsageError(
                f"building the unstripped core failed ({' '.join(command[:3])}): "
                f"{(run.stdout + run.stderr).strip().splitlines()[-1:]}"
            )
    overlay = CORE_BUILD / "overlay"
    shutil.rmtree(overlay, ignore_errors=True)
    shutil.copytree(installed, overlay / "fpgacomm", ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    (module,) = CORE_BUILD.glob("_core*.so")
    shutil.copy2(module, overlay / "fpgacomm" / module.name)
    return overlay


def flags(test: str, size: int, iterations: int) -> list[str]:
    window = ["-W", str(WINDOW)] if test in WINDOWED else []
    return ["-m", f"{size}:{size}", "-i", str(iterations), "-x", "10", *window]


def messages_per_iteration(test: str) -> int:
    return WINDOW if test in WINDOWED else 1


def counted_launch(program: list[str], rank: int, toggle: str | None, env: dict, folder: Path) -> dict:
    """One mpirun of two ranks, `rank` under callgrind: its counts, total
    and inside the MPI calls that wait."""
    out = folder / f"callgrind.{os.getpid()}.{rank}"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        valgrind += ["--collect-atstart=no", f"--toggle-collect={toggle}"]
    exports = [arg for name in ("PYTHONPATH", "PYTHONHASHSEED") if name in env for arg in ("-x", name)]
    sides = [valgrind + program if r == rank else program for r in (0, 1)]
    command = ["mpirun", *exports, "-np", "1", *sides[0], ":", "-np", "1", *sides[1]]
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(program[:4])} failed: {(run.stderr or run.stdout).strip()[-300:]}")
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out.unlink()
    return counts_of(text)


def counts_of(annotated: str) -> dict:
    """From callgrind_annotate --inclusive=yes: the program's total and the
    inclusive counts of the MPI calls that wait, summed."""

    def count(pattern: str) -> int:
        match = re.search(r"^\s*([\d,]+)\s.*" + pattern, annotated, re.MULTILINE)
        return int(match.group(1).replace(",", "")) if match else 0

    waits = sum(count(rf":PMPI_{name} \[") for name in WAITS)
    return {"total": count(r"PROGRAM TOTALS"), "waits": waits}


def per_message(test: str, program, rank: int, toggle, env, iterations, repeat, folder) -> dict:
    low, high = iterations
    counts = {}
    for n in iterations:
        launches = [counted_launch(program(n), rank, toggle, env, folder) for _ in range(repeat)]
        # Polling only adds: the fewest instructions are the launch that waited least.
        counts[n] = {
            "total": min(c["total"] for c in launches),
            "outside_waits": min(c["total"] - c["waits"] for c in launches),
        }
    messages = (high - low) * messages_per_iteration(test)
    return {key: (counts[high][key] - counts[low][key]) / messages for key in ("total", "outside_waits")}


def measure(args, omb: dict[str, Path], overlay: Path) -> list[dict]:
    env = dict(ENV, PYTHONPATH=str(overlay), PYTHONHASHSEED="0")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for test in args.tests:
            sides = {
                "OMB": (lambda n, t=test: [str(omb[t]), *flags(t, args.size, n)], None),
                "fpgacomm": (
                    lambda n, t=test: [str(PYTHON), "-m", "fpgacomm", "osu", t, "H", "H", *flags(t, args.size, n)],
                    TOGGLE,
                ),
            }
            for rank in (0, 1):
                row = {"test": test, "size": args.size, "rank": rank}
                for name, (program, toggle) in sides.items():
                    row[name] = per_message(
                        test, program, rank, toggle, env, args.iterations, args.repeat, Path(folder)
                    )
                row["ratio"] = row["fpgacomm"]["outside_waits"] / row["OMB"]["outside_waits"]
                row["met"] = row["ratio"] <= TARGET
                print(
                    f"{test} {args.size} B rank {rank}: OMB {row['OMB']['outside_waits']:.0f}, fpgacomm "
                    f"{row['fpgacomm']['outside_waits']:.0f} instructions a message outside the waiting "
                    f"calls ({row['ratio']:.3f}x; all: {row['OMB']['total']:.0f} and "
                    f"{row['fpgacomm']['total']:.0f})",
                    flush=True,
                )
                rows.append(row)
    return rows


def section(rows: list[dict], argv: list[str]) -> str:
    begin, end = marks(SECTION, SCRIPT)
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    lines = [
        begin,
        f"## {SECTION}: `bench/pt2pt_instructions.py`",
        "",
        f"`python bench/pt2pt_instructions.py {' '.join(argv)}` on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} cores, {platform.machine()}, {' '.join(mpi)}, {valgrind}), "
        f"{datetime.date.today().isoformat()}. Host buffers, two ranks; one rank under callgrind, the other "
        "native. Instructions per message: the difference between two iteration counts over the "
        "difference of the messages; 'outside waits' leaves out the MPI calls that wait "
        "(MPI_Recv, MPI_Wait, MPI_Waitall, MPI_Barrier), where a rank polls for its peer as long as the "
        "machine's load makes it; it decides; 'all' is the "
        "smallest of the launches. Target: fpgacomm within 10 % of OMB outside waits.",
        "",
        "| test | size | rank | OMB outside waits | fpgacomm outside waits | ratio | OMB all | "
        "fpgacomm all | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['test']} | {row['size']} B | {row['rank']} | {row['OMB']['outside_waits']:.0f} | "
            f"{row['fpgacomm']['outside_waits']:.0f} | {row['ratio']:.3f} | {row['OMB']['total']:.0f} "
            f"| {row['fpgacomm']['total']:.0f} | {'met' if row['met'] else 'missed'} |"
        )
    return "\n".join(lines + ["", end]) + "\n"


def parse_arguments(argv: list[str]):
    parser = argparse.ArgumentParser(
        prog="pt2pt_instructions.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", default="bw", help=f"comma-separated, among {', '.join(TESTS)} (default: bw)")
    parser.add_argument("--size", type=int, default=8, help="message size in bytes (default: 8)")
    parser.add_argument("--iterations", default="200,1200", help="the two iteration counts (default: 200,1200)")
    parser.add_argument("--repeat", type=int, default=2, help="launches per count and rank (default: 2)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--results", type=Path, help="write the section into this RESULTS.md")
    add_omb_options(parser)
    args = parser.parse_args(argv)
    args.tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    unknown = [t for t in args.tests if t not in TESTS]
    if unknown or not args.tests:
        raise UsageError(f"unknown test {unknown} in --tests; choose among {', '.join(TESTS)}")
    try:
        args.iterations = sorted(int(n) for n in args.iterations.split(","))
    except ValueError:
        raise UsageError(f"--iterations takes two counts such as 200,1200, got '{args.iterations}'") from None
    if len(args.iterations) != 2 or args.iterations[0] < 1 or args.iterations[0] == args.iterations[1]:
        raise UsageError(f"--iterations takes two different counts of at least 1, got {args.iterations}")
    if args.size < 1 or args.repeat < 1:
        raise UsageError("--size and --repeat take positive numbers")
    for tool in ("valgrind", "callgrind_annotate", "mpirun", "ninja", "cmake"):
        if shutil.which(tool) is None:
            raise UsageError(f"{tool} is not on PATH; install it (apt-get install valgrind ninja-build cmake)")
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_arguments(argv)
        omb = omb_from_options(args, tuple(args.tests))
        overlay = unstripped_package()
    except UsageError as error:
        print(f"pt2pt_instructions.py: {error}", file=sys.stderr)
        return 2
    rows = measure(args, omb, overlay)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.results:
        write_section(args.results, section(rows, argv), SECTION, SCRIPT)
    return 0 if all(row["met"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
