"""The largest |error| a perfect model would show on a held-out campaign: how far
the median of a point's calibration launches and the median of its held-out
launches lie apart by launch-to-launch noise alone. Each experiment's noise is
the campaign's scatter between launches (calibration/fit.py `launch_scatter`,
the log time's standard deviation at the largest calibrated count, taken as
normal); its points and launches a point those of the held-out validation
(bench/heldout_validate.sh's validate-*.json). Printed per campaign: the median
over draws of the largest |error| over every point, and how often it passes
the target's 25 %.

    python bench/heldout_noise_floor.py bench/results/heldout-h200-16core-blind32 ...
"""

import glob
import json
import os
import sys

import numpy as np
from fpgacomm.calibration import fit

TARGET = 0.25
DRAWS = 4000


def held_out(folder: str) -> dict:
    """{(experiment, schedule): (points, launches a point)} of the validation."""
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "validation", "validate-*.json"))):
        rows = json.load(open(path))["rows"]
        if rows:
            found[(rows[0]["experiment"], rows[0]["schedule"])] = (
                len(rows),
                int(np.median([r["launches"] for r in rows])),
            )
    return found


def largest_errors(scatter: dict, points: dict, calibration_launches: int, generator) -> np.ndarray:
    """Per draw, the largest |error| over every held-out point of a model that
    predicts each point's true time exactly from the median of its calibration
    launches, against the median of its held-out ones."""
    largest = np.zeros(DRAWS)
    for key, (count, launches) in points.items():
        sd = scatter.get(key, 0.0)
        calibrated = np.median(generator.normal(0, sd, (DRAWS, count, calibration_launches)), axis=2)
        measured = np.median(generator.normal(0, sd, (DRAWS, count, launches)), axis=2)
        largest = np.maximum(largest, np.abs(np.expm1(calibrated - measured)).max(axis=1))
    return largest


def main(folders: list) -> None:
    print(
        "| campaign | launches (calibration, held out) | scatter: b_eff, gathers | largest, median of draws | past 25 % |"
    )
    print("|---|---|---|---|---|")
    for folder in folders:
        launches = fit.launches(os.path.join(folder, "calibration"))
        scatter = fit.launch_scatter(launches)
        points = held_out(folder)
        held = sorted({count for _, count in points.values()})
        largest = largest_errors(scatter, points, len(launches), np.random.default_rng(0))  # each campaign's own draws
        gathers = [value for (experiment, _), value in scatter.items() if experiment == "gather"]
        print(
            f"| {os.path.basename(folder.rstrip('/'))} | {len(launches)}, {'/'.join(map(str, held))} "
            f"| {scatter.get(('beff', 'ring'), 0):.3f}, {min(gathers):.3f}-{max(gathers):.3f} "
            f"| {np.median(largest):.1%} | {np.mean(largest > TARGET):.0%} of draws |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
