"""`fpgacomm predict`: a platform's predicted times at any rank count, each
with its 95 % interval (docs/PREDICTION.md, "The interval")::

    time = simulated(fitted parameters, a rank's own terms scaled by the
                     discrepancy factor of the size at the largest
                     calibrated rank count and slowed by its host's busy
                     cores, experiments.core_speed)
    log-sd = sqrt(sd of log simulated over the parameter draws ^ 2
                  + scatter between launches ^ 2 + (model-form term * reach) ^ 2)
    low, high = time * exp(-/+ 1.96 log-sd)

The factor (per size), scatter and model-form term come from the platform
file's calibration record (calibrate fit), per experiment and schedule;
reach counts how far past the calibrated rank counts the prediction lies,
in steps of the cross-validation (the factors at the next-to-largest count
checked at the largest): 1 up to one such step, 2 at two (8 ranks
calibrated, 4 -> 8 checked: 2 at 32 ranks).
"""

from __future__ import annotations

import math
import time as clock

import numpy as np

from ..params import byte_sizes, usage_error
from ..results import kinds
from ..results.result import Result
from ..simulation import fabric as fabrics
from .experiments import bus_rates, check, record_key, simulate
from .fit import Z95, factor_at

DRAWS = 200
BUDGET = 50.0  # seconds the draws may take before they are propagated linearly
UNITS = {
    "experiment": "",
    "schedule": "",
    "collective": "",
    "nodes": "",
    "size": "B",
    "time": "s",
    "low": "s",
    "high": "s",
    "simulated": "s",
    "draws": "",
}


def load(platform) -> tuple[fabrics.Fabric, dict]:
    """(the platform's Fabric, its calibration record or {}): from a path, a preset's name or a Fabric."""
    fab = platform if isinstance(platform, fabrics.Fabric) else fabrics.platform_or_preset(platform)
    return fab, fab.calibration


def _nodes(nodes) -> list[int]:
    nodes = [nodes] if isinstance(nodes, int) else list(nodes)
    if not nodes:
        raise usage_error("predict: give at least one rank count (--nodes 16,32)")
    for n in nodes:
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise usage_error(f"predict: rank count {n!r}; give whole numbers of 2 or more (--nodes 16,32,1024)")
    return nodes


def predict(
    platform,
    experiment: str = "gather",
    schedule: str = "tree",
    nodes=(16, 32),
    sizes=(1 << 20,),
    *,
    collective: str = "gather",
    draws: int = DRAWS,
    budget: float = BUDGET,
    say=print,
) -> Result:
    """Predicted times of `experiment` (gather, beff, mbw_mr) on `platform`
    (a platform file, a preset's name or a Fabric) at each rank count and
    size (bytes per node, a list, one size or "MIN:MAX" doubling), with the
    95 % interval from `draws` of the platform's parameter draws, the
    scatter between launches and the model-form term. Where the draws would take
    longer than `budget` seconds, they are propagated through the
    simulator's sensitivities (one simulation per drawn parameter) and
    `say` tells why."""
    check(experiment, schedule, collective)
    nodes = _nodes(nodes)
    sizes = byte_sizes(sizes, "predict: size per node", smallest=1)
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 0:
        raise usage_error(f"predict: draws {draws!r}; give a whole number, 0 or more")
    fab, record = load(platform)
    if experiment == "beff":
        schedule = "ring"
    if experiment == "mbw_mr":
        schedule = ""
    name = fab.name
    node_keys = fabrics.PRESETS[name].node_arguments
    base = {key: value for key, value in fab.arguments.items() if key not in node_keys}
    terms = record.get("experiments", {}).get(record_key(experiment, schedule), {})
    factor, scatter = terms.get("factor", 1.0), terms.get("scatter", 0.0)
    model_form = terms.get("model_form") or 0.0
    if terms and experiment == "gather" and collective != "gather":
        say(
            f"predict: the calibration measured gathers: the {collective} takes the {schedule} gather's "
            f"discrepancy factor, scatter and model-form term"
        )
    if terms and terms.get("model_form") is None:
        say(
            f"predict: the calibration measured {experiment} at one rank count, so nothing was held out to "
            f"cross-validate: the interval has no model-form term (calibrate at 3 or more rank counts)"
        )
    if not terms:
        say(
            f"predict: the platform has no calibration record of {experiment} {schedule}: the interval holds the "
            f"parameter draws only (no discrepancy factor, scatter between launches or model-form term)"
        )
    full = [n for n in nodes if record.get("cores") and min(n, base.get("ranks_per_host", n)) >= record["cores"]]
    if full:
        say(
            f"predict: at {', '.join(map(str, full))} ranks every core of a host runs a rank: ranks not bound to "
            f"cores there wait on the operating system's scheduler, which the simulated network does not hold "
            f"(b_eff at 1 B: 0.5-2.3 ms an exchange with 64 unbound ranks on a 64-core host; 1.0-1.2 us with 16 "
            f"and 32 bound ranks on hosts of as many cores); measure them with mpirun --bind-to core"
        )
    drawn = fab.draws[:draws]
    if len(fab.draws) < draws:
        say(f"predict: the platform holds {len(fab.draws)} parameter draws; using them all")

    buses = bus_rates(record.get("host_copy"), record.get("message_copies", 1), record.get("host_pass"))
    factor_of = _factors(terms, factor)
    rows = []
    for n in nodes:
        began = clock.perf_counter()
        central = simulate(base, experiment, schedule, n, sizes, collective, name, factor_of, buses)
        took = clock.perf_counter() - began
        raw = simulate(base, experiment, schedule, n, sizes, collective, name, buses=buses) if factor_of else central
        samples = _draws(
            base, drawn, experiment, schedule, n, sizes, collective, name, took, budget, central, factor_of, buses, say
        )
        for index, size in enumerate(sizes):
            spread = float(np.std(np.log([s[index] for s in samples]))) if len(samples) > 1 else 0.0
            sd = math.sqrt(spread**2 + scatter**2 + (model_form * reach(terms, record, n)) ** 2)
            value = central[index]
            rows.append(
                {
                    "experiment": experiment,
                    "schedule": schedule,
                    "collective": collective if experiment == "gather" else "",
                    "nodes": n,
                    "size": size,
                    "time": value,
                    "low": value * math.exp(-Z95 * sd),
                    "high": value * math.exp(Z95 * sd),
                    "simulated": raw[index],
                    "draws": len(samples),
                }
            )
    params = {
        "experiment": experiment,
        "schedule": schedule,
        "collective": collective,
        "nodes": nodes,
        "sizes": sizes,
        "platform": platform if isinstance(platform, str) else name,
        "factor": factor,
        "scatter": scatter,
        "model_form": model_form,
        "interval": 0.95,
        "arguments": base,
    }
    return Result(kinds.PREDICTION, params, fabrics._env(), rows, UNITS)


def _factors(terms: dict, factor: float):
    """The discrepancy factor per size, or None without a calibration record
    (the simulation as it is): the factor at the largest calibrated count,
    kept past it (docs/PREDICTION.md, "Past the calibrated counts", says why
    it is not grown)."""
    if not terms:
        return None
    pairs = terms.get("size_factors") or [[1, factor]]
    return lambda size: factor_at(pairs, size)


def reach(terms: dict, record: dict, nodes: int) -> float:
    """How many of the cross-validation's steps a prediction at `nodes`
    extrapolates past the calibrated rank counts, counted in log rank count
    (1 at most one step out, as far as cross-validation checked): a model's
    error at rank counts it never saw grows with the distance to them."""
    trained, checked = terms.get("cv_trained_on"), terms.get("cv_checked_on")
    calibrated = record.get("ranks")
    if not trained or not checked or not calibrated or checked <= max(trained) or nodes <= calibrated:
        return 1.0
    return max(1.0, math.log(nodes / calibrated) / math.log(checked / max(trained)))


def _draws(
    base: dict,
    drawn: list,
    experiment: str,
    schedule: str,
    n: int,
    sizes: list,
    collective: str,
    name: str,
    took: float,
    budget: float,
    central: list,
    factor_of,
    buses,
    say,
) -> list[list[float]]:
    """Each draw's simulated times: simulated in full where the central
    simulation's time says they fit the budget, else linearly from the
    sensitivities to each parameter that varies over the draws."""
    if not drawn:
        return []
    if took * len(drawn) <= budget:
        return [
            simulate({**base, **draw}, experiment, schedule, n, sizes, collective, name, factor_of, buses)
            for draw in drawn
        ]
    keys = [key for key in drawn[0] if np.std([d[key] for d in drawn]) > 0 and not isinstance(base[key], str)]
    say(
        f"predict: {len(drawn)} draws at {n} ranks would take about {took * len(drawn):.0f} s (one simulation "
        f"{took:.2f} s); they are propagated through the simulator's sensitivities to the {len(keys)} parameters "
        f"that vary (one simulation each), which is exact where the time is linear in them"
    )
    slopes = {}
    for key in keys:
        step = float(np.std([d[key] for d in drawn]))
        moved = {**base, key: base[key] + step}
        if key == "eager_threshold":
            moved[key] = int(round(moved[key]))
        shifted = simulate(moved, experiment, schedule, n, sizes, collective, name, factor_of, buses)
        slopes[key] = [(s - c) / (moved[key] - base[key]) for s, c in zip(shifted, central)]
    return [
        [max(c + sum(slopes[k][i] * (d[k] - base[k]) for k in keys), c * 1e-3) for i, c in enumerate(central)]
        for d in drawn
    ]
