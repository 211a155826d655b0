"""What a path given to compare, plot, fit or load stands for: the Result
files of a file, a glob or a folder, alike in every command.

A folder of `fpgacomm compare --run` launches is read through its record
(launches.json): its launches' outputs, in launch order, those that
finished (status 0). Any other folder gives its Result files: its JSON
files, else its CSV files, else every file but a launch's stderr (.err).
A glob gives its matching files, leaving out a campaign's record, so that
`'runs/A/*.json'` means the launches.
"""

from __future__ import annotations

import glob
import os

from ..runtime.files import ResultError
from . import launch_record


def files_of(given) -> list:
    """The Result files one input stands for (a list, possibly empty for a
    folder or a glob that holds none); a ResultError where a plain path does
    not exist."""
    given = os.fspath(given)
    if os.path.isdir(given):
        record = launch_record.record(given)  # a ResultError where it is not the record compare --run writes
        if record is not None:
            return [os.path.join(given, launch["output"]) for launch in record["launches"] if launch["status"] == 0]
        try:
            names = sorted(os.listdir(given))
        except OSError as error:
            raise ResultError(given, f"cannot list the folder: {error.strerror or error}") from None
        paths = [
            path
            for path in _plain_files(os.path.join(given, name) for name in names)
            if os.path.basename(path) != launch_record.LAUNCHES
        ]
        for suffix in (".json", ".csv"):
            chosen = [path for path in paths if path.lower().endswith(suffix)]
            if chosen:
                return chosen
        return [path for path in paths if not path.endswith(".err")]
    if glob.has_magic(given):
        return [
            path for path in _plain_files(sorted(glob.glob(given))) if os.path.basename(path) != launch_record.LAUNCHES
        ]
    if not os.path.lexists(given):
        raise ResultError(given, "no such file or folder")
    return [given]


def expand(inputs) -> list:
    """Every file of one input or a list of them, in the order given; a
    ResultError naming an input (a folder or glob) that holds no Result file."""
    inputs = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    files = []
    for given in inputs:
        found = files_of(given)
        if not found:
            raise ResultError(
                given, "holds no Result files (JSON or CSV files written by fpgacomm, or a peer's " "text output)"
            )
        files += found
    return files


def _plain_files(paths) -> list:
    return [path for path in paths if os.path.isfile(path)]
