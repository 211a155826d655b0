"""The record `fpgacomm compare --run` keeps of a command's launches
(OUT/A/launches.json): written by results/launches.py as each launch ends,
read by every command that takes a campaign folder (results/inputs.py), each
field it uses checked through the one file boundary (runtime/files.py)."""

from __future__ import annotations

import json
import os

from ..runtime import files
from ..runtime.files import ResultError

#: Each command folder's record of its launches.
LAUNCHES = "launches.json"


def write(folder: str, record: dict) -> None:
    """The record, replaced whole (a reader never sees half of it)."""
    path = os.path.join(folder, LAUNCHES)
    with open(path + ".tmp", "w", encoding="utf-8") as file:
        json.dump(record, file, indent=1)
    os.replace(path + ".tmp", path)


def record(folder) -> dict | None:
    """A command folder's launch record, or None where it has none; a
    ResultError where launches.json is not the record compare --run writes
    (runtime/files.py reads it, every field used is checked)."""
    path = os.path.join(os.fspath(folder), LAUNCHES)
    if not os.path.lexists(path):
        return None
    data = files.read_json(path, what="the record fpgacomm compare --run writes")
    try:
        _check(data)
    except ValueError as error:
        raise ResultError(
            path,
            f"{error}; it is not the record fpgacomm compare --run writes (rename it, or " "run the campaign again)",
        ) from None
    return data


def _check(data) -> None:
    """The fields of a launch record that readers use, of their types."""
    files.of_type("the record", data, (dict,), "an object {command, fpgacomm, rounds, launches}")
    files.of_type("command", data.get("command"), (str,), "a command's text")
    launches = files.of_type("launches", data.get("launches"), (list,), "a list of launches")
    for number, launch in enumerate(launches, start=1):
        where = f"launch {number}"
        files.of_type(where, launch, (dict,), "an object {launch, output, status, seconds, load_before, cores}")
        files.of_type(f"{where} output", launch.get("output"), (str,), "a file name")
        files.number(f"{where} status", launch.get("status"), integer=True)
        files.number(f"{where} load_before", launch.get("load_before"), minimum=0, none=True)
        files.number(f"{where} cores", launch.get("cores"), integer=True, minimum=1)
