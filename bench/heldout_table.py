"""The held-out table of docs/PREDICTION.md from bench/heldout_validate.sh's
validate-*.json: per experiment and rank count the points, the median and
largest |error| of the prediction against the measured median, the coverage of
the 95 % intervals and the mean signed error. It prints what validate itself
refuses to claim where the points have one launch each: read it with
validate's reason beside it.

    python bench/heldout_table.py bench/results/heldout-h200x2-32core/validation
"""

import glob
import json
import os
import sys

import numpy as np


def main(folder: str) -> None:
    print(
        "| experiment | ranks | points | launches a point | median abs. error | largest abs. error | coverage | "
        "mean signed error |"
    )
    print("|---|---|---|---|---|---|---|---|")
    everything = []
    for path in sorted(glob.glob(os.path.join(folder, "validate-*.json"))):
        rows = json.load(open(path))["rows"]
        for nodes in sorted({row["nodes"] for row in rows}):
            chosen = [row for row in rows if row["nodes"] == nodes]
            errors = np.array([(row["predicted"] - row["measured"]) / row["measured"] for row in chosen])
            covered = [row["predicted_low"] <= row["measured"] <= row["predicted_high"] for row in chosen]
            everything += list(zip(errors, covered))
            launches = sorted({row["launches"] for row in chosen})
            name = f"{chosen[0]['experiment']} {chosen[0]['schedule']}"
            print(
                f"| {name} | {nodes} | {len(chosen)} | {', '.join(map(str, launches))} | "
                f"{np.median(np.abs(errors)):.1%} | {np.max(np.abs(errors)):.1%} | "
                f"{sum(covered)}/{len(covered)} | {np.mean(errors):+.1%} |"
            )
    errors = np.array([e for e, _ in everything])
    print(
        f"| all | 16, 32 | {len(errors)} | | {np.median(np.abs(errors)):.1%} | {np.max(np.abs(errors)):.1%} | "
        f"{sum(c for _, c in everything)}/{len(everything)} | {np.mean(errors):+.1%} |"
    )


if __name__ == "__main__":
    main(sys.argv[1])
