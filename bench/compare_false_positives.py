"""How often `fpgacomm compare` calls a difference where there is none:
one command against itself, launched anew every time.

    python bench/compare_false_positives.py [--comparisons 20] [--launches 10] [--command CMD]
                                            [--out DIR] [--json FILE]
    python bench/compare_false_positives.py --from DIR      # the count again from kept launches

Each comparison is a real `fpgacomm compare --run CMD --run CMD` with
--launches launches a side, taking turns (fpgacomm.compare(run=...)), every
launch's output kept under --out/NN. A size row is flagged where its
verdict is "faster" or "slower"; the target: at most 5 % of the size rows
over all comparisons (Holm's correction bounds the chance that a comparison
flags any size by 5 %, so the share of rows is well below it). The
undecided and "no difference" rows are counted too.

The default command is a latency sweep of 1 B to 4 KiB (13 sizes) with 3
rounds in each launch, so that the launch, not the round, is what is
tested. 20 comparisons of 10 launches a side are 400 launches: about 15
minutes where a launch takes 2 s; run it on a quiet host (a shared 2-core
machine measures its other jobs). Exit status 1 where the share exceeds
5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402

TARGET_SHARE = 0.05
DIFFERENCES = ("faster", "slower")


def default_command() -> str:
    return f"mpirun -np 2 --bind-to core {sys.executable} -m fpgacomm osu latency -m 1:4K -i 200 -x 20 " "--rounds 3"


def counted(comparison) -> dict:
    """The verdicts of one comparison's size rows."""
    verdicts = [row["verdict"] for row in comparison.rows]
    return {
        "launches_a_side": max(row["n_base"] for row in comparison.rows),
        "rows": len(verdicts),
        "flagged": sum(verdict in DIFFERENCES for verdict in verdicts),
        "undecided": verdicts.count("undecided"),
        "no difference": verdicts.count("no difference"),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comparisons", type=int, default=20)
    parser.add_argument("--launches", type=int, default=10, help="launches a side of each comparison")
    parser.add_argument(
        "--command",
        default=None,
        help="the command compared with itself (default: " "a 1 B to 4 KiB latency sweep of 3 rounds, two ranks)",
    )
    parser.add_argument("--threshold", default="0", help="compare's --threshold (default 0)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("compare-false-positives"),
        help="the new folder that keeps every comparison's launches",
    )
    parser.add_argument("--from", dest="kept", type=Path, help="count again from the launches of an earlier --out")
    parser.add_argument("--json", type=Path, help="write the counts as JSON")
    args = parser.parse_args(argv)

    import fpgacomm

    os.environ.update(ENV)
    per_comparison = []
    if args.kept:
        folders = sorted(path for path in args.kept.iterdir() if (path / "A").is_dir())
        for folder in folders:
            per_comparison.append(counted(fpgacomm.compare([folder / "A", folder / "B"], threshold=args.threshold)))
    else:
        command = args.command or default_command()
        for number in range(1, args.comparisons + 1):
            folder = args.out / f"{number:02d}"
            comparison = fpgacomm.compare(
                run=[command, command], rounds=args.launches, out=folder, threshold=args.threshold
            )
            per_comparison.append(counted(comparison))
            print(f"comparison {number} of {args.comparisons}: {per_comparison[-1]}", flush=True)
    total = {
        key: sum(found[key] for found in per_comparison) for key in ("rows", "flagged", "undecided", "no difference")
    }
    share = total["flagged"] / total["rows"] if total["rows"] else float("nan")
    print(
        f"False positives: {total['flagged']} of {total['rows']} size rows ({share:.1%}) flagged in "
        f"{len(per_comparison)} comparisons of one command with itself "
        f"({', '.join(sorted({str(found['launches_a_side']) for found in per_comparison}))} launches a side); "
        f"undecided {total['undecided']}, no difference {total['no difference']}; the aim is at most "
        f"{TARGET_SHARE:.0%}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "comparisons": per_comparison,
                    "total": total,
                    "share": share,
                    "command": args.command or default_command(),
                },
                indent=1,
            )
        )
    return 0 if share <= TARGET_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
