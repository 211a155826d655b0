"""Ring b_eff: HPCC FPGA's effective bandwidth benchmark on real ranks (its b_eff documentation).

Every rank exchanges a message of 2^m bytes with its left and its right
neighbour in every iteration (R = 2 exchanges), LL(m) iterations per
measured execution, an MPI barrier before each, `repetitions` executions
per size. Per size, T(m) is the slowest rank's best repetition, the
aggregated bandwidth is B(m) = N * R * 2^m * LL(m) / T(m), and b_eff is the
mean of B(m) over the sizes run. docs/METHODS.md ("b_eff") states every rule.

    mpirun -np 4 python -c "from fpgacomm import beff as b; print(b.run(comm_type='cpu', max_size=12))"
"""

from __future__ import annotations

import contextlib
import itertools
import math
from dataclasses import dataclass

from .. import _core
from ..params import usage_error
from ..results.result import Result
from ..runtime import calibration, environment, mpi
from ..runtime.devices import DeviceOptions, open_device_if
from ..simulation import fabric
from ..simulation.resources import Limits
from . import beff_iec, schema
from .sweep import OnProgress, Rounds, check_rounds, progress_of_round

# The core's rings (its BeffOptions.type) and sim, the simulated ring, which
# runs on the fabric simulator; the core's parser refuses any other name.
COMM_TYPES = (*_core.beff_types(), "sim")
STAGED_TYPES = ("pcie", "kernel")  # device buffers staged through the host every exchange
LOOP_RULES = ("hpcc", "documented", "adaptive")
MODELS = ("520n",)
REDUCTIONS = ("hpcc", "rabenseifner")
RING_ORDERS = ("random", "natural")
EXCHANGES_PER_ITERATION = 2  # R: the left and the right neighbour
MAX_LOG2 = 30  # 1 GiB messages; four buffers of the largest size are held
_CORE = _core.BeffOptions()  # the core's defaults
# HPCC FPGA v1.3's defaults (-u -l -o -d; -u is the core's ceiling of the
# adaptive rule too) and its channel width in bytes.
UPPER, LOWER, OFFSET, DECREASE = _CORE.max_loop_length, 256, 11, 7
CHANNEL_WIDTH = 32


def message_sizes(min_size: int = 0, max_size: int = 20, step_size: int = 1) -> list[int]:
    """2^min_size .. 2^max_size bytes in steps of step_size in log2 (HPCC FPGA's
    --min-size, -m, --step-size: exponents, not bytes)."""
    if not 0 <= min_size <= max_size <= MAX_LOG2:
        raise usage_error(
            f"b_eff message sizes are log2 exponents with 0 <= --min-size <= -m <= {MAX_LOG2}, "
            f"got --min-size {min_size} -m {max_size}; e.g. -m 20 for 1 MiB"
        )
    if step_size < 1:
        raise usage_error(f"--step-size must be at least 1, got {step_size}")
    return [1 << m for m in range(min_size, max_size + 1, step_size)]


def _check_loop_bounds(upper: int, lower: int) -> None:
    if not 1 <= lower <= upper:
        raise usage_error(f"loop lengths need 1 <= -l (lower) <= -u (upper), got -l {lower} -u {upper}")


def hpcc_loop_length(
    m: int, upper: int = UPPER, lower: int = LOWER, offset: int = OFFSET, decrease: int = DECREASE
) -> int:
    """HPCC FPGA v1.3's loop length for messages of 2^m bytes (docs/METHODS.md): a
    linear decrease per log2 step after `offset`, reaching `lower` after about
    `decrease` steps."""
    _check_loop_bounds(upper, lower)
    if decrease < 1 or offset < 0:
        raise usage_error(f"the loop-length rule needs -d >= 1 and -o >= 0, got -d {decrease} -o {offset}")
    step = (upper - lower) // decrease
    return max(lower, upper - max(m - offset, 0) * step)


def documented_loop_length(m: int, upper: int = UPPER, lower: int = LOWER, channel_width: int = CHANNEL_WIDTH) -> int:
    """The rule HPCC FPGA's b_eff documentation gives:
    max(u / ceil(L / (2 * channel width)), l)."""
    _check_loop_bounds(upper, lower)
    if channel_width < 1:
        raise usage_error(f"the channel width must be at least 1 byte, got {channel_width}")
    return max(upper // math.ceil((1 << m) / (2 * channel_width)), lower)


def ring(ranks: int, order: str = "random", seed: int = 0) -> list[int]:
    """The rank at each ring position: random positions drawn from `seed`
    (the same on every platform), or rank order ("natural")."""
    _check_ring_order(order)
    return _core.ring_order(ranks, order == "random", seed)


def _check_ring_order(order: str) -> None:
    if order not in RING_ORDERS:
        raise usage_error(f"unknown ring order '{order}'; choose {' or '.join(RING_ORDERS)} (--ring)")


def logavg(values) -> float:
    """Rabenseifner's logarithmic average: the geometric mean."""
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _loop_lengths(
    rule: str, exponents: list[int], upper: int, lower: int, offset: int, decrease: int, channel_width: int
) -> list[int]:
    if rule == "hpcc":
        return [hpcc_loop_length(m, upper, lower, offset, decrease) for m in exponents]
    if rule == "documented":
        return [documented_loop_length(m, upper, lower, channel_width) for m in exponents]
    _check_loop_bounds(upper, lower)
    return [0] * len(exponents)  # the core finds them by timing trial loops


def _reduce(size: int, loop_length: int, times: list, ranks: int, reduction: str) -> tuple[float, float]:
    """(T(m), B(m)) from times[rank][repetition]. hpcc: each rank's best
    repetition, then the slowest rank. rabenseifner: each repetition's slowest
    rank, then the best repetition."""
    if reduction == "hpcc":
        time = max(min(per_rank) for per_rank in times)
    else:
        time = min(max(rank_times[r] for rank_times in times) for r in range(len(times[0])))
    return time, ranks * EXCHANGES_PER_ITERATION * size * loop_length / time


def _patterns(reduction: str, ring_order: str, seed: int, random_rings: int, ranks: int) -> list:
    """(name, order) of every ring measured: the one ring, or Rabenseifner's
    ring and random-ring patterns."""
    if reduction == "hpcc":
        return [("ring", ring(ranks, ring_order, seed))]
    return [("natural", ring(ranks, "natural"))] + [
        (f"random{i}", ring(ranks, "random", seed + i)) for i in range(random_rings)
    ]


@dataclass(frozen=True, kw_only=True)
class BeffOptions:
    """The options of a b_eff run, each declared once (as osu.OsuOptions:
    benchmarks.schema): defaults the core's BeffOptions' where it has the
    field (target_time, repetitions, validation_iterations, and upper, its
    max_loop_length), help and `fpgacomm beff`'s flag. run() takes one, or
    its fields as keywords. Each value is checked once: the comm type and
    the fields the core holds by the core (its parser and validate()), the
    others by run() beside it, all before any device opens."""

    comm_type: str = schema.option(
        "cpu",
        "cpu: host buffers; pcie: device buffers staged through the host; kernel: as pcie, messages written and "
        "checked by device kernels; iec: HPCC FPGA's IEC mode, kernels streaming over Intel external channels (an "
        "Intel FPGA with --binary, or Intel's FPGA emulator with --device-type fpga, ranks on one host); sim: "
        "simulated 520N links",
        "--comm-type",
        doc="cpu (host buffers), pcie (device buffers staged through the host every exchange), kernel (as pcie, "
        "messages written and checked by device kernels), iec (HPCC FPGA's IEC mode: kernels/beff_iec.cl's kernels "
        "stream and check every message over Intel external channels, on a board from --binary or on Intel's FPGA "
        "emulator, whose channels beff_iec joins across the ranks of one host) or sim (the beff_520n fabric "
        "simulator, `nodes` FPGAs)",
        choices=COMM_TYPES,
    )
    min_size: int = schema.option(
        0,
        "smallest message 2^LOG2 bytes",
        "--min-size",
        doc="smallest message 2^min_size bytes (HPCC FPGA's --min-size: an exponent, not bytes)",
        type=int,
        metavar="LOG2",
    )
    max_size: int = schema.option(
        20,
        "largest message 2^LOG2 bytes (default {default})",
        "-m",
        doc=f"largest message 2^max_size bytes (default {schema.DEFAULT}, at most {MAX_LOG2})",
        type=int,
        metavar="LOG2",
    )
    step_size: int = schema.option(1, "step between sizes in log2", "--step-size", type=int, metavar="LOG2")
    loop_rule: str | None = schema.option(
        None,
        "loop length per size: hpcc (HPCC FPGA v1.3, default for cpu), documented (HPCC FPGA's documented formula) "
        "or adaptive (default for pcie, kernel and iec)",
        "--loop-rule",
        doc="loop length per size: hpcc (HPCC FPGA v1.3; None: for cpu), documented (HPCC FPGA's documented "
        "formula) or adaptive (None: for pcie, kernel and iec; each measurement lasts about target_time seconds)",
        choices=LOOP_RULES,
    )
    upper: int = schema.option(UPPER, "largest loop length", "-u", "--upper", type=int)
    lower: int = schema.option(LOWER, "smallest loop length", "-l", "--lower", type=int)
    offset: int = schema.option(OFFSET, "log2 size where the loop length starts to fall", "-o", "--offset", type=int)
    decrease: int = schema.option(DECREASE, "log2 steps from upper to lower", "-d", "--decrease", type=int)
    channel_width: int = schema.option(
        CHANNEL_WIDTH, "bytes per channel (documented rule)", "--channel-width", type=int
    )
    target_time: float = schema.option(
        _CORE.target_time, "seconds per measurement (adaptive rule)", "--target-time", type=float
    )
    repetitions: int = schema.option(
        _CORE.repetitions, "measurements per size; the best counts", "-n", "--repetitions", type=int
    )
    # `fpgacomm beff` gives the rounds' flags (cli/options.py, add_rounds_options) here, after -n.
    rounds: int = schema.option(
        1,
        "complete measurements in this job (each with its `repetitions` per size, the best counting, as HPCC "
        "FPGA's -n), each visiting the sizes in its own shuffled order from round_seed; with more than one, rows "
        "are the medians over rounds with every round's values in row['rounds'], b_eff is that of the medians and "
        "params['b_eff_rounds'] each round's (benchmarks.sweep). The simulator is deterministic and takes one round",
    )
    round_seed: int | None = schema.round_seed_option()
    ring_order: str = schema.option(
        "random",
        "ring positions",
        "--ring",
        doc="ring positions: random (drawn from seed) or natural (rank order)",
        choices=RING_ORDERS,
    )
    seed: int = schema.option(0, "seed of the random ring positions", "--seed", type=int)
    reduction: str = schema.option(
        "hpcc",
        "hpcc: mean of B(m) on one ring; rabenseifner: logavg over ring and random rings",
        "--reduction",
        doc="hpcc (the mean of B(m) on one ring) or rabenseifner (logavg over the natural ring and `random_rings` "
        "random rings)",
        choices=REDUCTIONS,
    )
    random_rings: int = schema.option(3, "random rings of the rabenseifner reduction", "--random-rings", type=int)
    validation_iterations: int = schema.option(
        _CORE.validation_iterations,
        "untimed exchanges per size whose every message is checked whole",
        "--validation-iterations",
        type=int,
    )
    chunk_bytes: int | None = schema.option(
        None,
        "pipelining chunk of staged transfers (default auto: measured on accelerators, see fpgacomm tune)",
        "--chunk",
        cli_default="auto",
        doc="the staging chunk of pcie and kernel; None: runtime.calibration's (measured on accelerators)",
        metavar="SIZE|auto",
    )
    slots: int | None = schema.option(
        None,
        "staging buffers per direction (default auto: measured on accelerators)",
        "--slots",
        cli_default="auto",
        doc="staging buffers per direction of pcie and kernel; None: runtime.calibration's",
        metavar="N|auto",
    )
    nodes: int | None = schema.option(
        None,
        "simulated FPGAs (sim; default: the rank count, at least 3)",
        "--nodes",
        doc="simulated FPGAs (sim only); None: as many as ranks, at least 3",
        type=int,
    )
    model: str | None = schema.option(
        None,
        "print the channel model's bandwidth beside each row",
        "--model",
        doc='"520n" adds the channel model\'s aggregated bandwidth for the same N beside each row',
        choices=MODELS,
    )
    limits: Limits | None = schema.option(None, "what the simulator may take (simulation.resources.Limits; sim only)")
    device: DeviceOptions | None = schema.device_option()


@schema.takes_options(BeffOptions, "on_progress")
def run(comm=None, options: BeffOptions | None = None, *, on_progress: OnProgress | None = None, **keywords) -> Result:
    """Ring b_eff; collective over comm (COMM_WORLD by default).

    options: a BeffOptions, and/or its fields as keywords (which replace
    its). on_progress: called on rank 0 after each size with how far the
    run is ("ring: 5 of 21 sizes measured"; rabenseifner's rings are named
    as patterns; with rounds, "round 2 of 5, " first).
    """
    options = schema.build(BeffOptions, options, keywords)
    device_options = options.device or DeviceOptions()
    core, rule = _core_options(options, device_options)
    sizes = list(core.sizes)
    comm = mpi.resolve(comm)
    comm_type, reduction, model = options.comm_type, options.reduction, options.model
    params = {
        "comm_type": comm_type,
        "sizes": sizes,
        "min_size": options.min_size,
        "max_size": options.max_size,
        "step_size": options.step_size,
        "loop_rule": rule,
        "upper": options.upper,
        "lower": options.lower,
        "offset": options.offset,
        "decrease": options.decrease,
        "channel_width": options.channel_width,
        "target_time": options.target_time,
        "repetitions": options.repetitions,
        "reduction": reduction,
        "exchanges_per_iteration": EXCHANGES_PER_ITERATION,
        **device_options.params(),
    }
    if comm_type == "sim":
        return _with_model(_simulated(comm, sizes, options.nodes, params, options.limits), model)

    hosts = _core.host_names(comm)
    dev = open_device_if(comm_type != "cpu", comm, device_options, hosts)
    if comm_type == "iec":
        beff_iec.check_iec_device(comm, dev, hosts)
    sizing = calibration.resolve(comm, dev, hosts, options.chunk_bytes, options.slots, stages=comm_type in STAGED_TYPES)
    core.transfer = _core.TransferOptions(chunk_bytes=sizing.chunk_bytes, slots=sizing.slots)
    params["staging"] = comm.allgather({key: value for key, value in sizing.params().items() if key != "why"})
    ranks = comm.Get_size()
    ring_order = options.ring_order
    params.update(ranks=ranks, ring_order=ring_order if reduction == "hpcc" else "natural+random", seed=options.seed)
    env = environment.collect(comm, dev, hosts)
    plan = Rounds(comm, sizes, options.rounds, options.round_seed)
    loop_lengths = dict(zip(sizes, core.loop_lengths))
    results = []

    def finish(result: Result) -> Result:
        return _with_model(_rounds_headline(result, results, reduction, len(sizes)), model)

    with plan.keeping(results, finish):
        for index, order in enumerate(plan.orders(), start=1):
            core.sizes, core.loop_lengths = order, [loop_lengths[size] for size in order]
            rows, round_params = _ring_round(
                comm,
                dev,
                core,
                hosts,
                comm_type,
                reduction,
                ring_order,
                options.seed,
                options.random_rings,
                index if options.rounds > 1 else None,
                progress_of_round(on_progress, index, options.rounds),
            )
            results.append(
                Result("beff", {**params, **round_params, **_headline(rows, reduction, len(sizes))}, env, rows, _UNITS)
            )
        return finish(plan.of(results))


def _core_options(options: BeffOptions, device: DeviceOptions) -> tuple:
    """(the core's options of the run, validated, the loop-length rule):
    every value checked once, before any device opens (the agreed
    UsageError on every rank alike): the comm type by the core's parser
    and the fields the core holds (-n, --validation-iterations,
    --target-time) by its validate(), the others here."""
    comm_type = options.comm_type
    # sim runs on the simulator rather than the core's ring, and takes the same checks.
    # The fields the core holds by the same name pass as they are.
    core = schema.core_options(
        options, _core.BeffOptions, type="cpu" if comm_type == "sim" else comm_type, max_loop_length=options.upper
    )
    if options.reduction not in REDUCTIONS:
        raise usage_error(f"unknown reduction '{options.reduction}'; choose hpcc or rabenseifner")
    rule = options.loop_rule or ("hpcc" if comm_type == "cpu" else "adaptive")
    if rule not in LOOP_RULES:
        raise usage_error(f"unknown loop-length rule '{rule}'; choose {', '.join(LOOP_RULES)}")
    if options.model not in (None, *MODELS):
        raise usage_error(f"unknown b_eff model '{options.model}'; choose {', '.join(MODELS)}")
    core.sizes = message_sizes(options.min_size, options.max_size, options.step_size)
    exponents = [size.bit_length() - 1 for size in core.sizes]
    core.loop_lengths = _loop_lengths(
        rule, exponents, options.upper, options.lower, options.offset, options.decrease, options.channel_width
    )
    core.bank = device.bank
    core.transfer = _core.TransferOptions(chunk_bytes=options.chunk_bytes or 0, slots=options.slots or 1)
    core.validate()
    if options.nodes is not None and comm_type != "sim":
        raise usage_error(
            f"--nodes sets the FPGAs of the simulated ring (--comm-type sim); a {comm_type} ring has "
            "one node per rank: leave --nodes out, or start as many ranks"
        )
    if options.random_rings < 1:
        raise usage_error(f"--random-rings must be at least 1, got {options.random_rings}")
    check_rounds(options.rounds, options.round_seed)
    if comm_type == "sim" and options.rounds != 1:
        raise usage_error(
            f"the simulated ring (--comm-type sim) gives the same figures every time: leave --rounds "
            f"out, got {options.rounds}"
        )
    _check_ring_order(options.ring_order)
    return core, rule


def _rounds_headline(result: Result, rounds: list, reduction: str, sizes: int) -> Result:
    """With rounds: b_eff of the median rows, each round's in b_eff_rounds,
    and every round's rank timings (each marked with its round)."""
    if len(rounds) > 1 or "rounds" in result.params:
        result.params.update(
            _headline(result.rows, reduction, sizes),
            rank_timings=[timing for r in rounds for timing in r.params["rank_timings"]],
            b_eff_rounds=[r.params["b_eff"] for r in rounds],
        )
    return result


def _ring_round(
    comm,
    dev,
    options,
    hosts: list,
    comm_type: str,
    reduction: str,
    ring_order: str,
    seed: int,
    random_rings: int,
    round_number: int | None,
    on_progress: OnProgress | None,
) -> tuple[list, dict]:
    """One round of every ring the reduction takes, in options' order of
    the sizes: (rows, the round's params: rings, route, chunk and every
    rank's times, each marked with round_number where given)."""
    ranks = comm.Get_size()
    rows, rank_timings, rings, details = [], [], {}, {}
    patterns = _patterns(reduction, ring_order, seed, random_rings, ranks)
    for index, (name, order) in enumerate(patterns):
        with _channels(comm, comm_type, dev, order):
            options.ring = order
            raw = _core.run_beff(
                comm, dev, options, _size_counter(comm, on_progress, name, index, len(patterns), len(options.sizes))
            )
        rings[name] = order
        details = {"route": raw["route"], "chunk_bytes": raw["chunk_bytes"]}
        for timing in raw["sizes"]:
            time, bandwidth = _reduce(timing["size"], timing["loop_length"], timing["times"], ranks, reduction)
            rows.append(
                {
                    "pattern": name,
                    "size": timing["size"],
                    "loop_length": timing["loop_length"],
                    "time": time,
                    "bandwidth": bandwidth,
                    "pair_bandwidth": bandwidth / (ranks * EXCHANGES_PER_ITERATION),
                    "validation": "fail" if timing["errors"] else "pass",
                    "validation_errors": timing["errors"],
                }
            )
            for rank, times in enumerate(timing["times"]):
                rank_timings.append(
                    {
                        **({"round": round_number} if round_number else {}),
                        "pattern": name,
                        "size": timing["size"],
                        "rank": rank,
                        "host": hosts[rank],
                        "position": order.index(rank),
                        "times": times,
                    }
                )
    return rows, {
        "rings": rings,
        "validation_iterations": options.validation_iterations,
        **details,
        "rank_timings": rank_timings,
    }


def _size_counter(comm, on_progress: OnProgress | None, pattern: str, index: int, patterns: int, sizes: int):
    """The core's per-size hook telling on_progress how far the ring is, or None."""
    if on_progress is None or comm.Get_rank() != 0:
        return None
    done = itertools.count(1)
    ring = pattern if patterns == 1 else f"{pattern} ({index + 1} of {patterns} rings)"
    return lambda _row: on_progress(f"{ring}: {next(done)} of {sizes} sizes measured")


_UNITS = {
    "pattern": "",
    "size": "B",
    "loop_length": "",
    "time": "s",
    "bandwidth": "B/s",
    "pair_bandwidth": "B/s",
    "validation": "",
    "validation_errors": "B",
}


def _headline(rows: list, reduction: str, sizes: int) -> dict:
    """b_eff and how it was reduced, with the size count stated: HPCC FPGA's
    documents divide by 21, which holds only for the default range."""
    per_pattern = {}
    for row in rows:
        per_pattern.setdefault(row["pattern"], []).append(row["bandwidth"])
    means = {name: sum(values) / len(values) for name, values in per_pattern.items()}
    if reduction == "hpcc":
        value = means["ring"]
        how = f"arithmetic mean of B(m) over the {sizes} sizes run"
    else:
        random = [mean for name, mean in means.items() if name.startswith("random")]
        value = logavg([means["natural"], logavg(random)])
        how = (
            f"logavg(natural ring, logavg of {len(random)} random rings), each the mean of B(m) "
            f"over the {sizes} sizes run"
        )
    return {"b_eff": value, "b_eff_reduction": how, "b_eff_per_pattern": means}


def _channels(comm, comm_type: str, dev, order: list[int]):
    """Where the IEC kernels find their channels: the emulator's files, wired
    for this ring (beff_iec); a board's cables need nothing."""
    if comm_type == "iec" and dev.info.emulated:
        return beff_iec.emulated_channels(comm, order)
    return contextlib.nullcontext()


def _simulated(comm, sizes: list, nodes: int | None, params: dict, limits) -> Result:
    """The ring on the simulated 520N fabric: one exchange per size, so the
    loop length is 1 and the time is the slowest exchange's."""
    n = nodes if nodes is not None else max(3, comm.Get_size())
    simulated = fabric.beff_ring(fabric.beff_520n(n), sizes=sizes, limits=limits)
    rows = [
        {
            "pattern": "ring",
            "size": row["size"],
            "loop_length": 1,
            "time": row["time"],
            "bandwidth": row["aggregate"],
            "pair_bandwidth": row["pair_bandwidth"],
            "validation": None,
            "validation_errors": None,
        }
        for row in simulated.rows
    ]
    params.update(ranks=n, fabric="beff_520n", loop_rule="none (one simulated exchange per size)")
    params.update(_headline(rows, "hpcc", len(sizes)))
    return Result("beff", params, simulated.env, rows, _UNITS)


def _with_model(result: Result, model: str | None) -> Result:
    """The Result with a model_bandwidth column: the channel model's B(m)
    for the same ranks, N * R * b(L) (HPCC FPGA's network scaling)."""
    if model is None:
        return result
    from ..models.beff import ChannelModel

    channel = ChannelModel.bittware_520n()
    scale = result.params["ranks"] * EXCHANGES_PER_ITERATION
    rows = []
    for row in result.rows:
        row = dict(row)
        row["model_bandwidth"] = scale * float(channel.bandwidth(row["size"]))
        rows.append(row)
    result.params["model"] = model
    return Result(result.benchmark, result.params, result.env, rows, {**result.units, "model_bandwidth": "B/s"})


def failed_sizes(result: Result) -> list[int]:
    """Message sizes whose validation failed, on any ring."""
    return [row["size"] for row in result.rows if row["validation"] == "fail"]
