"""VCSN and the direct connection network (DCN) of the VCSN paper (Ueno et al.,
TRETS 2023): protocol efficiency (eq. 1, 2), the gather time models of
section 5.3 (eq. 3, 4, 5) and section 6.3 (eq. 7 with the MPI_Barrier model,
eq. 6, and its measured correction), the fat-tree level count, and the DCN
counterpart the VCSN paper builds from Fig. 11's procedure for Fig. 20.

One control procedure (`procedure`) serves the models and the simulator
(fpgacomm.gather_sim): the topology written once (VCSN) with a barrier, the
first crossbar set-up with a barrier, then per stage the transfer, the next
stage's set-up and a barrier closing both (section 6.3: "each data transfer
including the crossbar configuration for the next step"); with control
"local" (section 6.4) only the first set-up and its barriers remain.

docs/METHODS.md, "Gather models (VCSN, DCN)", states every formula.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _core, schedules
from ..params import parse_size
from ..results.result import Result
from .base import Fit, Model, usage_error

# --- protocol efficiency (section 4.2.2) ------------------------------------
LANE_RATE = 25.78125e9  # baud per lane, QSFP28
LANES = 4


def payload_bandwidth(payload: int, overhead: int, coding: float) -> float:
    """Payload bytes per second of 4 x 25.78125 Gbaud carrying frames of
    `payload` bytes and `overhead` bytes of framing, after line coding."""
    return LANE_RATE * LANES * payload / (payload + overhead) * coding / 8


# Eq. 1: SerialLite III bursts of 3968 bytes, 64 + 32 bytes of flow control, 64B/67B.
DCN_BANDWIDTH = payload_bandwidth(3968, 64 + 32, 64 / 67)
# Eq. 2: jumbo frames of 9152 bytes, preamble 8 + MAC header 14 + VCSN header
# 4 + FCS 4 + gap 12 bytes, 64B/66B.
VCSN_BANDWIDTH = payload_bandwidth(9152, 8 + 14 + 4 + 4 + 12, 64 / 66)

# --- Table 5, eq. 6 and the section 6.3 correction ---------------------------
TOPOLOGY = 1.24e-4  # t: MAC tables (and other registers) written
CROSSBAR = 1.35e-6  # c: crossbar configuration
LATENCY = {"vcsn": 8.47e-7, "dcn": 4.91e-7}  # l
BANDWIDTH = {"vcsn": VCSN_BANDWIDTH, "dcn": DCN_BANDWIDTH}  # b
BARRIER_PER_ROUND = 3.34e-5  # eq. 6: per ceil(log2 N) round
BARRIER_BASE = 5.84e-6  # eq. 6: constant
EXTRA_LONG = 210e-6  # correction after more than LONG_WORK of synchronised work
EXTRA_SHORT = 52e-6  # ... and after less
LONG_WORK = 500e-6
FPGAS_PER_SERVER = 2  # N = ceil(n / 2)
SWITCH_PORTS = 36  # section 6.3: 100 Gbps switches with 36 ports
FIG20_NODES = SWITCH_PORTS**3 // 4  # the largest three-level fat tree: 11664 FPGAs
MiB = 1 << 20


def servers(nodes: int) -> int:
    """N = ceil(n / 2): CPU servers synchronised for n FPGAs (section 6.3)."""
    return -(-int(nodes) // FPGAS_PER_SERVER)


def barrier_rounds(nodes: int) -> int:
    """ceil(log2 N) synchronised rounds of MPICH's barrier among N servers."""
    return math.ceil(math.log2(servers(nodes)))


def barrier_time(servers_count: int) -> float:
    """Eq. 6 as printed: T_barrier(N) = 3.34e-5 ceil(log2 N) + 5.84e-6 s."""
    return BARRIER_PER_ROUND * math.ceil(math.log2(servers_count)) + BARRIER_BASE


def fat_tree_levels(nodes: int, switch_ports: int = SWITCH_PORTS) -> int:
    """f: levels of a fat tree of k-port switches holding n FPGAs per plane:
    one switch up to k, leaf-spine up to k^2/2, three levels up to k^3/4
    (Al-Fares et al., the VCSN paper's [3] and Fig. 16)."""
    k = int(switch_ports)
    if k < 2 or k % 2:
        raise usage_error(f"vcsn model: a fat tree needs an even switch port count of at least 2, got {k}")
    for levels, capacity in ((1, k), (2, k * k // 2), (3, k**3 // 4)):
        if nodes <= capacity:
            return levels
    raise usage_error(
        f"vcsn model: {nodes} FPGAs exceed a three-level fat tree of {k}-port switches "
        f"({k ** 3 // 4}); give more switch ports"
    )


# --- section 5.3: the three candidate schedules (eq. 3, 4, 5) -----------------


def ring_time(n: int, d: float, *, t: float, c: float, l: float, b: float, p: float) -> float:
    """Eq. 3, a 1-D ring: t + ceil((n-1)/2) (c + l + d/b + p)."""
    return t + math.ceil((n - 1) / 2) * (c + l + d / b + p)


def tree_time(n: int, d: float, *, t: float, c: float, l: float, b: float, p: float) -> float:
    """Eq. 4, the virtual tree: t + ceil((n-1)/2) d/b + ceil((n-1)/4) (c + l + p)."""
    return t + math.ceil((n - 1) / 2) * d / b + math.ceil((n - 1) / 4) * (c + l + p)


def vlink_time(n: int, d: float, *, t: float, c: float, l: float, b: float, p: float) -> float:
    """Eq. 5, virtual links reconfigured: ceil((n-1)/4) t + ceil((n-1)/2) (c + l + d/b + p)."""
    return math.ceil((n - 1) / 4) * t + math.ceil((n - 1) / 2) * (c + l + d / b + p)


# --- the control procedure shared with the simulator --------------------------


def procedure(transfers, setups, *, setup_cost, barrier, control: str = "barrier") -> dict:
    """Per-stage set-up, transfer and barrier times of a staged gather.

    transfers: each stage's transfer time; setups: each stage's
    configuration steps ("topology", "crossbar", ...); setup_cost(step) its
    time; barrier(work) one barrier closing `work` seconds of synchronised
    work. Stage 1 carries the first set-up: the topology and its barrier,
    the crossbar and its barrier (eq. 7's "+ 2" barriers). Each stage ends
    with the next stage's set-up and a barrier closing both. control
    "local": stages run back to back, configured in advance (section 6.4).
    Returns lists "setup", "transfer", "barrier" (one float per stage)."""
    if control not in ("barrier", "local"):
        raise usage_error(f"gather control {control!r}; use 'barrier' or 'local'")
    count = len(transfers)
    setup, barriers = [0.0] * count, [0.0] * count
    if count:
        for step in setups[0]:
            cost = setup_cost(step)
            setup[0] += cost
            barriers[0] += barrier(cost)
    for s in range(count):
        if control == "local" or s + 1 == count:
            work_next = 0.0
        else:
            work_next = sum(setup_cost(step) for step in setups[s + 1])
            setup[s + 1] = work_next
        if control == "barrier":
            barriers[s] += barrier(transfers[s] + work_next)
    return {"setup": setup, "transfer": list(transfers), "barrier": barriers}


def stage_bytes(schedule) -> list:
    """D_s per stage: the most bytes any one physical port sends or receives
    in the stage (virtual ports of a port share it). A DCN link joins port
    q to its neighbour's port q^1; a VCSN virtual link stays on its plane.
    Worked out on the stages' runs, not their transfers, so that it costs
    O(runs^2) per stage at any node count."""
    ring = schedule.name == "ring"
    n = schedule.nodes
    result = []
    for stage in schedule.stages:
        # Per run and end: (which end, port, first node, node step, count, bytes per transfer).
        loads = []
        for run in stage.runs:
            moved = run.span * stage.block_bytes
            port = run.src_end[0]
            loads.append(("out", port, run.src, run.src_step, run.count, moved))
            loads.append(("in", port ^ 1 if ring else port, run.dst, run.dst_step, run.count, moved))
        # A sum of progressions peaks where one of them starts (or, for a
        # step other than 0 and +-1, at one of its nodes).
        candidates = set()
        for end, port, first, step, count, _ in loads:
            nodes = range(count) if step not in (0, 1, -1) else range(1)
            candidates.update((end, port, (first + i * step) % n) for i in nodes)
        result.append(
            max(
                (
                    sum(
                        moved * _hits(node, first, step, count, n)
                        for e, p, first, step, count, moved in loads
                        if (e, p) == (end, port)
                    )
                    for end, port, node in candidates
                ),
                default=0,
            )
        )
    return result


def _hits(node: int, first: int, step: int, count: int, nodes: int) -> int:
    """How many of first + i*step (i < count, mod nodes) are `node`."""
    if step == 0:
        return count if (node - first) % nodes == 0 else 0
    if step in (1, -1):
        return 1 if ((node - first) * step) % nodes < count else 0
    return sum((first + i * step) % nodes == node for i in range(count))


# --- eq. 7 and the DCN counterpart ------------------------------------------------


class GatherModel(Model):
    """Gather time of a staged schedule under the control procedure above.

    Per stage: transfer f l + D_s / b; set-up t (topology) and c (crossbar)
    as the schedule asks; barriers T_barrier(N) = barrier_round
    ceil(log2 N) + (barrier_long if the work it closes exceeds 500 us else
    barrier_short), N = ceil(n/2). Eq. 6 as printed: barrier_short =
    barrier_long = 5.84e-6 s; corrected (section 6.3): 5.84e-6 + 52e-6 and
    5.84e-6 + 210e-6 s (gather timings determine only these sums).

    predict(x): x rows (nodes, size) -> time of the model's own schedule
    (eq. 7's for VCSN, Fig. 11's for DCN)."""

    parameters = ("t", "c", "l", "b", "barrier_round", "barrier_short", "barrier_long")
    positive = ("b",)
    non_negative = ("t", "c", "l", "barrier_round", "barrier_short", "barrier_long")
    units = {"t": "s", "c": "s", "l": "s", "b": "B/s", "barrier_round": "s", "barrier_short": "s", "barrier_long": "s"}
    x_column = "size"
    y_column = "time"
    network = "vcsn"
    switch_ports = SWITCH_PORTS

    @classmethod
    def from_paper(cls, corrected: bool = True) -> GatherModel:
        """Table 5's values; corrected: with section 6.3's barrier correction."""
        short, long = (EXTRA_SHORT, EXTRA_LONG) if corrected else (0.0, 0.0)
        return cls(
            t=TOPOLOGY if cls.network == "vcsn" else 0.0,
            c=CROSSBAR,
            l=LATENCY[cls.network],
            b=BANDWIDTH[cls.network],
            barrier_round=BARRIER_PER_ROUND,
            barrier_short=BARRIER_BASE + short,
            barrier_long=BARRIER_BASE + long,
        )

    def barrier(self, nodes: int, work: float) -> float:
        constant = self.barrier_long if work > LONG_WORK else self.barrier_short
        return self.barrier_round * barrier_rounds(nodes) + constant

    def setup_cost(self, step: str) -> float:
        return {"topology": self.t, "crossbar": self.c}.get(step, 0.0)

    def stages(self, nodes: int, size: float) -> tuple:
        """(D_s per stage, set-up steps per stage) of the model's own schedule."""
        raise NotImplementedError

    def levels(self, nodes: int) -> int:
        return 1

    def breakdown(
        self,
        nodes: int,
        size: float,
        *,
        control: str = "barrier",
        schedule_stages: tuple | None = None,
        levels: int | None = None,
    ) -> dict:
        """Per-stage set-up, transfer, barrier (procedure above) and the
        total "time". schedule_stages: (D_s list, set-up steps list) of a
        real schedule (stage_bytes and its Stage.setup), else the model's own."""
        loads, setups = schedule_stages if schedule_stages is not None else self.stages(nodes, size)
        f = self.levels(nodes) if levels is None else levels
        parts = procedure(
            [f * self.l + load / self.b for load in loads],
            setups,
            setup_cost=self.setup_cost,
            barrier=lambda work: self.barrier(nodes, work),
            control=control,
        )
        parts["time"] = sum(sum(parts[key]) for key in ("setup", "transfer", "barrier"))
        return parts

    def time(self, nodes: int, size: float, **options) -> float:
        return self.breakdown(int(nodes), size, **options)["time"]

    def predict(self, x):
        x = np.atleast_2d(np.asarray(x, dtype=float))
        return np.array([self.time(int(n), d) for n, d in x])

    # ------------------------------------------------------------------ fit

    @classmethod
    def data(cls, result: Result) -> tuple:
        need = ("nodes", "size", "time")
        if any(column not in result.columns for column in need):
            raise usage_error(
                f"{cls.name} model needs columns {', '.join(need)}; "
                f"{result.benchmark} has {', '.join(result.columns)}"
            )
        sizes, times = cls.measured(result, "size", "time")  # text and impossible times refused
        if len(times) != len(result.rows):
            raise usage_error(f"{cls.name} model: {result.benchmark} has rows without a time; give complete rows")
        return np.column_stack([result.column("nodes"), sizes]), times

    @classmethod
    def fit(cls, result) -> Fit:
        """Weighted least squares of the set-up, transfer and barrier
        columns of a gather Result (contract columns schedule, nodes, size,
        stages, setup, transfer, barrier): each is linear in the parameters
        once each stage's schedule is known, so t, c come from the set-ups,
        l, 1/b from the transfers and the barrier coefficients from the
        barriers, all relative (sizes span decades), each by bounded least
        squares (no parameter below 0). A parameter the data cannot
        determine (t without a topology step, t apart from c or the
        barrier's slope at one node count, barrier_long where no barrier
        closes more than 500 us of work) is held at 0, undetermined, with
        the reason (Fit.held)."""
        rows, design, target = _fit_rows(cls, result)
        if len(rows) < 3:
            raise usage_error(f"{cls.name} model: fitting needs at least 3 gather rows, got {len(rows)}")
        # Unknowns t, c (set-ups), l, 1/b (transfers), barrier_round,
        # barrier_short, barrier_long (barriers): three separate linear
        # problems on separately measured columns, each with its own residual
        # variance (so no covariance between them). Within each, the
        # parameters are taken in the order given while they add to the
        # design's rank; one that does not (never exercised, or collinear
        # with those before it, as t with c at one node count) is held at 0,
        # its share folded into the others.
        values, held, blocks = [0.0] * len(cls.parameters), {}, {}
        for equation, order in enumerate(((1, 0), (3, 2), (5, 6, 4))):
            columns = sorted(order)
            names = [cls.parameters[j] for j in columns]
            y = target[equation::3]
            sigma = np.where(np.abs(y) > 0, np.abs(y), np.max(np.abs(y)) or 1.0)
            part = cls._linear(
                design[equation::3][:, columns],
                y,
                sigma,
                names,
                order=[columns.index(j) for j in order],
                unexercised=UNEXERCISED,
            )
            for name, value in zip(names, part.values):
                values[cls.parameters.index(name)] = float(value)
            held.update(part.held)
            blocks.update(
                {
                    (a, b): part.covariance[i, k]
                    for i, a in enumerate(part.estimated)
                    for k, b in enumerate(part.estimated)
                }
            )
        inverse_b = values[3]
        if "b" in held or inverse_b <= 0:
            raise usage_error(
                f"{cls.name} model: the transfers do not grow with the data size; " f"fit a sweep of sizes"
            )
        values[3] = 1 / inverse_b
        estimated = [p for p in cls.parameters if p not in held]
        # Delta method for b = 1 / (1/b): d b / d(1/b) = -b^2.
        factor = {p: -1 / inverse_b**2 if p == "b" else 1.0 for p in estimated}
        covariance = np.array(
            [[blocks.get((a, b), 0.0) * factor[a] * factor[b] for b in estimated] for a in estimated]
        ).reshape(len(estimated), len(estimated))
        stderr = {p: None for p in held}
        stderr.update({p: math.sqrt(max(covariance[i, i], 0.0)) for i, p in enumerate(estimated)})
        model = cls(**dict(zip(cls.parameters, values)))
        x, y = cls.data(result)
        x, y = x[rows], y[rows]
        residuals = y - np.array([model._row_time(result, i) for i in rows])
        weights = 1 / y**2
        mean = np.sum(weights * y) / np.sum(weights)
        total = float(np.sum(weights * (y - mean) ** 2))
        r_squared = 1 - float(np.sum(weights * residuals**2)) / total if total > 0 else 1.0
        return Fit(
            model,
            stderr,
            covariance,
            r_squared,
            x,
            y,
            residuals,
            True,
            {"source": result.benchmark},
            held={p: held[p] for p in cls.parameters if p in held},
        )

    def _row_time(self, result: Result, index: int) -> float:
        row = result.rows[index]
        loads, setups, levels, long = _row_schedule(result, row)
        return self.breakdown(
            row["nodes"],
            row["size"],
            control=result.params.get("control", "barrier"),
            schedule_stages=(loads, setups),
            levels=levels,
        )["time"]

    # -------------------------------------------------------------- compare

    def against(self, result, *, stages: str = "schedule") -> Result:
        """Table 6's layout: one row per data size, per node count the
        relative error ``|model - measured|`` / measured of this model
        ("corrected") and of the same without section 6.3's correction
        ("original"). stages "schedule": each row's own schedule where the
        Result names one (gather Results; mpi rows are left out), else the
        model's own; "model": the model's own (eq. 7's or Fig. 11's)."""
        if stages not in ("schedule", "model"):
            raise usage_error(f"{self.name} model: against stages {stages!r}; use 'schedule' or 'model'")
        x, y = self.data(result)
        original = type(self)(
            **{
                **self.params,
                "barrier_short": self.barrier_short - EXTRA_SHORT,
                "barrier_long": self.barrier_long - EXTRA_LONG,
            }
        )
        own = stages == "schedule" and "schedule" in result.columns
        errors = {}
        for index, ((n, d), measured) in enumerate(zip(x, y)):
            if own and result.rows[index]["schedule"] == "mpi":
                continue
            for label, model in (("original", original), ("corrected", self)):
                time = model._row_time(result, index) if own else model.time(int(n), d)
                errors[(label, int(n), int(d))] = abs(time - measured) / measured
        nodes = sorted({n for _, n, _ in errors})
        sizes = sorted({d for _, _, d in errors}, reverse=True)
        rows, units = [], {"size": "B"}
        for d in sizes:
            row = {"size": d}
            for label in ("original", "corrected"):
                for n in nodes:
                    row[f"{label}_{n}"] = errors.get((label, n, d))
                    units[f"{label}_{n}"] = ""
            rows.append(row)
        return Result(
            f"fit_{self.name}",
            {
                "model": self.name,
                "source": result.benchmark,
                "stages": stages,
                "nodes": nodes,
                "y_column": "time",
                "error": TABLE_6_ERROR,
                **self.params,
            },
            {},
            rows,
            units,
        )


class VcsnGather(GatherModel):
    """Eq. 7 as printed (the VCSN paper section 6.3): ceil((n-1)/4) stages, each
    moving 2d per physical port of the root,
    T = t + S (c + f l + 2d/b) + (S + 2) T_barrier(ceil(n/2)),
    f the fat-tree levels of 36-port switches."""

    name = "vcsn"
    network = "vcsn"

    def stages(self, nodes, size):
        count = math.ceil((nodes - 1) / 4)
        return [2 * size] * count, [("topology", "crossbar")] + [("crossbar",)] * (count - 1)

    def levels(self, nodes):
        return fat_tree_levels(nodes, self.switch_ports)


class DcnGather(GatherModel):
    """The DCN counterpart (Fig. 11's procedure on a 1-D ring): no topology,
    ceil((n-1)/2) stages of one block per link,
    T = S (c + l + d/b) + (S + 1) T_barrier(ceil(n/2))."""

    name = "dcn"
    network = "dcn"

    def stages(self, nodes, size):
        count = math.ceil((nodes - 1) / 2)
        return [size] * count, [("crossbar",)] * count


MODELS = {"vcsn": VcsnGather, "dcn": DcnGather}
# What the cells of `against` hold (Table 6's layout).
TABLE_6_ERROR = (
    "each cell |model - measured| / measured at the column's node count, the model with section 6.3's "
    "barrier correction (corrected) and without it (original)"
)
# Why a parameter's column is empty in a gather fit: what the rows never did.
UNEXERCISED = {
    "t": "no row's schedule writes the topology (a ring's never does)",
    "c": "no row's schedule configures a crossbar",
    "l": "no row's stages cross a link",
    "barrier_round": "every row synchronises one server, where eq. 6 has no per-round term",
    "barrier_short": f"every barrier closes more than {LONG_WORK * 1e6:.0f} us of work",
    "barrier_long": f"no barrier closes more than {LONG_WORK * 1e6:.0f} us of work, the correction section 6.3 "
    "measured for longer work",
}


def _row_schedule(result: Result, row: dict) -> tuple:
    """(D_s, set-ups, fat-tree levels, long-barrier flags) of one gather row,
    rebuilt from the schedule the row names (schedules.schedule)."""
    params = result.params
    if row.get("schedule") == "mpi":
        raise usage_error("vcsn model: the mpi schedule has no stage model; fit ring, tree or vlink rows")
    schedule = schedules.schedule(
        row["schedule"],
        int(row["nodes"]),
        int(row["size"]),
        ports=int(params.get("ports", 2)),
        virtual_ports=int(params.get("virtual_ports", 2)),
        collective=params.get("collective", "gather"),
        root=int(params.get("root", 0)),
        broadcast=bool(params.get("broadcast", True)),
    )
    levels = int(row.get("levels") or params.get("levels", 1))  # simulated rows say; real ones: one switch
    key = f"{row['nodes']}/{row['size']}"
    samples = result.samples or {}
    transfers = samples.get(f"{key}/transfer")
    setups_measured = samples.get(f"{key}/setup")
    long = None
    if transfers and setups_measured and len(transfers) == len(schedule.stages):
        # Stage s's barrier closes its transfer and the next stage's set-up.
        long = [
            transfers[s] + (setups_measured[s + 1] if s + 1 < len(transfers) else 0.0) > LONG_WORK
            for s in range(len(transfers))
        ]
    return stage_bytes(schedule), [stage.setup for stage in schedule.stages], levels, long


def _fit_rows(cls, result: Result) -> tuple:
    """Rows used, and the stacked design (three equations per row: set-up,
    transfer, barrier) in t, c, l, 1/b, barrier_round, barrier_short,
    barrier_long."""
    need = ("schedule", "nodes", "size", "stages", "setup", "transfer", "barrier")
    if not isinstance(result, Result) or any(column not in result.columns for column in need):
        have = ", ".join(result.columns) if isinstance(result, Result) else type(result).__name__
        raise usage_error(
            f"{cls.name} model: fitting needs a gather Result with columns {', '.join(need)}; " f"got {have}"
        )
    control = result.params.get("control", "barrier")
    prior = cls.from_paper()
    used, design, target = [], [], []
    for index, row in enumerate(result.rows):
        if row["schedule"] == "mpi":
            continue
        loads, setups, levels, long = _row_schedule(result, row)
        count = len(loads)
        rounds = barrier_rounds(row["nodes"])
        if long is None:  # no per-stage samples: classify by Table 5's prediction
            predicted = prior.breakdown(row["nodes"], row["size"], schedule_stages=(loads, setups), levels=levels)
            setup_next = predicted["setup"][1:] + [0.0]
            long = [predicted["transfer"][s] + setup_next[s] > LONG_WORK for s in range(count)]
        topology = (
            sum(steps.count("topology") for steps in setups) if control == "barrier" else setups[0].count("topology")
        )
        crossbar = (
            sum(steps.count("crossbar") for steps in setups) if control == "barrier" else setups[0].count("crossbar")
        )
        first = len(setups[0])  # every first set-up step has its barrier
        closing = count if control == "barrier" else 0
        long_count = sum(long) if control == "barrier" else 0
        design += [
            [topology, crossbar, 0, 0, 0, 0, 0],
            [0, 0, count * levels, sum(loads), 0, 0, 0],
            [0, 0, 0, 0, (first + closing) * rounds, first + closing - long_count, long_count],
        ]
        target += [row["setup"], row["transfer"], row["barrier"]]
        used.append(index)
    return used, np.array(design, dtype=float), np.array(target, dtype=float)


# --- Fig. 20: the large-cluster estimate ---------------------------------------


def estimate(nodes=None, sizes=None, *, corrected: bool = True) -> Result:
    """Fig. 20: eq. 7 (VCSN) and its DCN counterpart with Table 5's values
    for large clusters; per node count and data size the two times and
    DCN / VCSN."""
    nodes = list(nodes) if nodes is not None else [16, 64, 256, 1024, 4096, FIG20_NODES]
    sizes = list(sizes) if sizes is not None else [64 << 10, MiB, 16 * MiB, 256 * MiB]
    vcsn, dcn = VcsnGather.from_paper(corrected), DcnGather.from_paper(corrected)
    rows = []
    for n in nodes:
        if not isinstance(n, int) or n < 2:
            raise usage_error(f"vcsn model: node count {n!r}; give whole numbers of 2 or more")
        for d in sizes:
            v, c = vcsn.time(n, d), dcn.time(n, d)
            rows.append({"nodes": n, "size": int(d), "levels": vcsn.levels(n), "vcsn": v, "dcn": c, "ratio": c / v})
    return Result(
        "vcsn_estimate",
        {"model": "vcsn", "corrected": corrected, "switch_ports": SWITCH_PORTS},
        {},
        rows,
        {"nodes": "", "size": "B", "levels": "", "vcsn": "s", "dcn": "s", "ratio": ""},
    )


# --- the registered module (fpgacomm model vcsn / fpgacomm fit --model vcsn) -----

OPTIONS = {
    "nodes": (str, "", "FPGA counts for gather times, comma-separated, e.g. 4,9,16 (none: bandwidths only)"),
    "sizes": (str, "64K,1M,16M,256M", "data per node for gather times, comma-separated, K/M/G binary"),
    "barrier": (str, "corrected", "'corrected' (section 6.3) or 'printed' (eq. 6 as printed)"),
}


def _numbers(text: str, what: str) -> list:
    """Comma-separated whole numbers, K/M/G binary suffixes allowed (the CLI's size syntax)."""
    values = []
    for item in filter(None, (part.strip() for part in str(text).split(","))):
        try:
            values.append(parse_size(item))
        except _core.UsageError:
            raise usage_error(
                f"vcsn model: {what} {item!r}; give whole numbers separated by commas " f"(sizes may end in K, M or G)"
            ) from None
    return values


def predictions(nodes: str = "", sizes: str = "64K,1M,16M,256M", barrier: str = "corrected") -> Result:
    """What `fpgacomm model vcsn` prints: the DCN and VCSN payload
    bandwidths (eq. 1, 2) and, for each node count and size given, the
    gather times of eq. 7 and the DCN counterpart (figure, value, unit rows)."""
    if barrier not in ("corrected", "printed"):
        raise usage_error(f"vcsn model: barrier {barrier!r}; use 'corrected' or 'printed'")
    rows = [
        ("DCN payload bandwidth, eq. 1", DCN_BANDWIDTH, "B/s"),
        ("VCSN payload bandwidth, eq. 2", VCSN_BANDWIDTH, "B/s"),
    ]
    counts = _numbers(nodes, "node count")
    if counts:
        for row in estimate(counts, _numbers(sizes, "size"), corrected=barrier == "corrected").rows:
            where = f"{row['nodes']} nodes, {row['size']} B per node"
            rows += [
                (f"VCSN gather time (eq. 7), {where}", row["vcsn"], "s"),
                (f"DCN gather time (counterpart), {where}", row["dcn"], "s"),
                (f"DCN / VCSN, {where}", row["ratio"], ""),
            ]
    return Result(
        "model_vcsn",
        {"model": "vcsn", "barrier": barrier},
        {},
        [{"figure": f, "value": float(v), "unit": u} for f, v, u in rows],
        {"figure": "", "value": "", "unit": ""},
    )


def fit(result: Result) -> Fit:
    """Fits the DCN counterpart to ring rows on a DCN, eq. 7's procedure to the rest."""
    fabric = str(result.params.get("fabric", "")) if isinstance(result, Result) else ""
    names = set(result.column("schedule")) if isinstance(result, Result) and "schedule" in result.columns else set()
    model = DcnGather if fabric.startswith("dcn") or names == {"ring"} else VcsnGather
    return model.fit(result)
