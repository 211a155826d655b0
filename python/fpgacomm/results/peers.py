"""The text the peer suites print, read as Results: OSU Micro-Benchmarks
5.x to 7.x, nccl-tests (every 2.x) and rccl-tests, IMB (MPI-1, EXT, NBC,
as Intel MPI Benchmarks 4.x and 2017 on print them, -multi included) and
HPCC FPGA's b_eff. One reader function per format; `read_text` tells them
apart by the lines each format alone prints. The readers take the text as
users post it: lines tagged by mpirun (`[1,0]<stdout>:`, with or without a
time stamp before), NCCL INFO and warning lines among the rows, several
tables in one file.

Each reader returns the Result's fields as a dict (results/result.py
builds the Result: this module sits below it).
The Results use fpgacomm's column names and SI units (s, B/s, 1/s), so a
peer's run compares with fpgacomm's column for column: OMB's "Avg
Latency(us)" becomes latency_avg in s, its "Bandwidth (MB/s)" bandwidth in
B/s (MB = 10^6 bytes, as OMB, IMB since 2017 and nccl-tests's GB = 10^9
count; IMB 4.1 and earlier count a MB as 2^20 bytes). A file of several
tables gives one series per table, told apart by the columns of
results/series.py (test, processes, groups, group, mode, kinds).

params["resolution"] holds, per column, the step of the last digit the
tool printed (in SI units): a value printed as 0 lies below half of it
(nccl-tests prints busbw with two decimals of GB/s, so "0.00" is below
5 MB/s), and is kept as 0, never dropped.
"""

from __future__ import annotations

import math
import re

from ..catalog import BENCHMARKS
from ..runtime import files
from ..runtime.files import ResultError
from .omb_columns import BY_HEADER, MB, US

#: The formats read here, as messages name them.
FORMATS = (
    "OSU Micro-Benchmarks 5.x to 7.x",
    "nccl-tests and rccl-tests",
    "Intel MPI Benchmarks (IMB)",
    "HPCC FPGA b_eff",
)

# The tools as a Result's env["tool"] names them.
NCCL_TESTS, IMB = "nccl-tests", "Intel MPI Benchmarks"
# Each table's factor is from the SI value to the printed number (omb_columns.py's way).
_GB = 1e-9  # B/s -> GB/s (nccl-tests)

# mpirun's --tag-output prefix ([job,rank]<stdout>:), with the time stamp
# --timestamp-output puts before it. It may stand mid-line where a line
# lost its newline: every prefix starts a line of its own.
_TAG = re.compile(r"(?:[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4})?\[\d+,\d+\]<std(?:out|err|diag)>:")
# A command line posted with the output: its process count (mpirun -np N, srun -n N).
_LAUNCH = re.compile(r"\b(?:mpirun|mpiexec|srun|jsrun|aprun)\b.*?\s(?:-np|-n|--np|--ntasks)[ =](\d+)")


def _lines(text: str) -> list:
    """The text's lines without mpirun's tags."""
    return _TAG.sub("\n", text).splitlines()


def _result(benchmark: str, params: dict, env: dict, rows: list, units: dict) -> dict:
    return {"benchmark": benchmark, "params": params, "env": env, "units": units, "rows": rows}


def _scaled(number: float, factor: float) -> float:
    """A printed number back in SI units (factor: SI -> printed). Dividing
    by a whole factor, so that 0.21 us reads as 2.1e-07 s and not as
    2.0999999999999997e-07."""
    return number / factor if factor >= 1 else number * round(1 / factor)


def _number(field: str, factor):
    """A table field: an int (factor 1, whole) or a float scaled by factor,
    None for "N/A" or "-", or the text itself (a datatype's name)."""
    if field in ("N/A", "-", "n/a"):
        return None
    try:
        number = float(field)
    except ValueError:
        return field
    if factor == 1 and number.is_integer() and re.fullmatch(r"[+-]?\d+", field):
        return int(field)
    return _scaled(number, factor)


def _step(field: str, factor) -> float | None:
    """The SI step of the last printed digit of a number field ("0.00" GB/s:
    1e7 B/s), None for a field that is no decimal number."""
    found = re.fullmatch(r"[+-]?\d+(?:\.(\d*))?", field)
    if not found or not isinstance(factor, (int, float)) or factor == 0:
        return None
    return _scaled(10.0 ** -len(found.group(1) or ""), factor)


def _resolutions(tables: list) -> dict:
    """{column: coarsest printed step} over every number field read, for
    params["resolution"]; tables: [(columns [(name, factor, unit)], [fields])]."""
    steps = {}
    for columns, fields in tables:
        for field, (column, factor, unit) in zip(fields, columns):
            step = _step(field, factor) if unit else None
            if step is not None:
                steps[column] = max(step, steps.get(column, 0.0))
    return steps


def _joined(tables: list) -> tuple:
    """(rows, units) of tables [(units, rows)] as one table: every row with
    every column, None where its table has none."""
    units = {}
    for table_units, _ in tables:
        units.update(table_units)
    rows = [{**dict.fromkeys(units), **row} for _, table_rows in tables for row in table_rows]
    return rows, units


# --------------------------------------------------------------------- OMB

# OMB's column headers -> (column, factor, unit); a header not there is kept
# as a column of its own name, unconverted.
_OMB_COLUMNS = {
    **BY_HEADER,
    "Validation": ("validation", None, ""),
    # fpgacomm's text of a run stopped mid-round: the rounds a row has (not the rounds cell)
    "Rounds": ("rounds_done", 1.0, ""),
}
_OMB_TAIL = re.compile(r"^P(?P<percent>\d+) Tail (?P<what>Lat\(us\)|BW\(MB/s\))$")
_OMB_TITLE = re.compile(r"^# OSU MPI(?P<call>_[A-Za-z_]+)?(?:-\w+)? (?P<title>.+?) v(?P<version>\S+)")
# OMB's titles -> the catalog's benchmark of that title ("Latency Test", "_Put").
_BY_TITLE = {(benchmark.call, benchmark.title.lower()): benchmark.name for benchmark in BENCHMARKS if benchmark.title}
_KIND_LETTERS = re.compile(r"\((?P<kind>[A-Z]+!?)\)")
_NOTE = "note"


def read_omb(text: str, source: str = "OMB text") -> dict:
    """The tables of OSU Micro-Benchmarks 5.x to 7.x programs (or of
    fpgacomm's OMB-style text): point-to-point, multi-pair, collectives
    blocking and non-blocking, with or without -f, one-sided, with -c and
    -z columns. The barrier's table has no size: its row is size 0. A row
    with words after its numbers keeps them in the column "note".

    A file of one table reads as that program's Result. A file of several
    (a job's log of several programs, each under its own title and
    header) gives one series per table: the column test names each
    table's benchmark, processes its mpirun -np where the log shows the
    command, send_kind and recv_kind its buffers."""
    lines = _lines(text)
    tables, processes = [], None
    for line in lines:
        launch = _LAUNCH.search(line)
        if launch:
            processes = int(launch.group(1))
        title = _OMB_TITLE.match(line.strip())
        if title:
            tables.append(_OmbTable(title, processes, source))
            processes = None
        elif tables:
            tables[-1].take(line.strip())
    if not tables:
        raise ResultError(source, "no '# OSU MPI ... Test vX' title line")
    tables = [table for table in tables if table.rows]
    if not tables:
        raise ResultError(source, "an OSU Micro-Benchmarks title but no table rows (did the program fail?)")
    if len(tables) == 1:
        table = tables[0]
        rows, units = table.table
        return _result(
            table.benchmark,
            {**table.params, "resolution": _resolutions(table.fields)},
            {"source": source, "tool": "OSU Micro-Benchmarks"},
            rows,
            units,
        )
    return _omb_series(tables, source)


def _omb_series(tables: list, source: str) -> dict:
    """Several OMB tables as one Result, a series per table."""
    kept = ("send_kind", "recv_kind")
    series = []
    for table in tables:
        identity = {
            "test": table.benchmark,
            "processes": table.processes,
            **{key: table.params.get(key) for key in kept},
        }
        rows, units = table.table
        series.append(({**dict.fromkeys(identity, ""), **units}, [{**identity, **row} for row in rows]))
    rows, units = _joined(series)
    benchmarks = list(dict.fromkeys(table.benchmark for table in tables))
    shared = {
        key: value
        for key, value in tables[0].params.items()
        if key not in kept and all(table.params.get(key) == value for table in tables)
    }
    resolution = _resolutions([fields for table in tables for fields in table.fields])
    name = benchmarks[0] if len(benchmarks) == 1 else "omb"
    return _result(
        name,
        {**shared, "tests": benchmarks, "resolution": resolution},
        {"source": source, "tool": "OSU Micro-Benchmarks"},
        rows,
        units,
    )


class _OmbTable:
    """One OMB table as it is read: its title's benchmark, its settings
    lines, its header and rows."""

    def __init__(self, title, processes: int | None, source: str):
        call = title["call"] or ""
        benchmark = _BY_TITLE.get((call, title["title"].lower()))
        if benchmark is None:  # a test fpgacomm does not have: named after its title
            benchmark = "omb_" + re.sub(r"[^a-z0-9]+", "_", (call + " " + title["title"]).lower()).strip("_")
        self.benchmark, self.processes, self.source = benchmark, processes, source
        self.params = {"omb_version": title["version"]}
        self.headers, self.sized, self.rows, self.notes, self.fields = None, True, [], [], []
        self.datatypes = []

    def take(self, stripped: str) -> None:
        """One line after the title: a setting, the header or a row."""
        if stripped.startswith("# Datatype:"):
            datatype = stripped.removeprefix("# Datatype:").strip().rstrip(".")
            if self.datatypes and datatype not in self.datatypes:
                raise ResultError(
                    self.source,
                    f"holds sweeps of several datatypes ({self.datatypes[0]}, "
                    f"{datatype}: OMB's -T all); run one datatype a file",
                )
            self.datatypes.append(datatype)
            self.params["datatype"] = datatype
        elif stripped.startswith("# Window creation:"):
            self.params["window_creation"] = stripped.partition(":")[2].strip()
        elif stripped.startswith("# Synchronization:"):
            self.params["sync"] = stripped.partition(":")[2].strip()
        elif stripped.startswith("# Send Buffer on") or stripped.startswith("# Rank 0 Memory on"):
            kinds = _KIND_LETTERS.findall(stripped)
            if len(kinds) == 2:
                self.params["send_kind"], self.params["recv_kind"] = kinds
        elif stripped.startswith("# [ pairs:"):
            found = re.search(r"pairs: (\d+)", stripped)
            self.params["pairs"] = int(found.group(1)) if found else None
        elif stripped.startswith("# Size") or stripped.startswith("# Avg Latency(us)"):
            self.headers, self.sized = _omb_headers(stripped)
        elif self.headers and stripped and not stripped.startswith("#"):
            self._row(stripped)

    def _row(self, line: str) -> None:
        """A table line as a row, or nothing for a line among the rows that
        is not one (a warning)."""
        fields = line.split()
        headers = self.headers
        if not self.sized:
            fields = ["0", *fields]  # the barrier's line: no size
        if not fields or not re.fullmatch(r"\d+", fields[0]):
            return
        note = None
        if len(fields) > len(headers):  # words after the numbers: a note OMB or the user added
            note = " ".join(fields[len(headers) :])
            fields = fields[: len(headers)]
        values = []
        for field, (_, factor, _) in zip(fields, headers):
            if factor is None:
                values.append(field.lower())
                continue
            value = _number(field, factor)
            if isinstance(value, str):  # a word among the numbers: no row of this table
                return
            values.append(value)
        # A row one column short of its header (a column OMB left empty): the
        # missing cell is None, never a shift of every value by one.
        values += [None] * (len(headers) - len(values))
        self.rows.append(dict(zip([column for column, _, _ in headers], values)))
        self.notes.append(note)
        self.fields.append((headers, fields))

    @property
    def table(self) -> tuple:
        """(rows, units): the rows read, with the column note where any row has one."""
        units = {column: unit for column, _, unit in self.headers or []}
        if not any(note is not None for note in self.notes):
            return self.rows, units
        return [{**row, _NOTE: note} for row, note in zip(self.rows, self.notes)], {**units, _NOTE: ""}


def _omb_headers(line: str) -> tuple:
    """([(column, factor, unit)] of the header line, the size first; whether
    the line names a size column (the barrier's does not))."""
    names = re.split(r"\s{2,}", line.lstrip("#").strip())
    sized = names[0] == "Size"
    if not sized:
        names = ["Size", *names]
    columns = [("size", 1, "B")]
    for name in names[1:]:
        tail = _OMB_TAIL.match(name)
        if tail:
            latency = tail["what"].startswith("Lat")
            columns.append(
                (
                    f"{'latency' if latency else 'bandwidth'}_p{tail['percent']}",
                    US if latency else MB,
                    "s" if latency else "B/s",
                )
            )
        else:
            columns.append(_OMB_COLUMNS.get(name, (re.sub(r"\W+", "_", name).strip("_").lower() or "column", 1.0, "")))
    return columns, sized


# -------------------------------------------------------------- nccl-tests

_NCCL_VALUES = {
    "time": ("time", US, "s"),
    "algbw": ("algbw", _GB, "B/s"),
    "busbw": ("busbw", _GB, "B/s"),
    "#wrong": ("wrong", 1, ""),
    "error": ("error", 1.0, ""),
}
_NCCL_LEADING = {
    "size": ("size", 1, "B"),
    "count": ("count", 1, ""),
    "type": ("type", 1, ""),
    "redop": ("redop", 1, ""),
    "root": ("root", 1, ""),
}
_NCCL_START = re.compile(r"Collective test starting: (\S+)")
_NCCL_PROGRAM = re.compile(r"\b([a-z_]+)_perf(?:_mpi)?\b")


def _nccl_header(line: str) -> list | None:
    """The words of an nccl-tests column header ("# size count type redop
    root time algbw busbw #wrong ..."), or None for any other line."""
    words = line.lstrip("#").split()
    if line.lstrip().startswith("#") and words[:2] == ["size", "count"] and "busbw" in words and "time" in words:
        return words
    return None


def read_nccl(text: str, source: str = "nccl-tests text") -> dict:
    """The tables of nccl-tests (every 2.x: with or without the '#
    Collective test starting' line, #wrong or error columns, redop and
    root as the version prints them) and of rccl-tests: per size, its
    out-of-place time (s), algbw and busbw (B/s) and #wrong (or error), and
    the same in place (columns suffixed _in_place). Sizes are nccl-tests's:
    the whole buffer (-b, -e), not OMB's per-rank block for the gathering
    collectives. The column test names the collective (from the start line
    or the program's name where the log shows it); a log of several tests
    gives a series each."""
    lines = _lines(text)
    test, tables, config = None, [], ""
    for line in lines:
        started = _NCCL_START.search(line) or (None if line.lstrip().startswith("#") else _NCCL_PROGRAM.search(line))
        if started:
            test = started.group(1).removesuffix("_perf").removesuffix("_perf_mpi")
            continue
        if line.startswith("# nThread") and not config:
            config = line
        words = _nccl_header(line)
        if words:
            tables.append((test, _nccl_columns(words), []))
            continue
        fields = line.split()
        if tables and fields and not line.lstrip().startswith("#") and fields[0].isdigit():
            row = _nccl_row(fields, tables[-1][1])
            if row is not None:
                tables[-1][2].append((row, fields))
    tables = [table for table in tables if table[2]]
    if not tables:
        raise ResultError(
            source,
            "an nccl-tests text without a column header naming size, count, time and busbw, "
            "or without rows under it",
        )
    tests = list(dict.fromkeys(test for test, _, _ in tables))
    params = {"tests" if len(tests) > 1 else "test": tests if len(tests) > 1 else tests[0]}
    for key in ("nThread", "nGpus", "minBytes", "maxBytes", "warmup iters", "agg iters", "iters", "validation"):
        found = re.search(rf"(?<!warmup )(?<!agg ){key}:? (\d+)", config)
        if found:
            params[key.replace(" ", "_")] = int(found.group(1))
    series = [
        ({"test": "", **{column: unit for column, _, unit in columns}}, [{"test": test, **row} for row, _ in rows])
        for test, columns, rows in tables
    ]
    rows, units = _joined(series)
    params["resolution"] = _resolutions(
        [(_aligned(columns, fields), fields) for _, columns, table_rows in tables for _, fields in table_rows]
    )
    name = f"nccl_{tests[0]}" if len(tests) == 1 and tests[0] else "nccl_tests"
    return _result(name, params, {"source": source, "tool": NCCL_TESTS}, rows, units)


def _nccl_columns(words: list) -> list:
    """[(column, factor, unit)] of a header's words: the leading ones (size,
    count, type, redop, root, as the version prints them), then the
    measured ones out of place and again in place."""
    leading = words.index("time")
    values = words[leading:]
    half = len(values) // 2
    columns = [_NCCL_LEADING.get(name, (name, 1, "")) for name in words[:leading]]
    columns += [_NCCL_VALUES.get(name, (name, 1.0, "")) for name in values[:half]]
    columns += [
        (f"{column}_in_place", factor, unit)
        for column, factor, unit in (_NCCL_VALUES.get(name, (name, 1.0, "")) for name in values[half:])
    ]
    return columns


def _aligned(columns: list, fields: list) -> list:
    """The columns that `fields` (a row as read) stand under: a row without
    its redop (blank cell) skips that column."""
    if len(fields) == len(columns) - 1:
        return [column for column in columns if column[0] != "redop"]
    return columns


def _nccl_row(fields: list, columns: list) -> dict | None:
    """One table line as a row: the header's columns, None in a blank redop
    cell (the version printed none for this collective); None for a line
    that is no row of this header."""
    names = [column for column, _, _ in columns]
    if len(fields) == len(columns) - 1 and "redop" in names:
        fields = [*fields[: names.index("redop")], None, *fields[names.index("redop") :]]
    if len(fields) != len(columns):
        return None
    row = {}
    for field, (column, factor, _) in zip(fields, columns):
        value = None if field is None else _number(field, factor)
        if isinstance(value, str) and column not in ("type", "redop"):
            return None
        row[column] = value
    return row


# ------------------------------------------------------------------- IMB

# IMB's headers -> (column, unit, factor or None for Mbytes/sec, whose MB
# depends on the version).
_IMB_COLUMNS = {
    "#bytes": ("size", 1, "B"),
    "#repetitions": ("repetitions", 1, ""),
    "Group": ("group", 1, ""),
    "t[usec]": ("latency", US, "s"),
    "t_min[usec]": ("latency_min", US, "s"),
    "t_max[usec]": ("latency_max", US, "s"),
    "t_avg[usec]": ("latency", US, "s"),
    "Mbytes/sec": ("bandwidth", None, "B/s"),
    "Msg/sec": ("message_rate", 1.0, "1/s"),
    "defects": ("defects", 1.0, ""),
    # IMB-NBC: as OMB's non-blocking collectives (omb_columns.NONBLOCKING)
    "t_ovrl[usec]": ("overall", US, "s"),
    "t_pure[usec]": ("pure_comm", US, "s"),
    "t_CPU[usec]": ("compute", US, "s"),
    "overlap[%]": ("overlap", 100.0, "fraction"),
}
_IMB_BANNER = re.compile(r"(?:Intel ?\(R\) |Intel )?MPI Benchmarks (?P<version>\d+(?:\.\d+)*(?: Update \d+)?)")
# The columns of a table's series; the values of a table not yet told.
_IMB_IDENTITY = dict.fromkeys(("test", "processes", "groups", "group", "mode"))


def imb_megabyte(version: str | None, pallas: bool = False) -> int:
    """Bytes in IMB's "Mbytes/sec" MB: 2^20 up to IMB 4.1 and in its
    predecessor, the Pallas MPI Benchmarks; 10^6 from IMB 2017 on (the
    year-numbered versions) and where no version is told."""
    if version is None:
        return 2**20 if pallas else 10**6
    major, minor = (int(part) for part in re.match(r"(\d+)(?:\.(\d+))?", version).groups("0"))
    return 2**20 if (major, minor) <= (4, 1) else 10**6


def read_imb(text: str, source: str = "IMB text") -> dict:
    """The tables of Intel MPI Benchmarks (IMB-MPI1's PingPong, PingPing,
    Sendrecv, Exchange, Uniband, Biband and the collectives; IMB-EXT;
    IMB-NBC): a row per table, group and size, with the columns test,
    processes, groups (-multi's number of groups, None without), group (the
    group a -multi 1 row is of) and mode (IMB-EXT's aggregate or
    non-aggregate), which keep the tables apart as series. latency is
    t[usec] (the point-to-point tests) or t_avg[usec] (the collectives);
    bandwidth is Mbytes/sec in the MB of the version (imb_megabyte)."""
    lines = _lines(text)
    banner = next((found for found in map(_IMB_BANNER.search, lines) if found), None)
    version = banner["version"] if banner else None
    megabyte = imb_megabyte(version, pallas=re.search(r"\bPallas|\bPMB-MPI1", text) is not None)
    identity, columns, tables = dict(_IMB_IDENTITY), None, []
    for line in lines:
        stripped = line.strip()
        found = re.match(r"# Benchmarking (?:Multi-)?(\S+)", stripped)
        if found:  # -multi's tables are "Multi-PingPong": the groups column says so
            identity = {**_IMB_IDENTITY, "test": found.group(1)}
            columns = None
            continue
        found = re.match(r"# \(?\s*#processes = (\d+)", stripped)
        if found:
            identity["processes"] = int(found.group(1))
            continue
        found = re.match(r"# \( (\d+) groups of (\d+) processes each running simultaneous", stripped)
        if found:
            identity["groups"], identity["processes"] = int(found.group(1)), int(found.group(2))
            continue
        found = re.match(r"#\s*MODE: (\S+)", stripped)
        if found:
            identity["mode"] = found.group(1).lower()
            continue
        words = stripped.split()
        if "#bytes" in words:
            columns = [_IMB_COLUMNS.get(name, (name, 1.0, "")) for name in words]
            columns = [(column, 1 / megabyte if factor is None else factor, unit) for column, factor, unit in columns]
            tables.append(
                ({**dict.fromkeys(_IMB_IDENTITY, ""), **{column: unit for column, _, unit in columns}}, [], columns)
            )
            continue
        if columns and words and words[0].isdigit() and len(words) >= len(columns):
            row = {**identity, **{column: _number(field, factor) for field, (column, factor, _) in zip(words, columns)}}
            if not any(isinstance(row[column], str) for column, _, unit in columns if unit):
                tables[-1][1].append((row, words))
    tables = [table for table in tables if table[1]]
    if not tables:
        raise ResultError(source, "an IMB text but no '#bytes' table with rows")
    rows, units = _joined([(table_units, [row for row, _ in table_rows]) for table_units, table_rows, _ in tables])
    tests = list(dict.fromkeys(row["test"] for row in rows))
    name = f"imb_{str(tests[0]).lower()}" if len(tests) == 1 and tests[0] else "imb"
    params = {
        "tests": tests,
        "imb_version": version,
        "megabyte": megabyte,
        "resolution": _resolutions([(columns, words) for _, table_rows, columns in tables for _, words in table_rows]),
    }
    return _result(name, params, {"source": source, "tool": IMB}, rows, units)


# ----------------------------------------------------------------- b_eff

_BEFF_UNITS = {"pattern": "", "size": "B", "loop_length": "", "time": "s", "bandwidth": "B/s"}


def read_beff(text: str, source: str = "b_eff text") -> dict:
    """HPCC FPGA's b_eff table (and fpgacomm's HPCC-style text, much
    alike): per ring pattern a header "MSize looplength time B/s" (HPCC
    FPGA's versions name the time column time, time [s] or transfer), a
    row per message size, and the line "b_eff = X B/s"."""
    pattern, rows, b_eff, header = "ring", [], None, False
    for line in _lines(text):
        stripped = line.strip()
        found = re.match(r"# ring (\S+?):", stripped)
        if found:
            pattern = found.group(1)
        elif stripped.startswith("MSize"):
            header = True
        elif stripped.startswith("b_eff"):
            found = re.search(r"=\s*(\S+)", stripped)
            value = _number(found.group(1), 1.0) if found else None
            b_eff = value if isinstance(value, (int, float)) and math.isfinite(value) else b_eff
        elif header and stripped and stripped.split()[0].isdigit():
            values = [_number(field, 1.0) for field in stripped.split()[:4]]
            if len(values) == 4 and all(isinstance(value, (int, float)) and math.isfinite(value) for value in values):
                size, loop_length, time, bandwidth = values
                rows.append(
                    {
                        "pattern": pattern,
                        "size": int(size),
                        "loop_length": int(loop_length),
                        "time": time,
                        "bandwidth": bandwidth,
                    }
                )
    if not rows:
        raise ResultError(source, "no 'MSize looplength' table with rows")
    params = {} if b_eff is None else {"b_eff": b_eff}
    return _result("beff", params, {"source": source, "tool": "HPCC FPGA b_eff"}, rows, dict(_BEFF_UNITS))


# ------------------------------------------------------------- any of them


def read_text(path, text: str | None = None) -> dict:
    """A peer's text output file (read through runtime/files.py, or `text`
    as read from it) as a Result's dict, its format told from its lines; a
    ResultError naming the formats known where none fits."""
    source = str(path)
    text = files.read_text(path) if text is None else text
    untagged = "\n".join(_lines(text))
    if re.search(r"^\s*# OSU MPI", untagged, re.MULTILINE):
        return read_omb(text, source)
    if "Collective test starting:" in untagged or any(map(_nccl_header, untagged.splitlines())):
        return read_nccl(text, source)
    if re.search(r"#bytes\s+#repetitions", untagged):
        return read_imb(text, source)
    if re.search(r"^\s*MSize\s+looplength", untagged, re.MULTILINE):
        return read_beff(text, source)
    raise ResultError(
        source,
        f"not a format fpgacomm reads; it reads Result JSON and CSV files and the text "
        f"output of {', '.join(FORMATS)}",
    )
