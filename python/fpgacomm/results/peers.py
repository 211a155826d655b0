"""The text the peer suites print, read as Results: OSU Micro-Benchmarks
7.x, nccl-tests, IMB-MPI1 and HPCC FPGA's b_eff (as fpgacomm's own
HPCC-style text prints it). One reader function per format; `read_text`
tells them apart by the lines each format alone prints.

Each reader returns the Result's fields as a dict (results/result.py
builds the Result: this module sits below it).
The Results use fpgacomm's column names and SI units (s, B/s, 1/s), so a
peer's run compares with fpgacomm's column for column: OMB's "Avg
Latency(us)" becomes latency_avg in s, its "Bandwidth (MB/s)" bandwidth in
B/s (MB = 10^6 bytes, as OMB, IMB and nccl-tests's GB = 10^9 all count).
"""

from __future__ import annotations

import re

from ..catalog import BENCHMARKS
from .omb_columns import BY_HEADER, MB, US

#: The formats read here, as messages name them.
FORMATS = ("OSU Micro-Benchmarks 7.x", "nccl-tests", "IMB-MPI1", "HPCC FPGA b_eff")

# Each table's factor is from the SI value to the printed number (omb_columns.py's way).
_GB = 1e-9  # B/s -> GB/s (nccl-tests)

# --------------------------------------------------------------------- OMB

# OMB's column headers -> (column, factor, unit); a header not there is kept
# as a column of its own name, unconverted.
_OMB_COLUMNS = {**BY_HEADER, "Validation": ("validation", None, ""),
                # fpgacomm's text of a run stopped mid-round: the rounds a row has (not the rounds cell)
                "Rounds": ("rounds_done", 1.0, "")}
_OMB_TAIL = re.compile(r"^P(?P<percent>\d+) Tail (?P<what>Lat\(us\)|BW\(MB/s\))$")
_OMB_TITLE = re.compile(r"^# OSU MPI(?P<call>_[A-Za-z_]+)?(?:-\w+)? (?P<title>.+?) v(?P<version>\S+)")
# OMB's titles -> the catalog's benchmark of that title ("Latency Test", "_Put").
_BY_TITLE = {(benchmark.call, benchmark.title.lower()): benchmark.name for benchmark in BENCHMARKS if benchmark.title}
_KIND_LETTERS = re.compile(r"\((?P<kind>[A-Z]+!?)\)")


def read_omb(text: str, source: str = "OMB text") -> dict:
    """The table of an OSU Micro-Benchmarks 7.x program (or of fpgacomm's
    OMB-style text): point-to-point, multi-pair, collectives with or
    without -f, one-sided, with -c and -z columns. The barrier's table has
    no size: its row is size 0."""
    lines = text.splitlines()
    title = next((m for m in map(_OMB_TITLE.match, lines) if m), None)
    if title is None:
        raise ValueError(f"{source}: no '# OSU MPI ... Test vX' title line")
    call = title["call"] or ""
    benchmark = _BY_TITLE.get((call, title["title"].lower()))
    if benchmark is None:  # a test fpgacomm does not have: named after its title
        benchmark = "omb_" + re.sub(r"[^a-z0-9]+", "_", (call + " " + title["title"]).lower()).strip("_")
    params = {"omb_version": title["version"]}
    headers, rows, datatypes = None, [], []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("# Datatype:"):
            datatypes.append(stripped.removeprefix("# Datatype:").strip().rstrip("."))
        elif stripped.startswith("# Window creation:"):
            params["window_creation"] = stripped.partition(":")[2].strip()
        elif stripped.startswith("# Synchronization:"):
            params["sync"] = stripped.partition(":")[2].strip()
        elif stripped.startswith("# Send Buffer on") or stripped.startswith("# Rank 0 Memory on"):
            kinds = _KIND_LETTERS.findall(stripped)
            if len(kinds) == 2:
                params["send_kind"], params["recv_kind"] = kinds
        elif stripped.startswith("# [ pairs:"):
            found = re.search(r"pairs: (\d+)", stripped)
            params["pairs"] = int(found.group(1)) if found else None
        elif stripped.startswith("# Size") or stripped.startswith("# Avg Latency(us)"):
            headers = _omb_headers(stripped)
        elif headers and stripped and not stripped.startswith("#"):
            row = _omb_row(stripped, headers)
            if row is not None:
                rows.append(row)
    if headers is None or not rows:
        raise ValueError(f"{source}: an OSU Micro-Benchmarks title but no table rows (did the program fail?)")
    if len(set(datatypes)) > 1:
        raise ValueError(f"{source}: holds sweeps of several datatypes ({', '.join(datatypes)}, OMB's -T all); "
                         "run one datatype a file")
    if datatypes:
        params["datatype"] = datatypes[0]
    units = {"size": "B", **{column: unit for column, _, unit in headers[1:]}}
    rows = [dict(zip(units, row)) for row in rows]
    return _result(benchmark, params, {"source": source, "tool": "OSU Micro-Benchmarks"}, rows, units)


def _result(benchmark: str, params: dict, env: dict, rows: list, units: dict) -> dict:
    return {"benchmark": benchmark, "params": params, "env": env, "units": units, "rows": rows}


def _omb_headers(line: str) -> list:
    """[(column, factor, unit)] of the header line, the size first."""
    names = re.split(r"\s{2,}", line.lstrip("#").strip())
    if names[0] != "Size":  # the barrier: no size column
        names = ["Size", *names]
    columns = [("size", 1, "B")]
    for name in names[1:]:
        tail = _OMB_TAIL.match(name)
        if tail:
            latency = tail["what"].startswith("Lat")
            columns.append((f"{'latency' if latency else 'bandwidth'}_p{tail['percent']}",
                            US if latency else MB, "s" if latency else "B/s"))
        else:
            columns.append(_OMB_COLUMNS.get(name, (re.sub(r"\W+", "_", name).strip("_").lower(), 1.0, "")))
    return columns


def _omb_row(line: str, headers: list) -> list | None:
    """One table line as values, or None for a line among the rows that is
    not one (a warning)."""
    fields = line.split()
    if len(headers) > 1 and len(fields) == len(headers) - 1 and headers[0][0] == "size":
        fields = ["0", *fields]  # the barrier's line: no size
    if len(fields) != len(headers) or not re.fullmatch(r"\d+", fields[0]):
        return None
    values = []
    for field, (column, factor, _) in zip(fields, headers):
        if factor is None:
            values.append(field.lower())
            continue
        try:
            number = float(field)
        except ValueError:
            return None
        values.append(int(number) if factor == 1 and number.is_integer() else _scaled(number, factor))
    return values


# -------------------------------------------------------------- nccl-tests

_NCCL_VALUES = {"time": ("time", US, "s"), "algbw": ("algbw", _GB, "B/s"), "busbw": ("busbw", _GB, "B/s"),
                "#wrong": ("wrong", 1, ""), "error": ("error", 1.0, "")}


def read_nccl(text: str, source: str = "nccl-tests text") -> dict:
    """The table of an nccl-tests program: per size, its out-of-place time
    (s), algbw and busbw (B/s) and #wrong, and the same in place (columns
    suffixed _in_place). Sizes are nccl-tests's: the whole buffer (-b, -e),
    not OMB's per-rank block for the gathering collectives."""
    lines = text.splitlines()
    test = next((line.split(":", 1)[1].strip() for line in lines if "Collective test starting:" in line), None)
    if test is None:
        raise ValueError(f"{source}: no '# Collective test starting: NAME' line")
    header = next((line.lstrip("#").split() for line in lines
                   if line.startswith("#") and "size" in line.split() and "busbw" in line.split()), None)
    if header is None:
        raise ValueError(f"{source}: no column header naming size and busbw")
    leading = header.index("time")  # size, count, type, redop, root (as the version prints them)
    values = header[leading:]
    half = len(values) // 2
    columns = [(name, 1, "B" if name == "size" else "") for name in header[:leading]]
    columns += [_NCCL_VALUES.get(name, (name, 1.0, "")) for name in values[:half]]
    columns += [(f"{column}_in_place", factor, unit)
                for column, factor, unit in (_NCCL_VALUES.get(name, (name, 1.0, "")) for name in values[half:])]
    rows = []
    for line in lines:
        fields = line.split()
        if line.startswith("#") or len(fields) != len(columns) or not fields[0].isdigit():
            continue
        row = {}
        for field, (column, factor, _) in zip(fields, columns):
            row[column] = _number(field, factor)
        rows.append(row)
    if not rows:
        raise ValueError(f"{source}: an nccl-tests header but no table rows")
    name = "nccl_" + test.removesuffix("_perf")
    params = {"test": test}
    config = next((line for line in lines if line.startswith("# nThread")), "")
    for key in ("nThread", "nGpus", "minBytes", "maxBytes", "warmup iters", "agg iters", "iters", "validation"):
        found = re.search(rf"(?<!warmup )(?<!agg ){key}:? (\d+)", config)
        if found:
            params[key.replace(" ", "_")] = int(found.group(1))
    return _result(name, params, {"source": source, "tool": "nccl-tests"}, rows,
                  {column: unit for column, _, unit in columns})


def _number(field: str, factor):
    """A table field: an int or float scaled by factor, or the text itself
    (a datatype name, "N/A")."""
    try:
        number = float(field)
    except ValueError:
        return None if field == "N/A" else field
    if factor == 1 and number.is_integer():
        return int(number)
    return _scaled(number, factor)


def _scaled(number: float, factor: float) -> float:
    """A printed number back in SI units (factor: SI -> printed). Dividing
    by a whole factor, so that 0.21 us reads as 2.1e-07 s and not as
    2.0999999999999997e-07."""
    return number / factor if factor >= 1 else number * round(1 / factor)


# ------------------------------------------------------------------- IMB

_IMB_COLUMNS = {"#bytes": ("size", 1, "B"), "#repetitions": ("repetitions", 1, ""),
                "t[usec]": ("latency", US, "s"), "t_min[usec]": ("latency_min", US, "s"),
                "t_max[usec]": ("latency_max", US, "s"), "t_avg[usec]": ("latency", US, "s"),
                "Mbytes/sec": ("bandwidth", MB, "B/s"), "Msg/sec": ("message_rate", 1.0, "1/s"),
                "defects": ("defects", 1.0, "")}


def read_imb(text: str, source: str = "IMB-MPI1 text") -> dict:
    """The tables of IMB-MPI1 (PingPong, PingPing, Sendrecv, Exchange,
    Uniband, Biband, the collectives): a row per benchmark, process count
    and size, with columns test and processes. latency is t[usec] (the
    point-to-point tests) or t_avg[usec] (the collectives); bandwidth is
    Mbytes/sec, taken as 10^6 B/s."""
    if "Intel(R) MPI Benchmarks" not in text and "Intel (R) MPI Benchmarks" not in text:
        raise ValueError(f"{source}: no 'Intel(R) MPI Benchmarks' banner")
    test, processes, columns, tables = None, None, None, []
    for line in text.splitlines():
        stripped = line.strip()
        found = re.match(r"# Benchmarking (\S+)", stripped)
        if found:
            test, columns = found.group(1), None
            continue
        found = re.match(r"# #processes = (\d+)", stripped)
        if found:
            processes = int(found.group(1))
            continue
        if stripped.startswith("#bytes"):
            columns = [_IMB_COLUMNS.get(name, (name, 1.0, "")) for name in stripped.split()]
            tables.append((test, processes, columns, []))
            continue
        fields = stripped.split()
        if columns and fields and fields[0].isdigit() and len(fields) >= len(columns):
            row = {"test": test, "processes": processes}
            for field, (column, factor, _) in zip(fields, columns):
                row[column] = _number(field, factor)
            tables[-1][3].append(row)
    tables = [table for table in tables if table[3]]
    if not tables:
        raise ValueError(f"{source}: an IMB banner but no '#bytes' table with rows")
    units = {"test": "", "processes": ""}
    for _, _, columns, _ in tables:
        units.update({column: unit for column, _, unit in columns})
    rows = [{**dict.fromkeys(units), **row} for _, _, _, table_rows in tables for row in table_rows]
    tests = list(dict.fromkeys(row["test"] for row in rows))
    name = f"imb_{tests[0].lower()}" if len(tests) == 1 else "imb_mpi1"
    return _result(name, {"tests": tests}, {"source": source, "tool": "IMB-MPI1"}, rows, units)


# ----------------------------------------------------------------- b_eff

def read_beff(text: str, source: str = "b_eff text") -> dict:
    """HPCC FPGA's b_eff table as fpgacomm prints it (and HPCC FPGA's
    b_eff much alike): per ring pattern a header "MSize looplength time
    B/s", a row per message size, and the line "b_eff = X B/s"."""
    pattern, rows, b_eff = "ring", [], None
    header = None
    for line in text.splitlines():
        stripped = line.strip()
        found = re.match(r"# ring (\S+?):", stripped)
        if found:
            pattern = found.group(1)
        elif stripped.startswith("MSize"):
            header = stripped.split()
        elif stripped.startswith("b_eff"):
            b_eff = float(stripped.split("=", 1)[1].split()[0])
        elif header and stripped and stripped.split()[0].isdigit():
            fields = stripped.split()
            rows.append({"pattern": pattern, "size": int(fields[0]), "loop_length": int(fields[1]),
                         "time": float(fields[2]), "bandwidth": float(fields[3])})
    if not rows:
        raise ValueError(f"{source}: no 'MSize looplength' table with rows")
    params = {} if b_eff is None else {"b_eff": b_eff}
    return _result("beff", params, {"source": source, "tool": "HPCC FPGA b_eff"}, rows,
                  {"pattern": "", "size": "B", "loop_length": "", "time": "s", "bandwidth": "B/s"})


# ------------------------------------------------------------- any of them

def read_text(path) -> dict:
    """A peer's text output file as a Result's dict, its format told from its
    lines; a ValueError naming the formats known where none fits."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError as error:
        raise ValueError(f"{path}: cannot read it: {error.strerror}") from None
    source = str(path)
    if re.search(r"^# OSU MPI", text, re.MULTILINE):
        return read_omb(text, source)
    if "Collective test starting:" in text:
        return read_nccl(text, source)
    if "MPI Benchmarks" in text and "#bytes" in text:
        return read_imb(text, source)
    if re.search(r"^\s*MSize\s+looplength", text, re.MULTILINE):
        return read_beff(text, source)
    raise ValueError(f"{source}: not a format fpgacomm reads; it reads Result JSON and CSV files and the text "
                     f"output of {', '.join(FORMATS)}")
