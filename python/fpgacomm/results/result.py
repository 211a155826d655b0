"""The record every benchmark returns, and its JSON and CSV files.

Measuring and reporting are kept apart (as google/benchmark keeps its Run
apart from its reporters): a benchmark fills a Result with plain SI numbers
(bytes, seconds, bytes/second) and never formats text; report.py, the writers
here and the plotting code all read the same Result.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import re
import secrets
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import files
from ..runtime.files import ResultError
from ..units import NUMBER_UNITS, with_unit
from . import kinds, peers
from .inputs import expand

SCHEMA = "fpgacomm.result/1"

# Types a row cell may hold: what JSON and our CSV carry without loss.
_CELL_TYPES = (int, float, str, type(None))

# A CSV header cell "key[unit]"; the unit may be empty ("validation[]").
_HEADER_CELL = re.compile(r"^(?P<key>.+)\[(?P<unit>[^\[\]]*)\]$")
_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")

#: The one row cell that is not a scalar: with rounds (--rounds N > 1),
#: ``{column: [value of round 1, round 2, ...]}`` for each measured column,
#: the row's scalars being the medians (docs/METHODS.md, "Rounds"). It is
#: no column: `columns`, units and the tables leave it out.
ROUNDS = "rounds"
# A CSV header cell of one round's value: "COLUMN@rK" (K from 1).
_ROUND_HEADER = re.compile(r"^(?P<column>.+)@r(?P<round>[1-9][0-9]*)$")


def _plain_cell(value: Any, where: str) -> Any:
    """Return value as a plain Python int/float/str/None, or raise.

    NumPy scalars are unwrapped because the core and user code produce them
    naturally and json cannot write them. bool is refused: it is an int in
    Python but would come back from CSV as the string "True".
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, _CELL_TYPES):
        raise TypeError(
            f"{where}: a row value must be int, float, str or None, " f"got {type(value).__name__} {value!r}"
        )
    return value


def _rounds_cell(cell: Any, columns: list, where: str) -> dict:
    """A row's rounds cell checked: a dict of measured columns of the row
    to lists of one plain number (or None) per round, every list as long
    as the others."""
    if not isinstance(cell, dict) or not cell:
        raise TypeError(
            f"{where}: the rounds cell must be a non-empty dict {{column: [value per round]}}, "
            f"got {type(cell).__name__} {cell!r}"
        )
    checked, lengths = {}, set()
    for column, values in cell.items():
        if column not in columns or column == "size":
            raise ValueError(f"{where}: the rounds cell names {column!r}, which is no measured column of the row")
        if not isinstance(values, (list, tuple)) or not values:
            raise TypeError(f"{where}: rounds of {column!r} must be a non-empty list, got {values!r}")
        plain = [_plain_cell(value, f"{where} round {i + 1} of {column!r}") for i, value in enumerate(values)]
        if any(isinstance(value, str) for value in plain):
            raise TypeError(f"{where}: rounds of {column!r} must be numbers or None, got {plain!r}")
        checked[column] = plain
        lengths.add(len(plain))
    if len(lengths) > 1:
        raise ValueError(
            f"{where}: the rounds cell's lists differ in length ({sorted(lengths)}); each holds one "
            "value per round the row has"
        )
    return checked


def check_cells(d: dict) -> None:
    """The cells of a Result's dict as read from a file, checked beyond
    what the Result itself asks of a benchmark's rows: units are names,
    sizes finite numbers of 0 or more, a column in a unit of numbers
    (units.NUMBER_UNITS) holds numbers or None, samples are lists of
    numbers. A ValueError says which cell is wrong; parts of the wrong type
    are left to from_dict, which names them."""
    units = d.get("units")
    if isinstance(units, dict):
        for column, unit in units.items():
            if not isinstance(unit, str):
                raise ValueError(f"the unit of {column!r} is {type(unit).__name__} {unit!r}, not a unit's name")
    units = units if isinstance(units, dict) else {}
    rows = d.get("rows")
    texts = {}  # column -> whether its first value was text: a column is text or numbers, never both
    for i, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, dict):
            continue
        for column, value in row.items():
            where = f"row {i} column {column!r}"
            if column == "size" and value is not None:
                files.number(where, value, minimum=0)
            elif units.get(column) in NUMBER_UNITS or isinstance(value, int):  # any whole number: 64-bit
                files.number(where, value, finite=False, none=True)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                if texts.setdefault(column, isinstance(value, str)) != isinstance(value, str):
                    raise ValueError(f"{where}: {value!r} mixes text and numbers in one column")
    samples = d.get("samples")
    if isinstance(samples, dict):
        for size, values in samples.items():
            for k, value in enumerate(values if isinstance(values, list) else []):
                files.number(f"sample {k} of size {size}", value, finite=False)


class Result:
    """Outcome of one benchmark run: what ran, where, and a table of rows.

    benchmark
        name such as "osu_latency".
    params
        every parameter of the run (JSON types only).
    env
        where it ran: hosts, ranks, MPI, OpenCL device, fpgacomm version.
    rows
        one dict per message size, all with the same keys in the same
        order; values int, float, str or None, in SI units. A run of
        several rounds adds the cell "rounds" (ROUNDS) to every row:
        {column: [value per round]}, the row's scalars being the medians.
    units
        unit of each column ("B", "s", "B/s", "1/s", "" for counts and
        strings); exactly one entry per column, so files can name the unit
        of every column they hold.
    samples
        raw per-iteration samples per size, keyed by str(size)
        (latencies in s, per-window bandwidths in B/s); JSON keeps them,
        CSV does not.
    incomplete
        None for a finished run; for a run stopped part-way (an
        interrupt), why, and how many sizes it finished: the rows are those
        sizes. Files carry it as the top-level field "incomplete".
    """

    def __init__(
        self,
        benchmark: str,
        params: dict,
        env: dict,
        rows: list,
        units: dict,
        samples: dict | None = None,
        incomplete: str | None = None,
    ):
        if not isinstance(benchmark, str) or not benchmark:
            raise ValueError(f"benchmark must be a non-empty name, got {benchmark!r}")
        self.benchmark = benchmark
        self.params = dict(params)
        self.env = dict(env)
        self.units = {str(k): str(v) for k, v in units.items()}
        self.rows = self._checked_rows(rows)
        if samples is None:
            self.samples = None
        else:
            self.samples = {str(k): [float(x) for x in v] for k, v in samples.items()}
        self.incomplete = incomplete

    def _checked_rows(self, rows: list) -> list:
        """Copy rows with plain cell values, checking they form one table."""
        checked = []
        keys = list(rows[0].keys()) if rows else list(self.units)
        columns = [key for key in keys if key != ROUNDS]
        rounds_keys = None
        for i, row in enumerate(rows):
            if list(row.keys()) != keys:
                raise ValueError(
                    f"{self.benchmark}: row {i} has columns {list(row.keys())}, "
                    f"row 0 has {keys}; all rows must have the same keys "
                    f"in the same order"
                )
            where = f"{self.benchmark} row {i}"
            plain = {
                k: (_rounds_cell(v, columns, where) if k == ROUNDS else _plain_cell(v, f"{where} column {k!r}"))
                for k, v in row.items()
            }
            if ROUNDS in plain:
                if rounds_keys is None:
                    rounds_keys = list(plain[ROUNDS])
                elif list(plain[ROUNDS]) != rounds_keys:
                    raise ValueError(
                        f"{where}: its rounds cell names {list(plain[ROUNDS])}, row 0's names "
                        f"{rounds_keys}; every row's names the same columns"
                    )
            checked.append(plain)
        missing = [c for c in columns if c not in self.units]
        extra = [u for u in self.units if u not in columns]
        if missing or extra:
            raise ValueError(
                f"{self.benchmark}: units must name every column and nothing "
                f"else; missing {missing}, not a column {extra}"
            )
        return checked

    # ------------------------------------------------------------------ table

    @property
    def columns(self) -> list:
        """Column keys in row order (the units' order when there are no
        rows); the rounds cell is no column."""
        return [key for key in self.rows[0] if key != ROUNDS] if self.rows else list(self.units)

    @property
    def round_columns(self) -> list:
        """The columns whose every round the rows keep (row["rounds"]); [] without rounds."""
        return list(self.rows[0][ROUNDS]) if self.rows and ROUNDS in self.rows[0] else []

    def column(self, name: str) -> np.ndarray:
        """One column as a NumPy array (numeric columns: None becomes NaN)."""
        if name not in self.columns:
            raise KeyError(f"{self.benchmark} has no column {name!r}; columns: {self.columns}")
        return self.to_numpy()[name]

    def to_numpy(self) -> np.ndarray:
        """The rows as a structured array, one field per column.

        A column of ints stays int64 unless it holds a None, in which case it
        becomes float64 so the gap can be NaN; any float makes it float64;
        strings become fixed-width unicode with None as "". A column with no
        values at all is float64 NaN.
        """
        fields = []
        for name in self.columns:
            values = [row[name] for row in self.rows]
            present = [v for v in values if v is not None]
            if any(isinstance(v, str) for v in present):
                if not all(isinstance(v, str) for v in present):
                    raise TypeError(
                        f"{self.benchmark}: column {name!r} mixes strings " f"and numbers; it has no NumPy type"
                    )
                width = max([len(v) for v in present] + [1])
                fields.append((name, f"<U{width}"))
            elif values and all(isinstance(v, int) for v in values):
                fields.append((name, np.int64))
            else:
                fields.append((name, np.float64))
        table = np.zeros(len(self.rows), dtype=fields)
        for name, dtype in fields:
            values = [row[name] for row in self.rows]
            if dtype == np.float64:
                table[name] = [math.nan if v is None else v for v in values]
            elif dtype == np.int64:
                table[name] = values
            else:
                table[name] = ["" if v is None else v for v in values]
        return table

    def __repr__(self) -> str:
        return f"Result({self.benchmark!r}, {len(self.rows)} rows, {len(self.columns)} columns)"

    def __str__(self) -> str:
        return self.table()

    def title(self) -> str:
        """The benchmark and the parameters that tell its runs apart."""
        shown = [
            f"{key} {self.params[key]}" for key in _TITLE_PARAMS if isinstance(self.params.get(key), (str, int, float))
        ]
        title = ", ".join([self.benchmark, *shown])
        return f"{title} (incomplete: {self.incomplete})" if self.incomplete else title

    def table(self, title: str | None = None, digits: int = 3) -> str:
        """The rows as aligned text under a title (by default self.title()):
        one column per key, each value with its unit (units.with_unit, to
        `digits` significant digits)."""
        headers = list(self.columns)
        cells = [[with_unit(row[name], self.units.get(name, ""), digits) for name in self.columns] for row in self.rows]
        # At least two spaces between columns, however long a name or value.
        widths = [max([len(header)] + [len(row[i]) for row in cells]) for i, header in enumerate(headers)]
        lines = [self.title() if title is None else title]
        lines += ["  ".join(cell.rjust(width) for cell, width in zip(row, widths)) for row in [headers, *cells]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The table as Jupyter shows it."""
        head = "".join(f"<th>{html.escape(name)}</th>" for name in self.columns)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(with_unit(row[name], self.units.get(name, '')))}</td>" for name in self.columns
            )
            + "</tr>"
            for row in self.rows
        )
        return (
            f"<table><caption>{html.escape(self.title())}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )

    def to_pandas(self):
        """The rows as a pandas DataFrame (SI values); its attrs hold the
        benchmark, units and params. Needs pandas, which fpgacomm does not."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "Result.to_pandas needs pandas (pip install pandas); Result.to_numpy gives the same "
                "table as a NumPy structured array"
            ) from None
        frame = pandas.DataFrame(self.rows, columns=self.columns)
        frame.attrs.update(benchmark=self.benchmark, units=dict(self.units), params=dict(self.params))
        return frame

    # ------------------------------------------------------------------- JSON

    def to_dict(self) -> dict:
        """Plain dict (JSON types) with the schema tag; from_dict reverses it."""
        d = {
            "schema": SCHEMA,
            "benchmark": self.benchmark,
            "params": self.params,
            "env": self.env,
            "units": self.units,
            "rows": self.rows,
            "samples": self.samples,
        }
        if self.incomplete:
            d["incomplete"] = self.incomplete
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Result:
        """Rebuild a Result from to_dict's output, refusing other schemas."""
        if not isinstance(d, dict) or "schema" not in d:
            raise ValueError(f"not an fpgacomm result: no 'schema' field " f"(expected {SCHEMA!r})")
        if d["schema"] != SCHEMA:
            raise ValueError(f"unsupported result schema {d['schema']!r}; " f"this fpgacomm reads {SCHEMA!r}")
        missing = [k for k in ("benchmark", "params", "env", "units", "rows") if k not in d]
        if missing:
            raise ValueError(f"{SCHEMA} result lacks field(s) {missing}")
        shapes = {
            "benchmark": (str,),
            "params": (dict,),
            "env": (dict,),
            "units": (dict,),
            "rows": (list,),
            "samples": (dict, type(None)),
            "incomplete": (str, type(None)),
        }
        wrong = [
            f"{key!r} is {type(d.get(key)).__name__}"
            for key, types in shapes.items()
            if not isinstance(d.get(key), types)
        ]
        if not wrong and not all(isinstance(row, dict) for row in d["rows"]):
            wrong = ["'rows' holds something other than objects"]
        if not wrong and d.get("samples") and not all(isinstance(v, list) for v in d["samples"].values()):
            wrong = ["'samples' holds something other than lists"]
        if wrong:
            raise ValueError(f"malformed {SCHEMA} result: {'; '.join(wrong)}")
        return cls(d["benchmark"], d["params"], d["env"], d["rows"], d["units"], d.get("samples"), d.get("incomplete"))

    def write_json(self, path) -> None:
        """Write the whole Result, samples included, atomically as JSON.

        Floats are written by the json module with repr, so they read back
        bit for bit.
        """
        atomic_write(path, self._stream_json, newline=None)

    def _stream_json(self, f) -> None:
        """to_dict's JSON into `f`, indented, each size's samples on one line
        of their own, written as they come: the samples of a long run (one
        per timed iteration, millions) go through the json module's C
        encoder, which indentation would turn off, and no text of the whole
        file is ever held, so that rank 0 writes them within the seconds an
        interrupted run has."""
        d = self.to_dict()
        samples = d.pop("samples")
        head = json.dumps(d, indent=1)
        f.write(head[:-2])  # without its closing "\n}"
        if samples is None:
            f.write(',\n "samples": null\n}')
            return
        f.write(',\n "samples": {')
        for index, (key, values) in enumerate(samples.items()):
            f.write(f'{"," if index else ""}\n  {json.dumps(key)}: ')
            f.write(json.dumps(values))
        f.write("\n }\n}")

    @classmethod
    def read_json(cls, path) -> Result:
        """Read a file written by write_json; a ResultError naming the file
        and what is wrong with it otherwise (runtime/files.py)."""
        return cls.from_file(path, files.read_json(path, what="an fpgacomm Result"))

    @classmethod
    def from_file(cls, path, d) -> Result:
        """from_dict of what the file at `path` holds, every cell checked
        (check_cells); what is wrong is a ResultError naming the file."""
        try:
            if isinstance(d, dict):
                check_cells(d)
            return cls.from_dict(d)
        except ResultError:
            raise
        except (ValueError, TypeError) as error:
            raise ResultError(path, str(error)) from None

    # -------------------------------------------------------------------- CSV

    def write_csv(self, path) -> None:
        """Write the table atomically as CSV, for spreadsheets and plain tools.

        Layout: comment lines "# key: <JSON>" carrying schema, benchmark,
        params, env (and incomplete, when set); a header row of "key[unit]" cells; then the rows.
        Cells: ints as digits, floats as repr (exact round trip), strings as
        themselves, None as an empty cell. read_csv infers the type from the
        text, so a string that would read back as a number or as None (an
        empty string, "12", "nan") cannot be written; JSON carries those.
        Samples are not written. Rows of several rounds add the column
        "rounds[]", how many rounds the row has, and one column per measured
        column and round, "COLUMN@rK[unit]", after the others (empty where a
        row has fewer rounds, as an interrupted run's last sizes).
        """
        for i, row in enumerate(self.rows):
            for key, value in row.items():
                if isinstance(value, str) and _parse_cell(value) != value:
                    raise ValueError(
                        f"{self.benchmark} row {i} column {key!r}: the string "
                        f"{value!r} would read back from CSV as "
                        f"{_parse_cell(value)!r}; write JSON instead"
                    )

        def write(f):
            meta = [("schema", SCHEMA), ("benchmark", self.benchmark), ("params", self.params), ("env", self.env)]
            if self.incomplete:
                meta.append(("incomplete", self.incomplete))
            for key, value in meta:
                f.write(f"# {key}: {json.dumps(value)}\n")
            writer = csv.writer(f, lineterminator="\n")
            measured = self.round_columns
            count = max((len(next(iter(row[ROUNDS].values()))) for row in self.rows), default=0) if measured else 0
            header = [f"{c}[{self.units[c]}]" for c in self.columns]
            if measured:
                header += [f"{ROUNDS}[]"] + [
                    f"{c}@r{k}[{self.units[c]}]" for c in measured for k in range(1, count + 1)
                ]
            writer.writerow(header)
            for row in self.rows:
                cells = [_format_cell(row[c]) for c in self.columns]
                if measured:
                    rounds = row[ROUNDS]
                    done = len(rounds[measured[0]])
                    cells += [str(done)] + [
                        _format_cell(rounds[c][k]) if k < done else "" for c in measured for k in range(count)
                    ]
                writer.writerow(cells)

        atomic_write(path, write, newline="")

    @classmethod
    def read_csv(cls, path) -> Result:
        """Read a file written by write_csv (samples come back as None)."""
        lines = files.read_text(path).splitlines(keepends=True)
        meta = {}
        n_comments = 0
        for line in lines:
            if not line.startswith("# "):
                break
            key, sep, value = line[2:].partition(": ")
            if not sep:
                raise ResultError(path, f"comment line {n_comments + 1} is not '# key: <JSON>': {line.rstrip()!r}")
            try:
                meta[key] = json.loads(value)
            except (ValueError, RecursionError):
                raise ResultError(
                    path, f"comment line {n_comments + 1} ({key!r}) does not hold one JSON value"
                ) from None
            n_comments += 1
        try:
            table = list(csv.reader(io.StringIO("".join(lines[n_comments:]))))
        except csv.Error as error:
            raise ResultError(path, f"not CSV fpgacomm reads: {error}") from None
        if not table:
            raise ResultError(path, "no header row after the comment lines")
        keys, units = [], {}
        for cell in table[0]:
            m = _HEADER_CELL.match(cell)
            if not m:
                raise ResultError(path, f"header cell {cell!r} is not 'key[unit]'")
            keys.append(m["key"])
            if m["key"] != ROUNDS and not _ROUND_HEADER.match(m["key"]):
                units[m["key"]] = m["unit"]
        rows = []
        for line_no, cells in enumerate(table[1:], start=n_comments + 2):
            if len(cells) != len(keys):
                raise ResultError(path, f"line {line_no} has {len(cells)} cells, the header has {len(keys)}")
            try:
                rows.append(_row_of_csv({k: _parse_cell(c) for k, c in zip(keys, cells)}, f"line {line_no}"))
            except ValueError as error:
                raise ResultError(path, str(error)) from None
        d = dict(meta)
        d.setdefault("params", {})
        d.setdefault("env", {})
        d.update(units=units, rows=rows, samples=None)
        return cls.from_file(path, d)

    # ---------------------------------------------------------------- either

    _WRITERS = {".json": "write_json", ".csv": "write_csv"}
    _READERS = {".json": "read_json", ".csv": "read_csv"}

    @classmethod
    def read(cls, path) -> Result:
        """Read JSON or CSV, chosen by the file's suffix; a file of any other
        suffix as the text of a peer suite (results/peers.py: OSU
        Micro-Benchmarks, nccl-tests, IMB-MPI1, HPCC FPGA b_eff), its format
        told from its lines."""
        suffix = os.path.splitext(os.fspath(path))[1].lower()
        if suffix not in cls._READERS:
            result = cls.from_file(path, {"schema": SCHEMA, **peers.read_text(path)})
            result.env.setdefault("source", os.fspath(path))
            return result
        return getattr(cls, cls._READERS[suffix])(path)

    def write(self, path) -> None:
        """Write JSON or CSV, chosen by the file's suffix."""
        suffix = os.path.splitext(os.fspath(path))[1].lower()
        if suffix not in self._WRITERS:
            raise ValueError(
                f"cannot tell the format of {os.fspath(path)!r} from its suffix "
                f"{suffix!r}; use one of {sorted(self._WRITERS)}"
            )
        getattr(self, self._WRITERS[suffix])(path)


LOAD_NAME = kinds.LOAD


def load(paths) -> Result:
    """Many Result files as one table: `paths` is a path, a glob pattern or a
    folder, or a list of them, read as compare, plot and fit read them
    (results/inputs.py: a folder's JSON files, else its CSV files; a compare
    --run folder's launches); any mix of benchmarks.
    Each row gains columns that say which run it came from: "file",
    "benchmark", and one per parameter whose value differs between the
    files (memory kinds, sizes of a sweep, a benchmark's own options, a
    flag such as validate, written "true" or "false"); where a file holds
    an interrupted run, "incomplete" says so. A column a file lacks is
    None in its rows; a column two benchmarks hold in different units
    becomes one column per benchmark ("model (gather)"). The parameters
    every file shares stay params; params["run_columns"] names the columns
    that tell the runs apart (runs() splits the table by them)."""
    files = expand(paths)
    results = [Result.read(path) for path in files]
    scalars = [
        {key: _run_value(value) for key, value in result.params.items() if isinstance(value, (str, int, float, bool))}
        for result in results
    ]
    keys = list(dict.fromkeys(key for params in scalars for key in params))
    differing = [key for key in keys if len({repr(params.get(key)) for params in scalars}) > 1]
    shared = {key: results[0].params[key] for key in keys if key not in differing and key in scalars[0]}
    run_columns = ["file", "benchmark"] + (["incomplete"] if any(result.incomplete for result in results) else [])
    run_columns += [key for key in differing if key not in run_columns]
    seen = {}  # column -> {unit: [benchmarks]}
    for result in results:
        for column, unit in result.units.items():
            if column not in run_columns:
                seen.setdefault(column, {}).setdefault(unit, []).append(result.benchmark)
    split = {column for column, units in seen.items() if len(units) > 1}
    for column in split:  # one benchmark in two units: not a mix of families but a file gone wrong
        (first, one), (second, other) = list(seen[column].items())[:2]
        if set(one) & set(other):
            raise ValueError(
                f"column {column!r} is in {first!r} in one file and in {second!r} in another, both of "
                f"{sorted(set(one) & set(other))[0]}; load them apart"
            )

    def name(column: str, result: Result) -> str:
        return f"{column} ({result.benchmark})" if column in split else column

    units = dict.fromkeys(run_columns, "")
    for result in results:
        for column, unit in result.units.items():
            if column not in run_columns:
                units.setdefault(name(column, result), unit)
    rows = [
        {
            **dict.fromkeys(units),
            "file": path,
            "benchmark": result.benchmark,
            **({"incomplete": result.incomplete} if "incomplete" in units else {}),
            **{key: params.get(key) for key in differing},
            **{name(column, result): value for column, value in row.items() if column not in run_columns},
        }
        for path, result, params in zip(files, results, scalars)
        for row in result.rows
    ]
    return Result(LOAD_NAME, {**shared, "files": files, "run_columns": run_columns}, {}, rows, units)


def _run_value(value):
    """A parameter as a row cell: a flag as "true" or "false" (a cell holds
    no bool: CSV would give it back as a string)."""
    return str(value).lower() if isinstance(value, bool) else value


def runs(joined: Result) -> list:
    """[(label, Result)]: a table of load() split back into its runs, in
    file order, each labelled by the values of the run columns that tell
    the runs apart ("send_kind=D recv_kind=D"), or by its file's name where
    none does. Each run's Result holds its own columns and the shared
    parameters with its own values of the differing ones."""
    run_columns = joined.params.get("run_columns", ["file"])
    by_file = {}
    for row in joined.rows:
        by_file.setdefault(row["file"], []).append(row)
    telling = [
        column
        for column in run_columns
        if column != "file" and len({repr(rows[0].get(column)) for rows in by_file.values()}) > 1
    ]
    shared = {key: value for key, value in joined.params.items() if key not in ("files", "run_columns")}
    found = []
    for path, rows in by_file.items():
        first = rows[0]
        label = " ".join(
            f"{column}={first[column]}" if column != "benchmark" else str(first[column]) for column in telling
        ) or os.path.basename(path)
        columns = [
            column
            for column in joined.columns
            if column not in run_columns and any(row[column] is not None for row in rows)
        ]
        params = {
            **shared,
            **{column: first[column] for column in run_columns if column not in ("file", "benchmark", "incomplete")},
        }
        found.append(
            (
                label,
                Result(
                    first["benchmark"],
                    params,
                    {},
                    [{c: row[c] for c in columns} for row in rows],
                    {c: joined.units[c] for c in columns},
                    None,
                    first.get("incomplete"),
                ),
            )
        )
    return found


_TITLE_PARAMS = ("test", "send_kind", "recv_kind", "mem", "comm_type", "fabric", "schedule", "collective", "datatype")


def _row_of_csv(cells: dict, where: str) -> dict:
    """A CSV line's row: its plain columns, and, where the file has rounds,
    the rounds cell from "rounds" (the row's count) and the COLUMN@rK cells."""
    if ROUNDS not in cells:
        return cells
    done = cells[ROUNDS]
    if isinstance(done, bool) or not isinstance(done, int) or done < 1:
        raise ValueError(f"{where}: the rounds column must hold the row's count of rounds, 1 or more, got {done!r}")
    row, rounds = {}, {}
    for key, value in cells.items():
        match = _ROUND_HEADER.match(key)
        if match:
            if int(match["round"]) <= done:
                rounds.setdefault(match["column"], []).append(value)
        elif key != ROUNDS:
            row[key] = value
    row[ROUNDS] = rounds
    return row


def _format_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse_cell(text: str) -> Any:
    """Inverse of _format_cell: empty -> None, digits -> int, float text -> float."""
    if text == "":
        return None
    if _INT_TEXT.match(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


class WriteError(OSError):
    """An OSError while writing a file, naming the file the caller asked
    for (not the temporary one written first): "cannot write 'F': No space
    left on device". Commands turn it into a usage error (status 2)."""

    def __str__(self) -> str:
        return f"cannot write {self.filename!r}: {self.strerror}"


def atomic_write(path, write: Callable, newline: str | None, binary: bool = False) -> None:
    """Write a file so that `path` holds either its old content or the new
    content in full, never a fragment: a crash or an exception while
    serialising a result at the end of a long run must not destroy the
    previous good file.

    The data goes to a temporary file in the same directory (os.replace is
    atomic only within one file system), is flushed and fsynced, then
    replaces `path`. Where the system allows (Linux's O_TMPFILE) that file
    has no name while it is written, and gets one only when whole, just
    before the rename: a process killed while writing leaves nothing behind.
    Elsewhere it is created with O_EXCL. Mode 0o666, so the umask applies, as
    for any file the user writes. binary: `write` gets a byte stream
    (figures), and newline does not apply. An OSError comes out as a
    WriteError naming `path`.
    """
    path = os.fspath(path)
    try:
        _write_and_replace(path, write, newline, binary)
    except OSError as error:
        raise WriteError(error.errno, error.strerror or str(error), path) from error


def _write_and_replace(path: str, write: Callable, newline: str | None, binary: bool) -> None:
    """atomic_write's work: the temporary file, filled, synced and renamed."""
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
    try:
        fd, unnamed = os.open(directory, os.O_WRONLY | os.O_TMPFILE, 0o666), True
    except (AttributeError, OSError):  # no O_TMPFILE here, or not on this file system
        fd, unnamed = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), False
    try:
        f = open(fd, "wb") if binary else open(fd, "w", encoding="utf-8", newline=newline)
    except BaseException:
        os.close(fd)
        if not unnamed:
            os.unlink(tmp)
        raise
    try:
        with f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            if unnamed:
                _name(f.fileno(), tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _name(fd: int, path: str) -> None:
    """Gives the unnamed file open as `fd` the name `path`: linkat through
    /proc/self/fd, following the link (a directory fd is passed so that
    os.link calls linkat, which follows it, and not link, which does not)."""
    descriptors = os.open("/proc/self/fd", os.O_RDONLY)
    try:
        os.link(str(fd), path, src_dir_fd=descriptors, follow_symlinks=True)
    finally:
        os.close(descriptors)


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable; best effort, as not every system allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
