"""`fpgacomm validate --cv DIR`: one calibration campaign checked against
itself. The platform is fitted on the campaign's smaller rank counts (every
family's rows below the largest count of its gathers and b_eff), predicts the
gathers and b_eff's ring at the largest count, and the campaign's own launches
at that count are the held-out measurements (results/validation.py; each
launch one). docs/VALIDATION.md has the method.

    fpgacomm.calibration.cross_validation.cross_validate("campaign/")
"""

from __future__ import annotations

import os
import tempfile

from ..params import usage_error
from ..results import validation
from ..results.result import Result
from . import experiments, fit, predict

HELD_OUT_FAMILIES = ("gather", "beff")


def cross_validate(directory, *, bootstrap: int = fit.BOOTSTRAP, draws: int = predict.DRAWS, say=print) -> Result:
    """The validation Result of a platform fitted on the campaign's rank
    counts below its largest, against its launches at the largest."""
    found = fit.launches(directory)
    paths = sorted(
        os.path.join(os.fspath(directory), name)
        for name in os.listdir(directory)
        if name.startswith("launch-") and name.endswith(".json")
    )
    counts = sorted({row["ranks"] for result in found for row in result.rows if row["family"] in HELD_OUT_FAMILIES})
    if len(counts) < 2:
        raise usage_error(
            f"validate --cv: {os.fspath(directory)!r} holds gathers and b_eff at "
            f"{', '.join(map(str, counts)) or 'no'} rank count(s); cross-validation fits on the smaller "
            "counts and checks the largest, so it needs two or more (calibrate run at 4 ranks or more)"
        )
    held_out = counts[-1]
    if len(counts) == 2:
        say(
            f"validate --cv: the platform is fitted on one rank count ({counts[0]}), where its own cross-validation "
            "finds no model-form term: the interval holds the draws and the scatter only"
        )
    points = {}
    for result in found:
        for row in result.rows:
            if row["family"] in HELD_OUT_FAMILIES and row["ranks"] == held_out:
                experiment, schedule = experiments.of_row(row)
                points.setdefault((experiment, schedule), set()).add(row["size"])
    with tempfile.TemporaryDirectory() as training:
        for number, result in enumerate(found):
            rows = [row for row in result.rows if row["ranks"] < held_out]
            Result(result.benchmark, result.params, result.env, rows, result.units).write_json(
                os.path.join(training, f"launch-{number:04d}.json")
            )
        fab, record, said = fit.fit(training, bootstrap=bootstrap)
        platform = os.path.join(training, "platform.json")
        fit.write(fab, record, platform)
        predicted = [
            predict.predict(platform, experiment, schedule, nodes=[held_out], sizes=sorted(sizes), draws=draws, say=say)
            for (experiment, schedule), sizes in sorted(points.items())
        ]
    trained_on = ", ".join(map(str, counts[:-1]))
    combined = Result(
        validation.PREDICTION,
        {
            "platform": f"a platform fitted on {trained_on} ranks of {os.fspath(directory)}",
            "trained_on": counts[:-1],
            "checked_on": held_out,
            "fit": said,
        },
        predicted[0].env,
        [row for result in predicted for row in result.rows],
        predict.UNITS,
    )
    result = validation.validate(combined, paths, ranks=held_out)
    result.params.update(
        cross_validation={"directory": os.fspath(directory), "trained_on": counts[:-1], "checked_on": held_out}
    )
    return result
