"""Platform files: a simulated fabric as public, versioned JSON.

A platform file names the preset that builds the simulator's spec and gives
every one of its parameters with its unit and where it came from, so that
a fitted cluster and a paper's FPGA network are written the same way:

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
or {"source": "fit", "calibration": DIR}. Reading a file back builds the
same spec, so every simulated time is the same to the bit. docs/FABRIC.md,
"Platform files", describes each key.
"""

from __future__ import annotations

import json
import math
import os

from .. import _core
from . import fabric as fabrics

SCHEMA = "fpgacomm.platform/1"
UsageError = _core.UsageError


def preset_provenance(name: str) -> dict:
    return {"source": "preset", "preset": name, "reference": fabrics.PRESETS[name].reference}


def to_dict(fab: fabrics.Fabric) -> dict:
    entry = fabrics.PRESETS[fab.name]
    parameters = {key: {"value": fab.arguments[key], "unit": unit,
                        "provenance": fab.provenance.get(key, preset_provenance(fab.name))}
                  for key, unit in entry.units.items()}
    document = {"schema": SCHEMA, "preset": fab.name, "reference": entry.reference, "parameters": parameters}
    if fab.spec.mac_table:
        document["mac_table"] = [list(item) for item in fab.spec.mac_table]
    if fab.spec.link_scales:
        document["link_scales"] = [list(item) for item in fab.spec.link_scales]
    document["seed"] = fab.spec.seed
    if fab.draws:
        document["draws"] = [dict(draw) for draw in fab.draws]
    return document


def to_json(fab: fabrics.Fabric) -> str:
    return json.dumps(to_dict(fab), indent=1, allow_nan=False) + "\n"


def _reject_constant(name: str):
    raise UsageError(f"platform: the number {name} is not finite; give every parameter as a finite number")


def from_json(text: str, where: str = "platform") -> fabrics.Fabric:
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise UsageError(f"{where}: not JSON ({error}); give a platform file written by fpgacomm "
                         f"(Fabric.to_json, calibrate fit) or a preset name") from None
    return from_dict(document, where)


def from_dict(document, where: str = "platform") -> fabrics.Fabric:
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else None
        raise UsageError(f"{where}: schema {found!r}; this fpgacomm reads platform files of schema {SCHEMA}: "
                         f"write the platform again with this version (Fabric.to_json, calibrate fit)")
    name = document.get("preset")
    if name not in fabrics.PRESETS:
        raise UsageError(f"{where}: preset {name!r}; use one of {', '.join(fabrics.PRESETS)}")
    units = fabrics.PRESETS[name].units
    given = document.get("parameters")
    if not isinstance(given, dict):
        raise UsageError(f"{where}: no \"parameters\" object; give each of {', '.join(units)}")
    missing = [key for key in units if key not in given]
    if missing:
        raise UsageError(f"{where}: parameter {', '.join(missing)} of {name} is missing; give "
                         f"{{\"value\": ..., \"unit\": ...}} for it")
    unknown = sorted(set(given) - set(units))
    if unknown:
        raise UsageError(f"{where}: {name} has no parameter {', '.join(unknown)}; its parameters are "
                         f"{', '.join(units)}")
    values, provenance = {}, {}
    for key, unit in units.items():
        item = given[key]
        if not isinstance(item, dict) or "value" not in item:
            raise UsageError(f"{where}: parameter {key} is {item!r}; give {{\"value\": ..., \"unit\": \"{unit}\"}}")
        if item.get("unit", unit) != unit:
            raise UsageError(f"{where}: parameter {key} in unit {item['unit']!r}; {SCHEMA} gives it in "
                             f"{unit!r}" + (" (a count or name)" if not unit else ""))
        values[key] = _checked(where, key, item["value"])
        if item.get("provenance", preset_provenance(name)) != preset_provenance(name):
            provenance[key] = item["provenance"]
    draws = document.get("draws", [])
    if not isinstance(draws, list):
        raise UsageError(f"{where}: \"draws\" is not a list; give a list of parameter sets")
    for index, draw in enumerate(draws):
        if not isinstance(draw, dict) or not set(draw) <= set(units):
            raise UsageError(f"{where}: draw {index} is not a set of {name}'s parameters; give objects whose "
                             f"keys are among {', '.join(units)}")
        for key, value in draw.items():
            _checked(f"{where}: draw {index}", key, value)
    fab = fabrics.preset(name, **values)
    fab.provenance, fab.draws = provenance, [dict(draw) for draw in draws]
    for node, port, vport, destination in document.get("mac_table", []):
        fab.connect((node, port, vport), destination)
    for device, port, factor in document.get("link_scales", []):
        fab.spec.scale_link(device, port, _checked(where, "link scale factor", factor))
    fab.spec.seed = document.get("seed", fab.spec.seed)
    return fab


def _checked(where: str, key: str, value):
    """Numbers finite and 0 or more; names as given (the preset checks them)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: parameter {key} is {value!r}; give a number")
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: parameter {key} is {value!r}; give a finite number of 0 or more")
    return value


def read(path: str) -> fabrics.Fabric:
    """The platform file at `path`."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise UsageError(f"platform {path}: cannot read it ({error.strerror}); give a platform file or a "
                         f"preset ({', '.join(fabrics.PRESETS)})") from None
    return from_json(text, where=f"platform {path}")


def is_platform_file(text) -> bool:
    """A Fabric, or a string naming a file (or a .json path) rather than a preset."""
    return isinstance(text, fabrics.Fabric) or (isinstance(text, str) and text not in fabrics.PRESETS and (
        os.path.exists(text) or text.endswith(".json")))


def platform_or_preset(text, nodes: int | None = None) -> fabrics.Fabric:
    """A Fabric from a preset name, a platform file's path, or a Fabric, with
    `nodes` nodes where given: what `fabric`, `gather --fabric` and
    `predict --fabric` accept."""
    if isinstance(text, fabrics.Fabric):
        fab = text
    elif text in fabrics.PRESETS:
        return fabrics.preset(text, nodes)
    elif is_platform_file(text):
        fab = read(text)
    else:
        raise UsageError(f"fabric: unknown preset {text!r}, and no platform file of that name; give one of "
                         f"{', '.join(fabrics.PRESETS)}, or the path of a platform file")
    if nodes is None or nodes == fab.nodes:
        return fab
    if not fabrics.PRESETS[fab.name].node_arguments:
        raise UsageError(f"fabric: {fab.name} has {fab.nodes} nodes, not {nodes}")
    return fabrics.resized(fab, nodes)
