"""The Python front door of calibration and prediction (docs/PREDICTION.md):

import fpgacomm
platform = fpgacomm.calibrate("campaign/", ranks=8, launches=3)   # or a folder measured already
print(platform)                                                    # parameters, residuals, terms
platform.save("platform.json")
prediction = fpgacomm.predict(platform, schedule="tree", nodes=[16, 32, 1024], sizes="64K:16M")
fpgacomm.validate(prediction, ["heldout/"])                        # against launches held out
"""

from __future__ import annotations

import numpy as np

from ..results.result import Result
from ..simulation import fabric as fabrics
from ..units import with_unit
from . import campaign, fit
from .predict import predict as _predict

PARAMETER_UNITS = {"parameter": "", "value": "", "low": "", "high": "", "unit": "", "source": ""}


class Platform:
    """A fitted platform: the Fabric (with its parameter draws) and the
    calibration record (discrepancy factors, scatter between launches, model-form
    terms, residuals per family). str() prints it, save() writes the
    platform file, `parameters` and `residuals` are Results."""

    def __init__(self, fabric: fabrics.Fabric, record: dict, said: list | None = None):
        self.fabric, self.record, self.said = fabric, record, list(said or [])
        self.fabric.calibration = record  # predict() finds the terms on the Fabric itself

    @classmethod
    def read(cls, path) -> Platform:
        from .predict import load

        fab, record = load(str(path))
        return cls(fab, record)

    def save(self, path) -> None:
        fit.write(self.fabric, self.record, path)

    @property
    def parameters(self) -> Result:
        units = fabrics.PRESETS[self.fabric.name].units
        rows = []
        for key, value in self.fabric.arguments.items():
            values = [draw[key] for draw in self.fabric.draws if key in draw]
            low, high = np.percentile(values, [2.5, 97.5]) if values else (None, None)
            source = self.fabric.provenance.get(key, {}).get("source", "preset")
            rows.append(
                {
                    "parameter": key,
                    "value": value,
                    "low": None if low is None else float(low),
                    "high": None if high is None else float(high),
                    "unit": units[key],
                    "source": source,
                }
            )
        return Result("platform_parameters", {"preset": self.fabric.name}, {}, rows, PARAMETER_UNITS)

    @property
    def residuals(self) -> Result:
        rows = [{"family": family, **item} for family, item in self.record.get("residuals", {}).items()]
        return Result(
            "calibration_residuals",
            {"residual": "(simulated - measured) / measured"},
            {},
            rows,
            {"family": "", "points": "", "median": "", "largest": ""},
        )

    def __str__(self) -> str:
        lines = [f"# {line}" for line in self.said]
        for row in self.parameters.rows:
            interval = (
                ""
                if row["low"] is None
                else f"  (95% of draws {with_unit(row['low'], row['unit'])} .. {with_unit(row['high'], row['unit'])})"
            )
            lines.append(
                f"{row['parameter']:<20} {with_unit(row['value'], row['unit']):>12}  {row['source']}" f"{interval}"
            )
        lines.append(self.residuals.table("# residuals per family: (simulated - measured) / measured"))
        for name, item in self.record.get("experiments", {}).items():
            form = "none (one rank count)" if item["model_form"] is None else f"{item['model_form']:.3g}"
            lines.append(
                f"# {name}: discrepancy factor {item['factor']:.3g} (median at the largest rank count; per size "
                f"{fit.factor_range(item.get('size_factors'))}), "
                f"scatter between launches {item['scatter']:.3g}, model-form {form}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Platform {self.fabric.name} fitted to {self.record.get('directory')!r}>"


def calibrate(
    directory, ranks: int | None = None, launches: int = 0, *, draws: int = fit.BOOTSTRAP, **campaign_options
) -> Platform:
    """The platform fitted to the launches in `directory`, after adding
    `launches` launches of the campaign there on `ranks` fresh MPI ranks
    (fpgacomm.launch; campaign_options go to calibration.campaign.run)."""
    from ..benchmarks.launch import launch

    for _ in range(launches):
        launch(ranks or 2, campaign.run, directory=str(directory), **campaign_options)
    fab, record, said = fit.fit(directory, bootstrap=draws)
    return Platform(fab, record, said)


def predict(
    platform, experiment: str = "gather", schedule: str = "tree", nodes=(16, 32), sizes=(1 << 20,), **options
) -> Result:
    """Predicted times with 95 % intervals (calibration.predict.predict) on
    a Platform, a platform file, a preset's name or a Fabric."""
    return _predict(
        platform.fabric if isinstance(platform, Platform) else platform, experiment, schedule, nodes, sizes, **options
    )
