"""Every command README.md and docs/GUIDE.md show, and every example of a
--help text, runs as written on the default set-up (PoCL, Intel's FPGA emulator registered
beside it), one after the other in one folder, as a reader would type
them: later commands read the files earlier ones wrote (lat.json, results/).

Only their length is cut, by options added after the command's own (where
an option is given twice the last counts), so that the whole runs in a
minute or two on 2 cores:

- osu tests: `-i 3 -x 1` (latency `-i 100`, which the fits read), and `-m 1:64K` where the command gives no
  sizes;
- devbw: `-m 1:64K -i 3 -x 1`; overhead: `-m 1:1K -i 10 -x 1`;
- the suite: `-m 8 -i 3 -x 1 --beff-max-size 2 --beff-repetitions 1`;
- beff on ranks: `-m 4 -n 1 -u 64 -l 8 --target-time 0.01` (sizes up to
  16 B, short loops);
- gather on ranks: `--sizes 64K:64K -i 3`;
- calibrate run: `--sizes 64K -i 4`; calibrate fit and predict: `--draws 10`;
- the Python blocks: the calls' iterations and b_eff's sizes (SHORTER).

mpirun may start more ranks than the machine has cores
(OMPI_MCA_rmaps_base_oversubscribe=1, as README's note on root and
--oversubscribe says), and root may run it. The commands NOT_RUN names are
left out, each for the reason given there.
"""

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The pages whose commands run here, in this order (docs/SLURM.md's need a
# Slurm cluster: tests/test_slurm.py runs them).
PAGES = [ROOT / "README.md", ROOT / "docs" / "GUIDE.md"]

# Commands left out (a pattern matching the command: why).
NOT_RUN = {
    r"^make ": "the Makefile's targets are the set-up and the tests themselves, this one included",
    r"^python3 -m venv |^pip |^\. ": "a fresh environment and a build: tests/test_packaging.py builds and installs the "
    "package",
    r"bench/omb_side\.py": "builds OSU Micro-Benchmarks 7.4 from its tarball, outside the repository: "
    "tests/test_omb_side.py",
    r"osu_latency|omb_latency\.txt": "needs OSU Micro-Benchmarks' programs, built from their tarball outside the "
    "repository: tests/test_omb_side.py and tests/test_compare.py compare them with fpgacomm",
    r"--hostfile|two_hosts\.sh|\$opts": "needs a second host (or network namespaces as root): "
    "tests/test_two_hosts.py",
    r"^fpgacomm validate .*heldout/": "needs held-out launches measured at the predicted rank counts, which a 2-core "
    "machine cannot give: tests/test_validate.py validates real launches",
}

# The two Python blocks (docs/GUIDE.md, "Python"), the script run under
# mpirun and the one that launches its ranks: the same calls, shorter.
SHORTER = [
    {
        "validate=True)": "validate=True, iterations=3, warmup=1)",
        "max_size=12)": "max_size=4, repetitions=1, target_time=0.01)",
        'sizes="1:1M",': 'sizes="1:1M", iterations=3, warmup=1,',
    },
    {'sizes="1:64K",': 'sizes="1:64K", iterations=3, warmup=1,'},
]


def readme_blocks(language: str) -> list:
    """The code blocks in `language` of the PAGES, in order."""
    return [
        block
        for page in PAGES
        for block in re.findall(rf"^```{language}\n(.*?)^```", page.read_text(), flags=re.M | re.S)
    ]


def shell_commands() -> list:
    """Every line of the pages' sh blocks, comments dropped."""
    lines = [re.sub(r"\s+#.*$", "", line).strip() for block in readme_blocks("sh") for line in block.splitlines()]
    return [line for line in lines if line]


def help_examples() -> list:
    """The commands after "Example:" or "Examples:" in every --help text."""
    import argparse

    from fpgacomm.cli.command import build_parser

    found = []

    def walk(parser):
        for text in (parser.description or "", parser.epilog or ""):
            match = re.search(r"Examples?: (.*)$", text, flags=re.S)
            if match:
                found.extend(re.sub(r"^then ", "", part.strip().rstrip(".")) for part in match.group(1).split("; "))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in dict.fromkeys(action.choices.values()):
                    walk(sub)

    walk(build_parser())
    return found


def left_out(command: str) -> str:
    return next((why for pattern, why in NOT_RUN.items() if re.search(pattern, command)), "")


def shortened(command: str) -> str:
    """The command with the options that cut its length (the module's docstring)."""
    parts = []
    for part in command.split(" && "):
        words = shlex.split(part)
        if "fpgacomm" not in words:
            parts.append(part)
            continue
        args = words[words.index("fpgacomm") + 1 :]
        extra = []
        if args[:1] == ["osu"]:
            # Latency runs feed the README's fits: 3 iterations on a busy machine can make the time fall with
            # the size, which the Hockney fit rightly refuses; they cost little more at 100.
            iterations = "100" if args[1:2] == ["latency"] else "3"
            extra = ["-i", iterations, "-x", "1"] + (
                [] if "-m" in args or args[1:2] == ["barrier"] else ["-m", "1:64K"]
            )
        elif args[:1] == ["devbw"]:
            extra = ["-m", "1:64K", "-i", "3", "-x", "1"]
        elif args[:1] == ["overhead"]:
            extra = ["-m", "1:1K", "-i", "10", "-x", "1"]
        elif args[:1] == ["suite"]:
            extra = ["-m", "8", "-i", "3", "-x", "1", "--beff-max-size", "2", "--beff-repetitions", "1"]
        elif args[:1] == ["beff"] and "sim" not in args:
            extra = ["-m", "4", "-n", "1", "-u", "64", "-l", "8", "--target-time", "0.01"]
        elif args[:1] == ["gather"] and "--fabric" not in args:
            extra = ["--sizes", "64K:64K", "-i", "3"]
        elif args[:2] == ["calibrate", "run"]:
            extra = ["--sizes", "64K", "-i", "4"]
        elif args[:2] == ["calibrate", "fit"] or args[:1] == ["predict"]:
            extra = ["--draws", "10"]
        parts.append(" ".join([part, *extra]))
    return " && ".join(parts)


@pytest.mark.mpi
def test_readme_and_help_commands_run_as_written(tmp_path):
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
        MPLBACKEND="Agg",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    commands = [command for command in shell_commands() + help_examples() if not left_out(command)]
    assert len(commands) > 30 and any("gather --fabric" in command for command in commands)
    failures = []

    def run(what: str, argv: list) -> str:
        start = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            failures.append(f"{what}\n  still running after 300 s")
            return ""
        print(f"{time.monotonic() - start:6.1f} s  {what}")  # pytest -s: where the time goes
        if done.returncode != 0:
            failures.append(f"{what}\n  exit status {done.returncode}\n  {done.stderr.strip()[-1500:]}")
        return done.stdout

    for command in commands:
        run(command, ["bash", "-c", shortened(command)])
    for name, code, shorter in zip(("script.py", "launch.py"), readme_blocks("python"), SHORTER):
        for long, short in shorter.items():
            assert long in code, f"docs/GUIDE.md's Python block lacks {long!r}: update SHORTER"
            code = code.replace(long, short)
        (tmp_path / name).write_text(code)
    printed = run(
        "docs/GUIDE.md's Python block, under mpirun -np 2",
        ["mpirun", "-np", "2", sys.executable, "-m", "mpi4py", "script.py"],
    )
    run("docs/GUIDE.md's launch block", [sys.executable, "launch.py"])
    assert not failures, "\n\n".join(failures)
    # Every rank runs the block; the Results are printed once, by rank 0.
    assert printed.count("# OSU MPI-OpenCL Bandwidth Test") == 1 and printed.count("b_eff ") == 1, printed


def test_readme_is_one_page():
    """README.md: one page (under 200 lines) whose quick start is at most 15 lines."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 200
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", quick_start, flags=re.M | re.S).group(1)
    assert len(block.splitlines()) <= 15
    assert "fpgacomm compare --run" in block and "fpgacomm plot" in block and "OMPI_ALLOW_RUN_AS_ROOT=1" in block
