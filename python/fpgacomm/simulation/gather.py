"""Gathers on the simulated fabric: the Schedule objects of fpgacomm.schedules,
the same ones the real runner (fpgacomm.gather) executes, run on the VCSN paper's fabric presets.

The fabric simulator (src/fabric) times every stage's transfers frame by
frame, stages one after another; the host's control around them (topology
t, crossbar c, the barriers of eq. 6 with section 6.3's correction, from the
preset's host costs) follows each stage's own set-up steps through
models.vcsn.procedure, the procedure the models share. Each row sets the
simulated time beside the model with the schedule's own stages (`model`)
and eq. 7 as printed (`model_printed`); docs/METHODS.md says why they
differ.

    >>> from fpgacomm import gather_sim
    >>> gather_sim.run("tree", "vcsn", nodes=[9], sizes=[1 << 20]).rows[0]["time"]
"""

from __future__ import annotations

from .. import _core, schedules
from ..models import vcsn
from ..results.result import Result
from ..runtime.interrupts import Interrupted
from . import fabric as fabrics  # run() takes the preset's name as `fabric`
from . import mpi_library, resources

KiB, MiB = 1 << 10, 1 << 20
# Table 6: 64 KiB to 256 MiB per node, in powers of two.
TABLE6_SIZES = tuple(64 * KiB << k for k in range(13))
# Which schedule runs on which preset: the DCN ring carries the ring (a
# VCSN can too: eq. 3); the tree and virtual links need VCSN's virtual
# ports; MPI_Gather goes over the host path. MPI ranks of a cluster run
# every schedule, as the real runner does (fpgacomm.gather).
FABRICS = {
    "ring": ("dcn_ring", "vcsn", "cluster"),
    "tree": ("vcsn", "vcsn_fat_tree", "cluster"),
    "vlink": ("vcsn", "vcsn_fat_tree", "cluster"),
    "mpi": ("host_path", "cluster"),
}
OWN_SCHEDULE = {"dcn_ring": "ring", "vcsn": "tree", "vcsn_fat_tree": "tree", "host_path": "mpi", "cluster": "mpi"}
# The gather models of the VCSN paper, per preset they describe (none for MPI).
MODELS = {
    "dcn_ring": vcsn.DcnGather.from_paper,
    "vcsn": vcsn.VcsnGather.from_paper,
    "vcsn_fat_tree": vcsn.VcsnGather.from_paper,
}
COST_FIELDS = (
    "crossbar_setup",
    "topology_reconfiguration",
    "interrupt",
    "barrier_per_round",
    "barrier_base",
    "barrier_extra_long",
    "barrier_extra_short",
    "long_work_threshold",
    "fpgas_per_server",
)

UNITS = {
    "schedule": "",
    "nodes": "",
    "size": "B",
    "stages": "",
    "time": "s",
    "throughput": "B/s",
    "setup": "s",
    "transfer": "s",
    "barrier": "s",
    "levels": "",
    "model": "s",
    "model_printed": "s",
    "events": "",
    "events_simulated": "",
    "events_estimated": "",
}


def sized(fabric, nodes: int, ports: int = 2, virtual_ports: int = 2) -> fabrics.Fabric:
    """The fabric (a preset's name, a platform file or a Fabric) with `nodes`
    nodes and the gather's ports and virtual ports where the preset has them."""
    return fabrics.resized(fabrics.platform_or_preset(fabric), nodes, ports=ports, virtual_ports=virtual_ports)


def _check(schedule: str, fabric_name: str, nodes, sizes, ports: int, control: str, collective: str) -> tuple:
    schedules.check_names(schedule, collective)
    if fabric_name not in FABRICS[schedule]:
        pairs = "; ".join(f"{s} on {' or '.join(f)}" for s, f in FABRICS.items())
        raise _core.UsageError(
            f"gather_sim: schedule {schedule} does not run on fabric {fabric_name!r}; " f"the pairs are {pairs}"
        )
    if schedule == "ring" and fabric_name == "dcn_ring" and ports != 2:
        # gather.py's ring with 4 ports has arms along a second ring dimension.
        raise _core.UsageError(
            f"gather_sim: dcn_ring is a 1-D ring (ports/2 parallel links to each neighbour), "
            f"and the ring schedule with {ports} ports needs a second ring dimension; give "
            f"ports=2, or run the ring on vcsn"
        )
    schedules.check_control(control)
    return schedules.node_counts(nodes), schedules.block_sizes(sizes, simulated=True)


def fabric_stages(schedule: schedules.Schedule, one_path: bool = False) -> list:
    """The schedule's stages as the simulator takes them: per stage its
    runs, (count, src, src_step, dst, dst_step, bytes, physical port,
    virtual port), expanded by the simulator itself. one_path: the nodes
    have one path each (MPI ranks of a cluster), and the schedule's arms
    over several ports and virtual ports are concurrent messages on it."""
    n = schedule.nodes
    return [
        [
            (
                run.count,
                run.src % n,
                run.src_step,
                run.dst % n,
                run.dst_step,
                run.span * schedule.block_bytes,
                *((0, 0) if one_path else run.src_end),
            )
            for run in stage.runs
        ]
        for stage in schedule.stages
    ]


def stages_on(schedule: schedules.Schedule, fab: fabrics.Fabric) -> list:
    """fabric_stages for the fabric `fab`: one path per node on a cluster."""
    return fabric_stages(schedule, one_path=fab.spec.topology == "cluster")


def mpi_algorithm(schedule: schedules.Schedule, fab: fabrics.Fabric) -> str | None:
    """The algorithm the cluster's MPI library runs for the mpi schedule's
    call (MPI_Gatherv, _Scatterv, _Allgatherv: simulation/mpi_library.py);
    None elsewhere (the other schedules, and host_path's MPI, which keeps
    every block at once)."""
    if schedule.name != "mpi" or fab.name != "cluster":
        return None
    call = mpi_library.SCHEDULE_CALLS[schedule.collective]
    return mpi_library.algorithm(fab.arguments["mpi_library"], call, schedule.nodes, schedule.block_bytes)


def mpi_steps(schedule: schedules.Schedule, fab: fabrics.Fabric) -> list | None:
    """The mpi schedule's single stage as the messages of its MPI algorithm,
    relabelled to the schedule's root; None where the schedule's own stages run."""
    name = mpi_algorithm(schedule, fab)
    if name is None:
        return None
    steps = mpi_library.stages(
        name, schedule.collective, schedule.nodes, schedule.block_bytes, fab.arguments["eager_threshold"]
    )
    if steps is None or not schedule.root:
        return steps
    n, root = schedule.nodes, schedule.root
    return [[(c, (s + root) % n, ss, (d + root) % n, ds, *rest) for c, s, ss, d, ds, *rest in runs] for runs in steps]


def simulate(
    schedule: schedules.Schedule,
    fab: fabrics.Fabric,
    *,
    control: str = "barrier",
    reuse: bool = True,
    fast_forward: bool = True,
) -> dict:
    """One schedule on one fabric: per-stage "setup", "transfer", "barrier"
    (lists), "time", the simulator's "events" (of the full simulation),
    "events_simulated", "groups", "distinct_groups", "reuse" and
    "reuse_note". The simulator times the transfers alone (its host costs
    zeroed, stages back to back, each from an empty network); the control
    follows the stages' set-up steps with the preset's costs. reuse:
    simulate each distinct group of independent transfers once
    (bit-identical times); with control "local" the stages of a real run
    may overlap, so they are simulated in full whatever reuse says.
    fast_forward: jump through long streams' steady state by whole periods
    (bit-identical times; False: every frame stepped)."""
    if schedule.nodes != fab.nodes:
        raise _core.UsageError(f"gather_sim: the schedule has {schedule.nodes} nodes, {fab.name} {fab.nodes}")
    if any("broadcast" in stage.setup for stage in schedule.stages):
        raise _core.UsageError(
            "gather_sim: the simulated fabrics have no switch broadcast; build the allgather "
            "with gather.schedule(..., broadcast=False) (a ring allgather)"
        )
    note = ""
    if reuse and control == "local":
        reuse, note = False, "control local: stages may overlap, so every stage was simulated in full"
    costs = fab.spec.host_costs
    saved = {key: getattr(costs, key) for key in COST_FIELDS}
    for key in COST_FIELDS[:-1]:
        setattr(costs, key, 0.0)
    steps = mpi_steps(schedule, fab)
    try:
        simulated = fabrics.run_schedule(
            fab,
            stages_on(schedule, fab) if steps is None else steps,
            reconfigure=False,
            reuse=reuse,
            details=False,
            fast_forward=fast_forward,
        )
    finally:
        for key, value in saved.items():
            setattr(costs, key, value)
    # The interrupt tells the host its stage's writes are done (0 in the presets).
    transfers = [row["transfer"] + costs.interrupt for row in simulated.rows[1:]]
    if steps is not None:  # the MPI call's messages, one after another, are the schedule's one stage
        transfers = [sum(transfers)]
    servers = -(-fab.nodes // costs.fpgas_per_server)  # N = ceil(n / 2) with two FPGAs per server
    step_cost = {"topology": costs.topology_reconfiguration, "crossbar": costs.crossbar_setup}
    parts = vcsn.procedure(
        transfers,
        [stage.setup for stage in schedule.stages],
        setup_cost=lambda step: step_cost.get(step, 0.0),
        barrier=lambda work: costs.barrier(servers, work),
        control=control,
    )
    parts["time"] = sum(sum(parts[key]) for key in ("setup", "transfer", "barrier"))
    for key in ("events", "events_simulated", "groups", "distinct_groups", "mean_depth", "fast_forwards"):
        parts[key] = simulated.params[key]
    parts["reuse"] = simulated.params["reuse"]
    parts["reuse_note"] = note or simulated.params["reuse_note"]
    return parts


def estimate(
    schedule: str,
    fabric,
    nodes: int,
    size: int,
    *,
    ports: int = 2,
    virtual_ports: int = 2,
    collective: str = "gather",
    reuse: bool = True,
    fast_forward: bool = True,
) -> resources.Estimate:
    """What one point of run() will take (resources.estimate_gather on the
    fabric's spec), worked out without building anything that grows with n."""
    return resources.estimate_gather(
        schedule,
        sized(fabric, nodes, ports, virtual_ports).spec,
        size,
        ports=ports,
        virtual_ports=virtual_ports,
        collective=collective,
        reuse=reuse,
        fast_forward=fast_forward,
    )


def run(
    schedule: str | None = None,
    fabric="vcsn",
    nodes=(4, 9, 16),
    sizes=TABLE6_SIZES,
    *,
    ports: int = 2,
    virtual_ports: int = 2,
    control: str = "barrier",
    collective: str = "gather",
    reuse: bool = True,
    fast_forward: bool = True,
    limits: resources.Limits | None = None,
    on_progress=None,
) -> Result:
    """Simulated gathers (scatters, allgathers) of `schedule` on `fabric` (a
    preset's name, a platform file or a Fabric), one row per (nodes, size):
    the contract's gather columns with the fat-tree levels, `model`
    (models.vcsn with the schedule's own
    stages: eq. 7's procedure with Table 5's VCSN values, or the DCN
    counterpart's on dcn_ring), `model_printed` (eq. 7 as printed, or the
    DCN counterpart, with the same barrier model) and the simulator's event
    count. Allgathers are ring allgathers: the fabrics cannot broadcast.
    schedule None: the fabric's own (ring on dcn_ring, tree on vcsn and
    vcsn_fat_tree, mpi on host_path and cluster). reuse: simulate each
    distinct group of independent transfers once (the same times to the bit; False: every
    stage in full; control "local" always simulates in full). fast_forward:
    jump through long streams' steady state (the same times to the bit;
    False: every frame stepped). limits:
    what the run may take (resources.Limits); every point is
    estimated before anything is built, and one too large is refused.
    on_progress: called with how far the run is as each point begins and
    ends (otherwise long runs print their progress on stderr)."""
    # A preset's name is checked before anything is built; a platform file is read first.
    template = (
        None
        if isinstance(fabric, str) and not fabrics.is_platform_file(fabric)
        else (fabrics.platform_or_preset(fabric))
    )
    fabric_name = fabric if template is None else template.name
    if schedule is None:
        schedule = OWN_SCHEDULE.get(fabric_name, "tree")
    nodes, sizes = _check(schedule, fabric_name, nodes, sizes, ports, control, collective)
    template = template or fabrics.platform_or_preset(fabric_name)
    reuse_here = reuse and control != "local"
    # A preset is its spec alone: every point is estimated before any topology is built.
    estimates = {
        (n, d): resources.check(
            estimate(
                schedule,
                template,
                n,
                d,
                ports=ports,
                virtual_ports=virtual_ports,
                collective=collective,
                reuse=reuse_here,
                fast_forward=fast_forward,
            ),
            limits,
        )
        for n in nodes
        for d in sizes
    }
    progress = resources.Progress("gather_sim", len(estimates), show=on_progress)
    rows, samples = [], {}
    model = MODELS[fabric_name]() if fabric_name in MODELS else None
    params = {
        "schedule": schedule,
        "collective": collective,
        "control": control,
        "fabric": fabric_name,
        "ports": ports,
        "virtual_ports": virtual_ports,
        "broadcast": False,
        "reuse": reuse_here,
        "reuse_note": "",
        "fast_forward": bool(fast_forward),
        "model": model.name if model else None,
        "model_params": dict(model.params) if model else {},
        "topologies": {},
    }
    try:
        for n in nodes:
            fab = sized(template, n, ports, virtual_ports)
            built = fab.describe()
            levels = max(1, int(built["levels"]))  # f of eq. 7: one switch (VCSN) or one link (DCN) is 1
            described = fab.params()
            params.update(
                host_costs=described["host_costs"],
                fabric_arguments=described["fabric_arguments"],
                provenance=described["provenance"],
            )
            params["topologies"][str(n)] = built["topology"]
            for d in sizes:
                progress.begin(f"{n} nodes, {d} bytes", estimates[(n, d)])
                plan = schedules.schedule(
                    schedule, n, d, ports=ports, virtual_ports=virtual_ports, collective=collective, broadcast=False
                )
                parts = simulate(plan, fab, control=control, reuse=reuse, fast_forward=fast_forward)
                if mpi_algorithm(plan, fab) is not None:
                    params.setdefault("mpi_algorithms", {})[f"{n}/{d}"] = mpi_algorithm(plan, fab)
                modelled = printed = None
                if model is not None and schedule != "mpi":  # MPI has no stage model
                    own = (vcsn.stage_bytes(plan), [stage.setup for stage in plan.stages])
                    modelled = model.time(n, d, control=control, schedule_stages=own, levels=levels)
                    if collective != "allgather":
                        printed = model.time(n, d, control=control, levels=levels)
                for key in ("setup", "transfer", "barrier"):
                    samples[f"{n}/{d}/{key}"] = parts[key]
                rows.append(
                    {
                        "schedule": schedule,
                        "nodes": n,
                        "size": d,
                        "stages": len(plan.stages),
                        "time": parts["time"],
                        "throughput": (n - 1) * d / parts["time"],
                        "setup": sum(parts["setup"]),
                        "transfer": sum(parts["transfer"]),
                        "barrier": sum(parts["barrier"]),
                        "levels": levels,
                        "model": modelled,
                        "model_printed": printed,
                        "events": parts["events"],
                        "events_simulated": parts["events_simulated"],
                        "events_estimated": estimates[(n, d)].events,
                    }
                )
                params.update(reuse=parts["reuse"], reuse_note=parts["reuse_note"])
                progress.step(f"{n} nodes, {d} bytes")
    except Interrupted as stop:
        # As a real sweep does: the points finished so far, marked incomplete.
        stop.result = Result("gather_sim", params, fabrics._env(), rows, UNITS, samples)
        stop.result.incomplete = f"{stop}: {len(rows)} of {len(estimates)} points simulated"
        raise
    return Result("gather_sim", params, fabrics._env(), rows, UNITS, samples)


FIG20_NODES = (16, 64, 256, 1024, 4096, vcsn.FIG20_NODES)
FIG20_SIZES = (64 * KiB, 256 * MiB)


def fig20(nodes=FIG20_NODES, sizes=FIG20_SIZES, *, limits: resources.Limits | None = None) -> Result:
    """Fig. 20 of the VCSN paper by simulation: the DCN ring gather on
    dcn_ring and the VCSN tree gather on vcsn_fat_tree (36-port switches)
    at each cluster size and data size, their ratio DCN / VCSN, and beside
    them the paper's estimate (models.vcsn.estimate: eq. 7 and the DCN
    counterpart with Table 5's values). Every point is estimated first
    (limits): one too large for this machine is refused before any runs."""
    nodes, sizes = list(nodes), list(sizes)
    for schedule, preset in (("ring", "dcn_ring"), ("tree", "vcsn_fat_tree")):
        for n in nodes:
            for d in sizes:
                resources.check(estimate(schedule, preset, n, d), limits)
    dcn = run("ring", "dcn_ring", nodes, sizes, limits=limits)
    tree = run("tree", "vcsn_fat_tree", nodes, sizes, limits=limits)
    model = {(row["nodes"], row["size"]): row for row in vcsn.estimate(nodes, sizes).rows}
    rows = []
    for ring_row, tree_row in zip(dcn.rows, tree.rows):
        key = (ring_row["nodes"], ring_row["size"])
        rows.append(
            {
                "nodes": key[0],
                "size": key[1],
                "levels": tree_row["levels"],
                "dcn": ring_row["time"],
                "vcsn": tree_row["time"],
                "ratio": ring_row["time"] / tree_row["time"],
                "model_dcn": model[key]["dcn"],
                "model_vcsn": model[key]["vcsn"],
                "model_ratio": model[key]["ratio"],
                "events": ring_row["events"] + tree_row["events"],
                "events_simulated": ring_row["events_simulated"] + tree_row["events_simulated"],
                "events_estimated": ring_row["events_estimated"] + tree_row["events_estimated"],
            }
        )
    return Result(
        "gather_sim_fig20",
        {
            "dcn": "ring on dcn_ring",
            "vcsn": "tree on vcsn_fat_tree",
            "switch_ports": vcsn.SWITCH_PORTS,
            "control": "barrier",
        },
        fabrics._env(),
        rows,
        {
            "nodes": "",
            "size": "B",
            "levels": "",
            "dcn": "s",
            "vcsn": "s",
            "ratio": "",
            "model_dcn": "s",
            "model_vcsn": "s",
            "model_ratio": "",
            "events": "",
            "events_simulated": "",
            "events_estimated": "",
        },
    )
