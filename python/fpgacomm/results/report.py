"""Text reports of a Result, kept apart from the measuring.

The OSU point-to-point formats reproduce OMB 7.x's text byte for byte where
OMB has the same column (header strings, "%-10d" sizes, "%20.2f" values,
microseconds, MB = 10^6 bytes), so parsers written for OMB output read ours.
A formatter takes (result, full) and returns the text without a trailing
newline; TEXTS registers each formatter under the name a kind's `text`
gives (results/kinds.py), and the OSU formatters take their title from the
kind's catalog entry, so a new kind with an existing text touches nothing
here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..params import HOST_KINDS
from ..runtime.environment import topology
from ..units import MODEL_DIGITS, human_bandwidth, human_bytes, human_rate, human_seconds, with_unit
from . import kinds, stats
from .compare import format_comparison
from .omb_columns import (
    BANDWIDTH_FULL,
    BANDWIDTH_MAIN,
    COLLECTIVE_FULL,
    LATENCY_FULL,
    LATENCY_MAIN,
    MB,
    MBW_MR_MAIN,
    STAGING,
    US,
)
from .result import ROUNDS, Result
from .validation import format_validation

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


# ------------------------------------------------------------ rounds


def rounds_of(result: Result) -> int:
    """How many rounds the run planned (params["rounds"]); 1 without rounds."""
    return int(result.params.get("rounds", 1))


def rounds_lines(result: Result) -> list:
    """With rounds, a header line saying what the numbers are: medians over
    the rounds, the interval of the median (or, with too few rounds for
    95 %, the range and how sure it is) and the spread; none with one round,
    whose text is the text without rounds."""
    count = rounds_of(result)
    if count == 1:
        return []
    seed = result.params.get("round_seed")
    line = f"# Rounds: {count}, sizes in shuffled order (seed {seed}); values are medians over rounds"
    needed = stats.rounds_needed()
    if count >= needed:
        line += "; CI95: distribution-free 95% confidence interval of the median"
    else:
        coverage = stats.median_ci(range(count))[2]
        line += (
            f"; too few rounds for a 95% interval of the median ({needed} needed): Range is the rounds' "
            f"min and max (it holds the median with {coverage:.1%})"
        )
    return [line + "; Spread: (max - min) / median"]


def interval(row: dict, key: str) -> tuple:
    """(low, high, spread) of a row's rounds of column `key` (None, None,
    None where the row keeps none): stats.median_ci's interval, or the
    range below 6 rounds, and stats.spread."""
    values = [value for value in row.get(ROUNDS, {}).get(key, []) if value is not None]
    if not values:
        return None, None, None
    low, high, _ = stats.median_ci(values)
    return low, high, stats.spread(values)


def _interval_label(result: Result) -> str:
    return "CI95" if rounds_of(result) >= stats.rounds_needed() else "Range"


def _partial_rounds(result: Result) -> bool:
    """Whether some row has fewer rounds than planned (an interrupted run)."""
    count = rounds_of(result)
    return any(len(next(iter(row[ROUNDS].values()), [])) < count for row in result.rows if ROUNDS in row)


def _row_rounds(row: dict) -> int:
    return len(next(iter(row.get(ROUNDS, {}).values()), []))


def emulation_lines(result: Result) -> list:
    """A header line saying that the device was an emulator ("# Emulated
    device: ..."), whose timings are no FPGA's; none for real devices."""
    opencl = result.env.get("opencl", {})
    emulated = [device for device in result.env.get("rank_devices", []) if device.endswith("(emulated)")]
    if not opencl.get("emulated") and not emulated:
        return []
    name = opencl.get("device") if opencl.get("emulated") else emulated[0].removesuffix(" (emulated)")
    return [
        f"# Emulated device: {name}; software emulation on the host's cores, so these timings are the "
        "emulator's, not an FPGA's performance"
    ]


def header_lines(result: Result) -> list:
    """The header lines that say where a run ran, where that is not the usual: scale-out, emulated."""
    return scale_out_lines(result) + emulation_lines(result)


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


def _param(result: Result, name: str):
    try:
        return result.params[name]
    except KeyError:
        raise ValueError(f"{result.benchmark}: params lack {name!r}, needed for the " f"OSU text header") from None


def _buffer_kinds(result: Result) -> tuple:
    kinds = (_param(result, "send_kind"), _param(result, "recv_kind"))
    for kind in kinds:
        if kind not in KIND_NAMES:
            raise ValueError(f"{result.benchmark}: unknown buffer kind {kind!r}; " f"kinds are {list(KIND_NAMES)}")
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


def _osu_table(
    result: Result, full: bool, title: str, main: list, extra: list, preamble: list = (), operation: str = ""
) -> str:
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
        lines.append(f"# Send Buffer on {KIND_NAMES[send]} " f"and Receive Buffer on {KIND_NAMES[recv]}")
    lines.extend(header_lines(result))
    lines.extend(preamble)
    lines.append(f"# Datatype: {result.params.get('datatype', 'MPI_CHAR')}.")
    lines.extend(rounds_lines(result))
    rounds = rounds_of(result) > 1
    partial = rounds and _partial_rounds(result)

    extra = list(extra) if full else []
    needed = ["size"] + [key for _, key, _ in main + extra] + (["validation"] if validate else [])
    missing = [key for key in needed if key not in result.columns]
    if missing and result.rows:
        raise ValueError(f"{result.benchmark}: rows lack column(s) {missing} needed " f"for the OSU text")

    headers = [header for header, _, _ in main]
    if validate:
        headers.append("Validation")
    headers += [header for header, _, _ in extra]
    # With rounds: the interval and spread of the headline (the first
    # measured value), after every column OMB has.
    if rounds and main:
        headline, _, headline_factor = main[0]
        unit = {US: "(us)", MB: "(MB/s)"}.get(headline_factor, "")
        label = _interval_label(result)
        headers += [f"{label} Low{unit}", f"{label} High{unit}", "Spread(%)"] + (["Rounds"] if partial else [])
    lines.append(f"{'# Size':<{_SIZE_WIDTH}}" + "".join(f"{h:>{_FIELD_WIDTH}}" for h in headers))

    for row in result.rows:
        cells = [_value_cell(row[key], factor) for _, key, factor in main]
        if validate:
            cells.append(_validation_cell(row["validation"]))
        cells += [_value_cell(row[key], factor) for _, key, factor in extra]
        if rounds:
            low, high, spread = interval(row, main[0][1])
            cells += [_value_cell(low, headline_factor), _value_cell(high, headline_factor), _value_cell(spread, 100.0)]
            if partial:
                cells.append(f"{_row_rounds(row):>{_FIELD_WIDTH}d}")
        lines.append(f"{row['size']:<{_SIZE_WIDTH}d}" + "".join(cells))
    return "\n".join(lines)


def _benchmark(result: Result):
    """The catalog entry of the benchmark an OSU text prints: its title and quantity."""
    entry = kinds.of(result.benchmark).benchmark
    if entry is None or not entry.title:
        raise ValueError(f"{result.benchmark}: no OSU Micro-Benchmarks test, so no OSU text")
    return entry


def _main_and_full(quantity: str) -> tuple:
    return (LATENCY_MAIN, LATENCY_FULL) if quantity == "latency" else (BANDWIDTH_MAIN, BANDWIDTH_FULL)


def format_pt2pt(result: Result, full: bool = False) -> str:
    """OMB's point-to-point table: latency or bandwidth per size."""
    benchmark = _benchmark(result)
    return _osu_table(result, full, benchmark.title, *_main_and_full(benchmark.quantity))


def format_mbw_mr(result: Result, full: bool = False) -> str:
    """OMB's multi-pair bandwidth and message rate table (-V: the matrix of windows)."""
    title = _benchmark(result).title
    if result.params.get("vary_window"):
        return _mbw_mr_varied(result, title)
    pairs_line = f"# [ pairs: {_param(result, 'pairs')} ] " f"[ window size: {_param(result, 'window')} ]"
    # OMB's -R 0: the bandwidth alone.
    main = MBW_MR_MAIN if result.params.get("print_rate", True) else MBW_MR_MAIN[:1]
    return _osu_table(result, full, title, main, BANDWIDTH_FULL, preamble=[pairs_line])


def _mbw_mr_varied(result: Result, title: str) -> str:
    """OMB's mbw_mr -V text: a bandwidth (MB/s) matrix of sizes by windows,
    then, with -R 1 and the run complete, the message rate profile. A size's
    line appears once all its windows are measured."""
    windows = _param(result, "window")
    # OMB's header lines: those of the usual table, less its column header.
    header = Result(result.benchmark, result.params, result.env, [], result.units)
    lines = _osu_table(
        header,
        False,
        title,
        [],
        [],
        preamble=[
            f"# [ pairs: {_param(result, 'pairs')} ] [ window size: varied ]",
            "",
            "# Uni-directional Bandwidth (MB/sec)",
        ],
    ).split("\n")[:-1]
    cells = {(row["size"], row["window"]): row for row in result.rows}
    sizes = [
        size
        for size in dict.fromkeys(row["size"] for row in result.rows)
        if all((size, window) in cells for window in windows)
    ]
    window_line = "#      " + "".join(f"  {window:10d}" for window in windows)

    def matrix(column: str, factor: float) -> list:
        return [window_line] + [
            f"{size:<7d}" + "".join(f"  {cells[(size, window)][column] * factor:10.2f}" for window in windows)
            for size in sizes
        ]

    lines += matrix("bandwidth", MB)
    if result.params.get("print_rate", True) and not getattr(result, "incomplete", None):
        lines += ["", "# Message Rate Profile"] + matrix("message_rate", 1.0)
    return "\n".join(lines)


# HPCC FPGA's printResults: columns of width 20, three spaces apart.
_BEFF_WIDTH, _BEFF_GAP = 20, "   "


def format_beff(result: Result, full: bool = False) -> str:
    """HPCC FPGA's b_eff table as it prints it: MSize, looplength, the best
    time and the aggregated bandwidth per size (columns of width 20, three
    spaces apart, values in scientific notation with 5 digits after the
    point), a table per ring pattern, then the b_eff line. With a model, its
    bandwidth stands beside each row."""
    params = result.params
    where = (
        f"simulated {params['fabric']}, {params['ranks']} FPGAs"
        if "fabric" in params
        else f"{params['comm_type']}, {params['ranks']} ranks, {params['loop_rule']} loop lengths"
    )
    lines = [
        f"# fpgacomm beff: {where}; b_eff is the {params['b_eff_reduction']}",
        *header_lines(result),
        *rounds_lines(result),
    ]
    model = "model_bandwidth" in result.columns
    rounds = rounds_of(result) > 1
    label = _interval_label(result)
    patterns = list(dict.fromkeys(row["pattern"] for row in result.rows))
    for pattern in patterns:
        if len(patterns) > 1:
            lines.append(f"# ring {pattern}: {params['rings'][pattern]}")
        headers = (
            ["MSize", "looplength", "time [s]", "B/s"]
            + (["model B/s"] if model else [])
            + ([f"{label} low", f"{label} high", "spread(%)"] if rounds else [])
        )
        lines.append(_BEFF_GAP.join(f"{header:>{_BEFF_WIDTH}}" for header in headers))
        for row in (r for r in result.rows if r["pattern"] == pattern):
            cells = [f"{row['size']:>{_BEFF_WIDTH}}", f"{row['loop_length']:>{_BEFF_WIDTH}}"]
            cells += [
                f"{row[key]:>{_BEFF_WIDTH}.5e}"
                for key in ("time", "bandwidth") + (("model_bandwidth",) if model else ())
            ]
            if rounds:
                low, high, spread = interval(row, "bandwidth")
                cells += [f"{low:>{_BEFF_WIDTH}.5e}", f"{high:>{_BEFF_WIDTH}.5e}", f"{spread * 100:>{_BEFF_WIDTH}.2f}"]
            line = _BEFF_GAP.join(cells)
            if row["validation"] == "fail":
                line += f"   VALIDATION FAILED ({row['validation_errors']} bytes)"
            lines.append(line)
    lines.append(f"b_eff = {params['b_eff']:>11.5e} B/s")
    return "\n".join(lines)


# Over what each -f column of a collective is taken: OMB's Min and Max are
# over ranks, its percentiles over iterations, so P99 may exceed Max.
_COLLECTIVE_FULL_NOTE = (
    "# Min and Max Latency: the fastest and the slowest rank's average, as OSU Micro-Benchmarks; "
    "Stdev and P50-P99: over the iterations of the ranks' average time"
)


def format_collective(result: Result, full: bool = False) -> str:
    """OMB's collective latency table; -f adds its statistics, nccl-tests' bandwidths and the staging share."""
    return _osu_table(
        result,
        full,
        _benchmark(result).title,
        LATENCY_MAIN,
        COLLECTIVE_FULL,
        preamble=[_COLLECTIVE_FULL_NOTE] if full else [],
    )


# One-sided: OMB's titles name the call ("# OSU MPI_Put Latency Test") and
# add its window and synchronisation lines.
_WINDOW_CALLS = {"allocate": "MPI_Win_allocate", "create": "MPI_Win_create", "dynamic": "MPI_Win_create_dynamic"}
_SYNC_CALLS = {
    "lock": "MPI_Win_lock/unlock",
    "pscw": "MPI_Win_post/start/complete/wait",
    "fence": "MPI_Win_fence",
    "flush": "MPI_Win_flush",
    "flush_local": "MPI_Win_flush_local",
    "lock_all": "MPI_Win_lock_all/unlock_all",
}


def format_one_sided(result: Result, full: bool = False) -> str:
    """OMB's one-sided table, under the call, window and synchronisation lines."""
    benchmark = _benchmark(result)
    main, extra = _main_and_full(benchmark.quantity)
    preamble = [
        f"# Window creation: {_WINDOW_CALLS[_param(result, 'window_creation')]}",
        f"# Synchronization: {_SYNC_CALLS[_param(result, 'sync')]}",
    ]
    return _osu_table(result, full, benchmark.title, main, extra + STAGING, preamble=preamble, operation=benchmark.call)


def format_gather(result: Result, full: bool = False) -> str:
    """Size, stages, time, throughput and the per-stage phases summed, one
    line per (nodes, size); simulated Results add their model columns, and
    write their times to four significant digits (a simulator's figures are
    exact for its inputs)."""
    p = result.params
    simulated = "fabric" in p
    where = f"fabric {p['fabric']} (simulated)" if simulated else f"mem {p.get('mem')}"
    title = (
        f"# fpgacomm gather: {p.get('collective', 'gather')}, {where}, control {p.get('control')}, "
        f"ports {p.get('ports')}, virtual ports {p.get('virtual_ports')}"
    )
    digits = MODEL_DIGITS if simulated else 3

    def seconds(value):
        return human_seconds(value, digits)

    models = [c for c in ("model", "model_printed") if c in result.columns]
    header = (
        f"{'schedule':>9}{'nodes':>6}{'size':>11}{'stages':>7}{'time':>11}{'throughput':>13}"
        f"{'set-up':>11}{'transfer':>11}{'barrier':>11}" + "".join(f"{c:>14}" for c in models)
    )
    rounds = rounds_of(result) > 1
    if rounds:
        label = _interval_label(result)
        header += f"{label + ' low':>13}{label + ' high':>13}{'spread':>9}"
    header += "   validation" if "validation" in result.columns else ""
    phases = (
        "# set-up, transfer, barrier: the time split by what held the gather up, stage by stage; " "they add up to time"
    )
    lines = [title, *header_lines(result), *rounds_lines(result), phases, header]
    for row in result.rows:
        line = (
            f"{row['schedule']:>9}{row['nodes']:>6}{human_bytes(row['size']):>11}{row['stages']:>7}"
            f"{seconds(row['time']):>11}{human_bandwidth(row['throughput'], digits):>13}"
            f"{seconds(row['setup']):>11}{seconds(row['transfer']):>11}"
            f"{seconds(row['barrier']):>11}" + "".join(f"{seconds(row[c]):>14}" for c in models)
        )
        if rounds:
            low, high, spread = interval(row, "time")
            line += f"{seconds(low):>13}{seconds(high):>13}{spread:>9.1%}"
        if "validation" in result.columns:
            line += f"   {row['validation'] or 'off'}"
        lines.append(line)
    return "\n".join(lines)


_DEVBW_ARROWS = {("h2d", "H"): "H->D", ("h2d", "H!"): "H!->D", ("d2h", "H"): "D->H", ("d2h", "H!"): "D->H!"}
# Narrower than OMB's fields: up to twelve columns share a line.
_DEVBW_SIZE_WIDTH, _DEVBW_FIELD_WIDTH, _DEVBW_SPAN_WIDTH = 12, 14, 30


def format_devbw(result: Result, full: bool = False) -> str:
    """OMB-style text of every rank, one table each under its device: bandwidth
    (MB/s, 10^6) and time per copy (us) per direction and host kind."""
    lines = [
        f"# fpgacomm Device Copy Bandwidth Test v{result.env.get('fpgacomm_version', 'unknown')}",
        *header_lines(result),
        "# One blocking copy per iteration; MB/s = 10^6 B/s over the average host time"
        + ("; dev = profiling-event time" if full else ""),
        *rounds_lines(result),
    ]
    for rank in sorted({row["rank"] for row in result.rows}):
        lines += _devbw_rank(result, rank, full)
    return "\n".join(lines)


def _devbw_rank(result: Result, rank: int, full: bool) -> list[str]:
    """One rank's table of format_devbw, under a line naming the rank and its device."""
    rows = [row for row in result.rows if row["rank"] == rank]
    series = [key for key in _DEVBW_ARROWS if any((r["direction"], r["host_kind"]) == key for r in rows)]
    cell = {(r["size"], r["direction"], r["host_kind"]): r for r in rows}
    columns = [(f"{_DEVBW_ARROWS[key]}(MB/s)", key, "bandwidth", 1e-6) for key in series]
    columns += [(f"{_DEVBW_ARROWS[key]}(us)", key, "time_avg", 1e6) for key in series]
    if full:
        columns += [(f"{_DEVBW_ARROWS[key]} dev(us)", key, "device_time_avg", 1e6) for key in series]
    devices = result.env.get("rank_devices", [])
    rounds = rounds_of(result) > 1
    # With rounds: each series' bandwidth interval and spread, "LOW..HIGH SPREAD%".
    spans = [(f"{_interval_label(result)} {_DEVBW_ARROWS[key]}(MB/s)", key) for key in series] if rounds else []
    lines = [
        f"# Rank {rank}: {devices[rank] if rank < len(devices) else 'device unknown'}",
        f"{'# Size':<{_DEVBW_SIZE_WIDTH}}"
        + "".join(f"{header:>{_DEVBW_FIELD_WIDTH}}" for header, *_ in columns)
        + "".join(f"{header:>{_DEVBW_SPAN_WIDTH}}" for header, _ in spans),
    ]
    for size in sorted({r["size"] for r in rows}):
        cells = [cell[(size, *key)][column] * factor for _, key, column, factor in columns]
        line = f"{size:<{_DEVBW_SIZE_WIDTH}d}" + "".join(f"{value:{_DEVBW_FIELD_WIDTH}.2f}" for value in cells)
        for _, key in spans:
            low, high, spread = interval(cell[(size, *key)], "bandwidth")
            line += f"{f'{low * 1e-6:.2f}..{high * 1e-6:.2f} {spread:.1%}':>{_DEVBW_SPAN_WIDTH}}"
        lines.append(line)
    return lines


def format_table(result: Result, full: bool = False) -> str:
    """Any Result as a plain table (Result.table: each value with its unit)
    under a title line; for benchmarks that have no format of their own."""
    title = f"# fpgacomm {result.benchmark}"
    if "fabric" in result.params:
        title += f": {result.params['fabric']} (simulated)"
    table = result.table("\n".join([title, *header_lines(result), *rounds_lines(result)]))
    if rounds_of(result) == 1 or not result.rows:
        return table
    # With rounds: the interval and spread of each headline column (those
    # that are no statistic of another: send_overhead, not send_overhead_min).
    headlines = [
        column for column in result.round_columns if column != "validation_errors" and not column.endswith(_STATISTICS)
    ]
    label = _interval_label(result)
    cells = []
    for row in result.rows:
        parts = []
        for column in headlines:
            low, high, spread = interval(row, column)
            unit = result.units.get(column, "")
            parts.append(f"{with_unit(low, unit)}..{with_unit(high, unit)} ({spread:.1%})" if low is not None else "-")
        cells.append(parts)
    widths = [
        max([len(f"{column} {label} (spread)")] + [len(row[i]) for row in cells]) for i, column in enumerate(headlines)
    ]
    lines = table.split("\n")
    top = len(lines) - len(result.rows) - 1
    lines[top] += "".join(f"  {f'{column} {label} (spread)':>{width}}" for column, width in zip(headlines, widths))
    for index, parts in enumerate(cells):
        lines[top + 1 + index] += "".join(f"  {part:>{width}}" for part, width in zip(parts, widths))
    return "\n".join(lines)


# The suffixes of the columns that are statistics of a headline column.
_STATISTICS = ("_min", "_max", "_stdev", "_p50", "_p90", "_p99")


#: Text name (a kind's `text`, results/kinds.py) -> its formatter.
TEXTS: dict[str, Callable[[Result, bool], str]] = {
    "osu_pt2pt": format_pt2pt,
    "osu_mbw_mr": format_mbw_mr,
    "osu_collective": format_collective,
    "osu_onesided": format_one_sided,
    "beff": format_beff,
    "gather": format_gather,
    "devbw": format_devbw,
    "table": format_table,
    "comparison": format_comparison,
    "validation": format_validation,
}


def formatter(name: str) -> Callable[[Result, bool], str]:
    """The formatter of a Result named `name`: its kind's text."""
    return TEXTS[kinds.of(name).text]


def format_text(result: Result, full: bool = False) -> str:
    """The text of the Result's kind (results/kinds.py; no trailing
    newline): its own report, or a plain table (format_table).

    full adds min, max, stdev and percentile columns.
    """
    return formatter(result.benchmark)(result, full)


# ------------------------------------------------------------ summaries

# 8 B (one double) is the customary small-message latency figure.
_HEADLINE_SIZE = 8


def summary_line(result: Result) -> str:
    """One line per run for a suite summary, e.g.
    "osu_latency D D: 1 B .. 4 MiB, 8 B 12.3 us, 4 MiB 1.23 ms" or
    "osu_bw D H: 1 B .. 4 MiB, peak 12.3 GB/s at 1 MiB"; every line has a
    figure: a Result without latency, bandwidth or rate columns gives its
    first time at its smallest and largest size and the peak of its first
    bandwidth. Simulated Results write four significant digits.
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
    digits = MODEL_DIGITS if "fabric" in result.params or result.env.get("simulated") else 3

    sizes = [row["size"] for row in rows]
    low, high = min(sizes), max(sizes)
    parts = [human_bytes(low) if low == high else f"{human_bytes(low)} .. {human_bytes(high)}"]

    columns = result.columns
    times = [column for column in columns if result.units.get(column) == "s"]
    rates = [column for column in columns if result.units.get(column) == "B/s"]
    time_column = "latency_avg" if "latency_avg" in columns else None
    peaks = [column for column in ("bandwidth", "message_rate") if column in columns]
    if not time_column and not peaks and "b_eff" not in result.params:
        time_column = times[0] if times else None
        peaks = rates[:1]
    if time_column:
        small = next((row for row in rows if row["size"] == _HEADLINE_SIZE), min(rows, key=lambda row: row["size"]))
        large = max(rows, key=lambda row: row["size"])
        for row in (small, large) if large is not small else (small,):
            label = "" if time_column == "latency_avg" else f"{time_column} "
            parts.append(f"{label}{human_bytes(row['size'])} {human_seconds(row[time_column], digits)}")
    for column in peaks:
        measured = [row for row in rows if row[column] is not None]
        if measured:
            peak = max(measured, key=lambda row: row[column])
            value = (
                human_rate(peak[column], digits) if column == "message_rate" else human_bandwidth(peak[column], digits)
            )
            label = "" if column in ("bandwidth", "message_rate") else f"{column} "
            parts.append(f"peak {label}{value} at {human_bytes(peak['size'])}")

    if "b_eff" in result.params:
        parts.append(f"b_eff {human_bandwidth(result.params['b_eff'], digits)}")
    failed = [row["size"] for row in rows if str(row.get("validation")).lower() == "fail"]
    if failed:
        parts.append(f"VALIDATION FAILED at {len(failed)} of {len(rows)} sizes " f"(first {human_bytes(min(failed))})")
    elif result.params.get("validation_pass"):  # the suite's: validated apart from the timed pass
        parts.append("validated untimed: pass")
    return f"{name}: " + ", ".join(parts)
