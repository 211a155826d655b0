"""Text reports of a Result, kept apart from the measuring.

The OSU point-to-point formats reproduce OMB 7.x's text byte for byte where
OMB has the same column (header strings, "%-10d" sizes, "%20.2f" values,
microseconds, MB = 10^6 bytes), so parsers written for OMB output read ours.
A formatter takes (result, full) and returns the text without a trailing
newline; FORMATTERS maps each benchmark name to its formatter, by the text
format and OMB title the benchmark's entry in catalog.py names, so a new
benchmark with an existing format touches nothing here.
"""

from __future__ import annotations

from typing import Callable

from ..catalog import BENCHMARKS, Benchmark
from ..params import HOST_KINDS
from ..runtime.environment import topology
from .result import Result
from .units import human_bandwidth, human_bytes, human_rate, human_seconds

# ------------------------------------------------------------ placement


def scale_out_lines(result: Result) -> list:
    """A header line saying that the run crossed hosts ("# Scale-out: 4
    ranks on 2 hosts, 2 per host"); none for a run on one host, whose text
    stays OMB's, line for line."""
    where = topology(result.env)
    if where.get("scale") != "scale-out":
        return []
    counts = sorted(result.env["ranks_per_node"].values())
    per_host = str(counts[0]) if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
    return [f"# Scale-out: {sum(counts)} ranks on {where['nodes']} hosts, {per_host} per host"]


# ------------------------------------------------------------ OSU tables

_FIELD_WIDTH = 20  # OMB's FIELD_WIDTH
_SIZE_WIDTH = 10

# OMB's names for where a buffer lives, extended with OMB-FPGA's kinds.
KIND_NAMES = {
    "H": "HOST (H)",
    "H!": "PINNED HOST (H!)",
    "D": "DEVICE (D)",
    "B": "HBM (B)",
    "P": "PLRAM (P)",
}

_US = 1e6       # s -> us
_MB = 1e-6      # B/s -> MB/s (MB = 10^6 bytes)

# (header, row key, factor from the SI value to the printed number)
_LATENCY_MAIN = [("Avg Latency(us)", "latency_avg", _US)]
_LATENCY_FULL = [
    ("Min Latency(us)", "latency_min", _US),
    ("Max Latency(us)", "latency_max", _US),
    ("Stdev(us)", "latency_stdev", _US),
    ("P50 Tail Lat(us)", "latency_p50", _US),
    ("P90 Tail Lat(us)", "latency_p90", _US),
    ("P99 Tail Lat(us)", "latency_p99", _US),
]
_BANDWIDTH_MAIN = [("Bandwidth (MB/s)", "bandwidth", _MB)]
_MBW_MR_MAIN = [("MB/s", "bandwidth", _MB), ("Messages/s", "message_rate", 1.0)]
_BANDWIDTH_FULL = [
    ("Min BW(MB/s)", "bandwidth_min", _MB),
    ("Max BW(MB/s)", "bandwidth_max", _MB),
    ("Stdev(MB/s)", "bandwidth_stdev", _MB),
    ("P50 Tail BW(MB/s)", "bandwidth_p50", _MB),
    ("P90 Tail BW(MB/s)", "bandwidth_p90", _MB),
    ("P99 Tail BW(MB/s)", "bandwidth_p99", _MB),
]


def _param(result: Result, name: str):
    try:
        return result.params[name]
    except KeyError:
        raise ValueError(f"{result.benchmark}: params lack {name!r}, needed for the "
                         f"OSU text header") from None


def _buffer_kinds(result: Result) -> tuple:
    kinds = (_param(result, "send_kind"), _param(result, "recv_kind"))
    for kind in kinds:
        if kind not in KIND_NAMES:
            raise ValueError(f"{result.benchmark}: unknown buffer kind {kind!r}; "
                             f"kinds are {list(KIND_NAMES)}")
    return kinds


def _value_cell(value, factor: float) -> str:
    # A missing statistic prints as one token so column-splitting parsers
    # still find the following columns.
    if value is None:
        return f"{'N/A':>{_FIELD_WIDTH}}"
    return f"{value * factor:{_FIELD_WIDTH}.2f}"


def _validation_cell(value) -> str:
    text = {"pass": "Pass", "fail": "Fail"}.get(str(value).lower(), "N/A")
    return f"{text:>{_FIELD_WIDTH}}"


def _osu_table(result: Result, full: bool, title: str, main: list, extra: list,
               preamble: list = (), operation: str = "") -> str:
    """OMB's header, then one line per size.

    Column order: the measured values, then Validation (where OMB puts it),
    then the full statistics, which OMB lacks except for its tail-latency
    columns, which it also prints after Validation. Parsers that read OMB's
    columns by position therefore still find them.
    """
    send, recv = _buffer_kinds(result)
    on_device = send not in HOST_KINDS or recv not in HOST_KINDS
    validate = bool(result.params.get("validate", False))
    version = result.env.get("fpgacomm_version", "unknown")

    api = "-SYCL" if result.params.get("device_api") == "sycl" else "-OpenCL"
    lines = [f"# OSU MPI{operation}{api if on_device else ''} {title} v{version} (fpgacomm)"]
    if on_device:
        lines.append(f"# Send Buffer on {KIND_NAMES[send]} "
                     f"and Receive Buffer on {KIND_NAMES[recv]}")
    lines.extend(scale_out_lines(result))
    lines.extend(preamble)
    lines.append(f"# Datatype: {result.params.get('datatype', 'MPI_CHAR')}.")

    extra = list(extra) if full else []
    needed = ["size"] + [key for _, key, _ in main + extra] + (["validation"] if validate else [])
    missing = [key for key in needed if key not in result.columns]
    if missing and result.rows:
        raise ValueError(f"{result.benchmark}: rows lack column(s) {missing} needed "
                         f"for the OSU text")

    headers = [header for header, _, _ in main]
    if validate:
        headers.append("Validation")
    headers += [header for header, _, _ in extra]
    lines.append(f"{'# Size':<{_SIZE_WIDTH}}" + "".join(f"{h:>{_FIELD_WIDTH}}" for h in headers))

    for row in result.rows:
        cells = [_value_cell(row[key], factor) for _, key, factor in main]
        if validate:
            cells.append(_validation_cell(row["validation"]))
        cells += [_value_cell(row[key], factor) for _, key, factor in extra]
        lines.append(f"{row['size']:<{_SIZE_WIDTH}d}" + "".join(cells))
    return "\n".join(lines)


def _pt2pt_formatter(title: str, quantity: str) -> Callable[[Result, bool], str]:
    main, extra = (_LATENCY_MAIN, _LATENCY_FULL) if quantity == "latency" else (_BANDWIDTH_MAIN, _BANDWIDTH_FULL)

    def format_pt2pt(result: Result, full: bool = False) -> str:
        return _osu_table(result, full, title, main, extra)
    return format_pt2pt


def _mbw_mr_formatter(title: str) -> Callable[[Result, bool], str]:
    def format_mbw_mr(result: Result, full: bool = False) -> str:
        pairs_line = (f"# [ pairs: {_param(result, 'pairs')} ] "
                      f"[ window size: {_param(result, 'window')} ]")
        return _osu_table(result, full, title, _MBW_MR_MAIN, _BANDWIDTH_FULL, preamble=[pairs_line])
    return format_mbw_mr


def format_beff(result: Result, full: bool = False) -> str:
    """HPCC FPGA's b_eff table: MSize, looplength, the best time
    and the aggregated bandwidth per size, a table per ring pattern, then
    the b_eff line. With a model, its bandwidth stands beside each row."""
    params = result.params
    where = (f"simulated {params['fabric']}, {params['ranks']} FPGAs" if "fabric" in params
             else f"{params['comm_type']}, {params['ranks']} ranks, {params['loop_rule']} loop lengths")
    lines = [f"# fpgacomm beff: {where}; b_eff is the {params['b_eff_reduction']}", *scale_out_lines(result)]
    model = "model_bandwidth" in result.columns
    patterns = list(dict.fromkeys(row["pattern"] for row in result.rows))
    for pattern in patterns:
        if len(patterns) > 1:
            lines.append(f"# ring {pattern}: {params['rings'][pattern]}")
        lines.append(f"{'MSize':>12} {'looplength':>12} {'time':>12} {'B/s':>12}" + (f" {'model B/s':>12}" if model else ""))
        for row in (r for r in result.rows if r["pattern"] == pattern):
            line = f"{row['size']:>12} {row['loop_length']:>12} {row['time']:>12.5e} {row['bandwidth']:>12.5e}"
            if model:
                line += f" {row['model_bandwidth']:>12.5e}"
            if row["validation"] == "fail":
                line += f"   VALIDATION FAILED ({row['validation_errors']} bytes)"
            lines.append(line)
    lines.append(f"b_eff = {params['b_eff']:.5e} B/s")
    return "\n".join(lines)

# Collectives: -f adds nccl-tests' bandwidths and the staging share.
_COLLECTIVE_FULL = _LATENCY_FULL + [
    ("Algbw(MB/s)", "algbw", _MB),
    ("Busbw(MB/s)", "busbw", _MB),
    ("Staging(%)", "staging_share", 100.0),
]


def _collective_formatter(title: str) -> Callable[[Result, bool], str]:
    def format_collective(result: Result, full: bool = False) -> str:
        return _osu_table(result, full, title, _LATENCY_MAIN, _COLLECTIVE_FULL)
    return format_collective


# One-sided: OMB's titles name the call ("# OSU MPI_Put Latency Test") and
# add its window and synchronisation lines.
_WINDOW_CALLS = {"allocate": "MPI_Win_allocate", "create": "MPI_Win_create", "dynamic": "MPI_Win_create_dynamic"}
_SYNC_CALLS = {"lock": "MPI_Win_lock/unlock", "pscw": "MPI_Win_post/start/complete/wait",
               "fence": "MPI_Win_fence", "flush": "MPI_Win_flush", "flush_local": "MPI_Win_flush_local",
               "lock_all": "MPI_Win_lock_all/unlock_all"}


def _one_sided_formatter(call: str, title: str, quantity: str) -> Callable[[Result, bool], str]:
    main, extra = (_LATENCY_MAIN, _LATENCY_FULL) if quantity == "latency" else (_BANDWIDTH_MAIN, _BANDWIDTH_FULL)

    def format_one_sided(result: Result, full: bool = False) -> str:
        preamble = [f"# Window creation: {_WINDOW_CALLS[_param(result, 'window_creation')]}",
                    f"# Synchronization: {_SYNC_CALLS[_param(result, 'sync')]}"]
        staging = [("Staging(%)", "staging_share", 100.0)]
        return _osu_table(result, full, title, main, extra + staging, preamble=preamble, operation=call)
    return format_one_sided


def format_gather(result: Result, full: bool = False) -> str:
    """Size, stages, time, throughput and the per-stage phases summed, one
    line per (nodes, size); simulated Results add their model columns."""
    p = result.params
    where = f"fabric {p['fabric']} (simulated)" if "fabric" in p else f"mem {p.get('mem')}"
    title = (f"# fpgacomm gather: {p.get('collective', 'gather')}, {where}, control {p.get('control')}, "
             f"ports {p.get('ports')}, virtual ports {p.get('virtual_ports')}")
    models = [c for c in ("model", "model_printed") if c in result.columns]
    header = (f"{'schedule':>9}{'nodes':>6}{'size':>11}{'stages':>7}{'time':>11}{'throughput':>13}"
              f"{'set-up':>11}{'transfer':>11}{'barrier':>11}" + "".join(f"{c:>14}" for c in models) +
              ("   validation" if "validation" in result.columns else ""))
    lines = [title, *scale_out_lines(result), header]
    for row in result.rows:
        line = (f"{row['schedule']:>9}{row['nodes']:>6}{human_bytes(row['size']):>11}{row['stages']:>7}"
                f"{human_seconds(row['time']):>11}{human_bandwidth(row['throughput']):>13}"
                f"{human_seconds(row['setup']):>11}{human_seconds(row['transfer']):>11}"
                f"{human_seconds(row['barrier']):>11}" + "".join(f"{human_seconds(row[c]):>14}" for c in models))
        if "validation" in result.columns:
            line += f"   {row['validation'] or 'off'}"
        lines.append(line)
    return "\n".join(lines)


_DEVBW_ARROWS = {("h2d", "H"): "H->D", ("h2d", "H!"): "H!->D", ("d2h", "H"): "D->H", ("d2h", "H!"): "D->H!"}
# Narrower than OMB's fields: up to twelve columns share a line.
_DEVBW_SIZE_WIDTH, _DEVBW_FIELD_WIDTH = 12, 14


def format_devbw(result: Result, full: bool = False, rank: int = 0) -> str:
    """OMB-style text of one rank: bandwidth (MB/s, 10^6) and time per copy (us) per direction and host kind."""
    rows = [row for row in result.rows if row["rank"] == rank]
    series = [key for key in _DEVBW_ARROWS if any((r["direction"], r["host_kind"]) == key for r in rows)]
    cell = {(r["size"], r["direction"], r["host_kind"]): r for r in rows}
    sizes = sorted({r["size"] for r in rows})
    columns = [(f"{_DEVBW_ARROWS[key]}(MB/s)", key, "bandwidth", 1e-6) for key in series]
    columns += [(f"{_DEVBW_ARROWS[key]}(us)", key, "time_avg", 1e6) for key in series]
    if full:
        columns += [(f"{_DEVBW_ARROWS[key]} dev(us)", key, "device_time_avg", 1e6) for key in series]
    device = result.env.get("rank_devices", [""] * (rank + 1))[rank]
    lines = [f"# fpgacomm Device Copy Bandwidth Test v{result.env.get('fpgacomm_version', 'unknown')}",
             f"# Rank {rank}: {device}", *scale_out_lines(result),
             "# One blocking copy per iteration; MB/s = 10^6 B/s over the average host time"
             + ("; dev = profiling-event time" if full else "")]
    lines.append(f"{'# Size':<{_DEVBW_SIZE_WIDTH}}" + "".join(f"{header:>{_DEVBW_FIELD_WIDTH}}" for header, *_ in columns))
    for size in sizes:
        cells = [cell[(size, *key)][column] * factor for _, key, column, factor in columns]
        lines.append(f"{size:<{_DEVBW_SIZE_WIDTH}d}" + "".join(f"{value:{_DEVBW_FIELD_WIDTH}.2f}" for value in cells))
    return "\n".join(lines)


def format_table(result: Result, full: bool = False) -> str:
    """Any Result as a plain table (Result.table: each value with its unit)
    under a title line; for benchmarks that have no format of their own."""
    title = f"# fpgacomm {result.benchmark}"
    if "fabric" in result.params:
        title += f": {result.params['fabric']} (simulated)"
    return result.table("\n".join([title, *scale_out_lines(result)]))


# The formats that are the same for every benchmark printing them.
_FIXED_FORMATS = {"beff": format_beff, "gather": format_gather, "devbw": format_devbw, "table": format_table}


def _formatter(benchmark: Benchmark) -> Callable[[Result, bool], str]:
    """The formatter of a benchmark's text format (catalog.TEXTS), with its OMB title."""
    if benchmark.text in _FIXED_FORMATS:
        return _FIXED_FORMATS[benchmark.text]
    if benchmark.text == "osu_pt2pt":
        return _pt2pt_formatter(benchmark.title, benchmark.quantity)
    if benchmark.text == "osu_mbw_mr":
        return _mbw_mr_formatter(benchmark.title)
    if benchmark.text == "osu_collective":
        return _collective_formatter(benchmark.title)
    if benchmark.text == "osu_onesided":
        return _one_sided_formatter(benchmark.call, benchmark.title, benchmark.quantity)
    raise ValueError(f"{benchmark.name}: unknown text format {benchmark.text!r}; catalog.TEXTS lists them")


# Benchmark name -> formatter: every benchmark of the catalog, and the
# simulated gathers, which print as the real ones.
FORMATTERS: dict[str, Callable[[Result, bool], str]] = {
    **{benchmark.name: _formatter(benchmark) for benchmark in BENCHMARKS},
    "gather_sim": format_gather,
}


def format_text(result: Result, full: bool = False) -> str:
    """The benchmark's own text report (no trailing newline), or a plain
    table (format_table) for benchmarks without one.

    full adds min, max, stdev and percentile columns.
    """
    return FORMATTERS.get(result.benchmark, format_table)(result, full)


# ------------------------------------------------------------ summaries

# 8 B (one double) is the customary small-message latency figure.
_HEADLINE_SIZE = 8


def summary_line(result: Result) -> str:
    """One line per run for a suite summary, e.g.
    "osu_latency D D: 1 B .. 4 MiB, 8 B 12.3 us, 4 MiB 1.23 ms" or
    "osu_bw D H: 1 B .. 4 MiB, peak 12.3 GB/s at 1 MiB".
    Any failed validation is stated, since a fast wrong transfer is no result.
    """
    name = result.benchmark
    if "send_kind" in result.params and "recv_kind" in result.params:
        name += f" {result.params['send_kind']} {result.params['recv_kind']}"
    if "comm_type" in result.params:
        name += f" {result.params['comm_type']}"
    if "fabric" in result.params:
        name += f" {result.params['fabric']} (simulated)"
    where = topology(result.env)
    if where.get("scale") == "scale-out":
        name += f" (scale-out, {where['nodes']} hosts)"
    rows = [row for row in result.rows if row.get("size") is not None]
    if not rows:
        return f"{name}: no rows"

    sizes = [row["size"] for row in rows]
    low, high = min(sizes), max(sizes)
    parts = [human_bytes(low) if low == high else f"{human_bytes(low)} .. {human_bytes(high)}"]

    columns = result.columns
    if "latency_avg" in columns:
        small = next((row for row in rows if row["size"] == _HEADLINE_SIZE),
                     min(rows, key=lambda row: row["size"]))
        large = max(rows, key=lambda row: row["size"])
        for row in (small, large) if large is not small else (small,):
            parts.append(f"{human_bytes(row['size'])} {human_seconds(row['latency_avg'])}")
    if "bandwidth" in columns:
        measured = [row for row in rows if row["bandwidth"] is not None]
        if measured:
            peak = max(measured, key=lambda row: row["bandwidth"])
            parts.append(f"peak {human_bandwidth(peak['bandwidth'])} "
                         f"at {human_bytes(peak['size'])}")
    if "message_rate" in columns:
        measured = [row for row in rows if row["message_rate"] is not None]
        if measured:
            peak = max(measured, key=lambda row: row["message_rate"])
            parts.append(f"peak {human_rate(peak['message_rate'])} "
                         f"at {human_bytes(peak['size'])}")

    if "b_eff" in result.params:
        parts.append(f"b_eff {human_bandwidth(result.params['b_eff'])}")
    failed = [row["size"] for row in rows if str(row.get("validation")).lower() == "fail"]
    if failed:
        parts.append(f"VALIDATION FAILED at {len(failed)} of {len(rows)} sizes "
                     f"(first {human_bytes(min(failed))})")
    return f"{name}: " + ", ".join(parts)
