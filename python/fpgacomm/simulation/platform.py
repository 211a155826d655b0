"""Platform files: a simulated fabric as public, versioned JSON.

A platform file names the preset that builds the simulator's spec and gives
every one of its parameters with its unit and where it came from, so that
a fitted cluster and a paper's FPGA network are written the same way::

    {"schema": "fpgacomm.platform/1",
     "preset": "cluster",
     "reference": "Alexandrov et al., LogGP: ...",
     "parameters": {"n": {"value": 8, "unit": "", "provenance": {...}},
                    "send_overhead": {"value": 3e-07, "unit": "s", "provenance": {...}}, ...},
     "mac_table": [[0, 0, 0, "02:00:00:01:00:00"]],          (VCSN's virtual links, if any)
     "link_scales": [[device, port, factor]],                 (slowed links, if any)
     "seed": 1,
     "draws": [{"send_overhead": 3.1e-07, ...}, ...]}         (optional)

A provenance is {"source": "preset", "preset": NAME, "reference": PAPER}
or {"source": "fit", "calibration": DIR}. This module writes and checks the
document; fabric.py (Fabric.to_json, Fabric.from_json, platform_or_preset)
builds the fabric from it with the preset registry. docs/FABRIC.md,
"Platform files", describes each key.
"""

from __future__ import annotations

import dataclasses
import json
import math

from .. import _core
from ..runtime import files

SCHEMA = "fpgacomm.platform/1"
UsageError = _core.UsageError


@dataclasses.dataclass
class Platform:
    """What a platform file says, checked: the preset, its parameters'
    values and the provenance of those not from the preset, and the rest."""

    preset: str
    values: dict
    provenance: dict
    draws: list
    mac_table: list
    link_scales: list
    seed: int
    #: What calibrate fit recorded beside the parameters (discrepancy factors, scatter between launches, model-form terms per
    #: experiment, residuals), or {} for a platform that no calibration made.
    calibration: dict = dataclasses.field(default_factory=dict)


def preset_provenance(name: str, reference: str) -> dict:
    return {"source": "preset", "preset": name, "reference": reference}


def dump(platform: Platform, reference: str, units: dict) -> str:
    """The platform file's text: every parameter with its unit and provenance."""
    default = preset_provenance(platform.preset, reference)
    document = {
        "schema": SCHEMA,
        "preset": platform.preset,
        "reference": reference,
        "parameters": {
            key: {"value": platform.values[key], "unit": unit, "provenance": platform.provenance.get(key, default)}
            for key, unit in units.items()
        },
    }
    if platform.mac_table:
        document["mac_table"] = [list(item) for item in platform.mac_table]
    if platform.link_scales:
        document["link_scales"] = [list(item) for item in platform.link_scales]
    document["seed"] = platform.seed
    if platform.draws:
        document["draws"] = [dict(draw) for draw in platform.draws]
    if platform.calibration:
        document["calibration"] = platform.calibration
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def _reject_constant(name: str):
    raise UsageError(f"platform: the number {name} is not finite; give every parameter as a finite number")


def parse(text: str, registry: dict, where: str = "platform") -> Platform:
    """The platform file `text`, checked against `registry` (preset name ->
    (reference, {parameter: unit})): schema, preset, every parameter present
    with its unit, numbers finite and 0 or more, draws of the same keys. Any
    failure is one UsageError naming it and the fix."""
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise UsageError(
            f"{where}: not JSON ({error}); give a platform file written by fpgacomm "
            f"(Fabric.to_json, calibrate fit) or a preset name"
        ) from None
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else None
        raise UsageError(
            f"{where}: schema {found!r}; this fpgacomm reads platform files of schema {SCHEMA}: "
            f"write the platform again with this version (Fabric.to_json, calibrate fit)"
        )
    name = document.get("preset")
    if name not in registry:
        raise UsageError(f"{where}: preset {name!r}; use one of {', '.join(registry)}")
    reference, units = registry[name]
    given = document.get("parameters")
    if not isinstance(given, dict):
        raise UsageError(f"{where}: no \"parameters\" object; give each of {', '.join(units)}")
    missing = [key for key in units if key not in given]
    if missing:
        raise UsageError(
            f"{where}: parameter {', '.join(missing)} of {name} is missing; give "
            f"{{\"value\": ..., \"unit\": ...}} for it (a file written before {name} had it: write the "
            f"platform again, e.g. with calibrate fit, or add the parameter to the file)"
        )
    unknown = sorted(set(given) - set(units))
    if unknown:
        raise UsageError(
            f"{where}: {name} has no parameter {', '.join(unknown)}; its parameters are " f"{', '.join(units)}"
        )
    default = preset_provenance(name, reference)
    values, provenance = {}, {}
    for key, unit in units.items():
        item = given[key]
        if not isinstance(item, dict) or "value" not in item:
            raise UsageError(f'{where}: parameter {key} is {item!r}; give {{"value": ..., "unit": "{unit}"}}')
        if item.get("unit", unit) != unit:
            raise UsageError(
                f"{where}: parameter {key} in unit {item['unit']!r}; {SCHEMA} gives it in "
                f"{unit!r}" + ("" if unit else " (a count or a name)")
            )
        values[key] = check_value(where, key, item["value"])
        if item.get("provenance", default) != default:
            provenance[key] = item["provenance"]
    draws = document.get("draws", [])
    if not isinstance(draws, list):
        raise UsageError(f'{where}: "draws" is not a list; give a list of parameter sets')
    for index, draw in enumerate(draws):
        if not isinstance(draw, dict) or not set(draw) <= set(units):
            raise UsageError(
                f"{where}: draw {index} is not a set of {name}'s parameters; give objects whose "
                f"keys are among {', '.join(units)}"
            )
        for key, value in draw.items():
            check_value(f"{where}: draw {index}", key, value)
    link_scales = document.get("link_scales", [])
    for scale in link_scales:
        check_value(where, "link scale factor", scale[-1] if isinstance(scale, list) and scale else None)
    calibration = document.get("calibration", {})
    check_calibration(where, calibration)
    return Platform(
        name,
        values,
        provenance,
        [dict(draw) for draw in draws],
        document.get("mac_table", []),
        link_scales,
        document.get("seed", 1),
        calibration,
    )


# The terms of one experiment in a calibration record that a prediction computes with (calibration/predict.py),
# each a finite number of 0 or more; model_form may be null (one rank count: nothing was held out).
CALIBRATION_TERMS = ("factor", "scatter", "model_form")


def check_calibration(where: str, record) -> None:
    """A platform file's calibration record: an object whose experiments
    hold finite, non-negative terms and a positive factor, so that a damaged
    file is one UsageError naming the entry, never a prediction of NaN."""
    if not isinstance(record, dict):
        raise UsageError(f'{where}: "calibration" is {record!r}; write the platform again with calibrate fit')
    experiments = record.get("experiments", {})
    if not isinstance(experiments, dict):
        raise UsageError(f'{where}: calibration "experiments" is not an object; write it again with calibrate fit')
    for table in ("host_copy", "host_pass"):  # null where the launches did not measure them
        rates = record.get(table)
        if rates is not None and not _copy_table(rates):
            raise UsageError(
                f'{where}: calibration "{table}" is not a table of [threads, block in bytes, B/s] above 0 with every '
                f"block at every thread count; write it again with calibrate fit"
            )
    for key, terms in experiments.items():
        if not isinstance(terms, dict):
            raise UsageError(f"{where}: calibration of {key} is {terms!r}; write it again with calibrate fit")
        for term in CALIBRATION_TERMS:
            value = terms.get(term, 0.0)
            if term == "model_form" and value is None:
                continue
            if isinstance(value, str):  # check_value lets names through, which a term is not
                raise UsageError(f"{where}: calibration of {key}: parameter {term} is {value!r}; give a number")
            check_value(f"{where}: calibration of {key}", term, value)
        if terms.get("factor") == 0:  # it multiplies a rank's terms
            raise UsageError(f"{where}: calibration of {key}: factor 0; write it again with calibrate fit")
        pairs = terms.get("size_factors", [[1, 1.0]])
        if not isinstance(pairs, list) or not pairs or any(not _positive_numbers(pair, 2) for pair in pairs):
            raise UsageError(
                f"{where}: calibration of {key}: size_factors is {pairs!r}, not a list of [size in bytes, factor] "
                f"with both above 0; write it again with calibrate fit"
            )


def _positive_numbers(values, length: int) -> bool:
    return (
        isinstance(values, list)
        and len(values) == length
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        and all(math.isfinite(v) and v > 0 for v in values)
    )


def _copy_table(rows) -> bool:
    if not isinstance(rows, list) or not rows or not all(_positive_numbers(row, 3) for row in rows):
        return False
    cells = {(row[0], row[1]) for row in rows}
    return len(cells) == len(rows) == len({row[0] for row in rows}) * len({row[1] for row in rows})


def check_value(where: str, key: str, value):
    """Numbers finite and 0 or more; names as given (the preset checks them)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: parameter {key} is {value!r}; give a number")
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: parameter {key} is {value!r}; give a finite number of 0 or more")
    return value


def read_text(path: str, presets) -> str:
    """The text of the platform file at `path`, through the one file
    boundary; `presets` name the alternative in the message."""
    try:
        return files.read_text(path)
    except files.ResultError as error:
        raise UsageError(
            f"platform {error.path}: {error.problem}; give a platform file or a preset " f"({', '.join(presets)})"
        ) from None
