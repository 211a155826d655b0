"""The held-out table of docs/PREDICTION.md from bench/heldout_validate.sh's
validate-*.json: per experiment and rank count the points, the median and
largest |error| of the prediction against the measured median, the coverage of
the 95 % intervals and the mean signed error, and all of them together (and those at 16 and 32 ranks, the
targets' rank counts, where more were held out). It prints what validate itself
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
            everything += [(nodes, e, c) for e, c in zip(errors, covered)]
            launches = sorted({row["launches"] for row in chosen})
            name = f"{chosen[0]['experiment']} {chosen[0]['schedule']}"
            print(
                f"| {name} | {nodes} | {len(chosen)} | {', '.join(map(str, launches))} | "
                f"{np.median(np.abs(errors)):.1%} | {np.max(np.abs(errors)):.1%} | "
                f"{sum(covered)}/{len(covered)} | {np.mean(errors):+.1%} |"
            )
    counts = sorted({nodes for nodes, _, _ in everything})
    for chosen_counts in [counts] + ([[n for n in counts if n <= 32]] if counts[-1] > 32 else []):
        chosen = [(e, c) for nodes, e, c in everything if nodes in chosen_counts]
        errors = np.array([e for e, _ in chosen])
        print(
            f"| all | {', '.join(map(str, chosen_counts))} | {len(errors)} | | {np.median(np.abs(errors)):.1%} | "
            f"{np.max(np.abs(errors)):.1%} | {sum(c for _, c in chosen)}/{len(chosen)} | {np.mean(errors):+.1%} |"
        )


if __name__ == "__main__":
    main(sys.argv[1])
