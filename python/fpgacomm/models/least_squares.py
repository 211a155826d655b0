"""Least squares that keep parameters physical and say what they could not
estimate: the one home of the solvers every model's fit uses.

A solver returns a Solution: a value per parameter, the covariance over the
parameters it estimated, and the parameters it held, each with a label and
the reason in words:

    undetermined  the measurements cannot tell the parameter apart from the
                  others (its column never varies, or is a combination of
                  those before it): it is held at 0 and its share is counted
                  in the others, so predictions at the measured points are
                  unchanged;
    at bound      the parameter (a latency, an overhead, a header) would fall
                  below zero, which nothing physical does: bounded least
                  squares holds it at zero and fits the rest.

Neither has a standard error, so the covariance never holds inf or NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..units import with_unit

UNDETERMINED = "undetermined"
AT_BOUND = "at bound"
# A column whose rank contribution is below this (relative to its largest
# entry) is a combination of the others.
RANK_TOLERANCE = 1e-9


@dataclass
class Solution:
    """values: one per name, in order; covariance: over `estimated`, in
    order; held: name -> (label, why) of the names not estimated."""

    names: tuple
    values: np.ndarray
    covariance: np.ndarray
    held: dict

    @property
    def estimated(self) -> tuple:
        return tuple(name for name in self.names if name not in self.held)


def independent_columns(design: np.ndarray, order) -> list:
    """The columns of `design`, taken in `order`, that each raise its rank
    (sorted): the parameters the data can tell apart."""
    scale = np.max(np.abs(design), axis=0) if len(design) else np.zeros(design.shape[1])
    normalised = design / np.where(scale > 0, scale, 1.0)
    kept = []
    for j in order:
        if scale[j] > 0 and np.linalg.matrix_rank(normalised[:, kept + [j]], tol=RANK_TOLERANCE) == len(kept) + 1:
            kept.append(j)
    return sorted(kept)


def undetermined_reason(
    column: np.ndarray, kept: list, unexercised: str | None = None, held: str = "held at 0, its share counted in them"
) -> str:
    """Why a parameter is undetermined: never exercised (`unexercised` says
    how, where the model knows), or not separable from the `kept` ones."""
    if not np.any(column):
        return f"{unexercised or 'no measured point exercises it'}; held at 0"
    return f"the measurements cannot separate it from {', '.join(kept) or 'the others'}; {held}"


def constrained_linear(
    design: np.ndarray,
    y: np.ndarray,
    sigma: np.ndarray,
    names,
    *,
    lower: dict,
    units: dict,
    order=None,
    unexercised: dict | None = None,
) -> Solution:
    """y ~ design @ values weighted by 1 / sigma, each name in `lower` kept at
    or above its bound. Columns that add nothing to the rank (taken in
    `order`, default the names' order) are undetermined. Then an active set
    (Lawson and Hanson's, for NNLS): while the least-squares values put a
    bounded parameter below its bound, the one furthest below (in units of
    its effect on the weighted residuals) is held at the bound and the rest
    refitted; a held one whose residual pulls it up again is released. The
    covariance, over the parameters left free, is scaled by the reduced
    chi-square (as curve_fit does)."""
    names = tuple(names)
    a = design / sigma[:, None]
    b = np.asarray(y, dtype=float) / sigma
    order = range(len(names)) if order is None else order
    active = independent_columns(a, order)
    values = np.zeros(len(names))
    held = {}
    for j in range(len(names)):
        if j not in active:
            held[names[j]] = (
                UNDETERMINED,
                undetermined_reason(a[:, j], [names[k] for k in active], (unexercised or {}).get(names[j])),
            )
    bounded = {}  # column -> the value the unbounded fit gave it when it was first held
    target = b
    for _ in range(4 * len(names) + 1):  # each pass holds or releases one; a few parameters settle fast
        target = b - sum((a[:, j] * lower[names[j]] for j in bounded), np.zeros_like(b))
        solved = np.linalg.lstsq(a[:, active], target, rcond=None)[0] if active else np.zeros(0)
        below = [
            (float((solved[k] - lower[names[j]]) * np.linalg.norm(a[:, j])), k, j)
            for k, j in enumerate(active)
            if names[j] in lower and solved[k] < lower[names[j]]
        ]
        if below:
            _, k, j = min(below)
            bounded.setdefault(j, float(solved[k]))
            active.remove(j)
            continue
        residual = target - a[:, active] @ solved
        pulls = [(float(a[:, j] @ residual) / np.linalg.norm(a[:, j]), j) for j in bounded]
        if pulls and max(pulls)[0] > 1e-9 * np.linalg.norm(b):
            j = max(pulls)[1]
            del bounded[j]
            active = sorted(active + [j])
            continue
        break
    values[active] = solved
    for j, unbounded in bounded.items():
        unit = units.get(names[j], "")
        values[j] = lower[names[j]]
        held[names[j]] = (
            AT_BOUND,
            f"unbounded, the fit puts it at {with_unit(unbounded, unit)}, which is not "
            f"physical; held at {with_unit(float(lower[names[j]]), unit)}",
        )
    covariance = covariance_of(a[:, active], target - a[:, active] @ solved) if active else np.zeros((0, 0))
    return Solution(names, values, covariance, held)


def covariance_of(jacobian: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """(J^T J)^-1 times the residual variance, for a Jacobian of full column
    rank (the solvers take out the columns that are not)."""
    points, count = jacobian.shape
    variance = float(np.sum(residuals**2)) / max(points - count, 1)
    return np.linalg.inv(jacobian.T @ jacobian) * variance


def levenberg_marquardt(
    residual, start: np.ndarray, names, *, lower: dict, units: dict, iterations: int = 200, tolerance: float = 1e-12
) -> Solution:
    """The values minimising sum(residual(values)^2), each name in `lower`
    kept at or above its bound (a step that would cross it stops there), with
    a forward-difference Jacobian; parameters are scaled by their start so
    that seconds and bytes per second sit side by side. A parameter left on
    its bound is held there; one whose Jacobian column adds nothing to the
    rank at the solution is undetermined (its value is kept: the model's
    predictions do not depend on it there)."""
    names = tuple(names)
    start = np.asarray(start, dtype=float)
    scale = np.where(start != 0, np.abs(start), 1.0)
    floor = np.array([lower.get(name, -np.inf) for name in names]) / scale

    def scaled(u):
        return residual(u * scale)

    u = np.maximum(start / scale, floor)
    r = scaled(u)
    damping = 1e-3
    for _ in range(iterations):
        jacobian = _jacobian(scaled, u, r)
        gradient = jacobian.T @ r
        normal = jacobian.T @ jacobian
        improved = False
        while damping < 1e12:
            step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-30), -gradient)
            step = np.maximum(u + step, floor) - u
            candidate = scaled(u + step)
            if np.sum(candidate**2) < np.sum(r**2):
                u, r, damping, improved = u + step, candidate, max(damping / 10, 1e-12), True
                break
            damping *= 10
        if not improved or np.max(np.abs(step)) < tolerance * (1 + np.max(np.abs(u))):
            break
    jacobian = _jacobian(scaled, u, r)
    values = u * scale
    held = {}
    for j, name in enumerate(names):
        if name in lower and u[j] <= floor[j] and (jacobian.T @ r)[j] > 0:
            held[name] = (
                AT_BOUND,
                f"the data pull it below {with_unit(float(lower[name]), units.get(name, ''))}, "
                "which is not physical; held there",
            )
    free = [j for j, name in enumerate(names) if name not in held]
    kept = independent_columns(jacobian[:, free], range(len(free)))
    for k, j in enumerate(free):
        if k not in kept:
            held[names[j]] = (
                UNDETERMINED,
                undetermined_reason(
                    jacobian[:, j],
                    [names[free[i]] for i in kept],
                    held="its value kept, which predictions here do " "not depend on",
                ),
            )
    estimated = [free[k] for k in kept]
    covariance = (
        covariance_of(jacobian[:, estimated], r) * np.outer(scale[estimated], scale[estimated])
        if estimated
        else np.zeros((0, 0))
    )
    return Solution(names, values, covariance, held)


def _jacobian(function, u: np.ndarray, r: np.ndarray) -> np.ndarray:
    columns = []
    for i in range(len(u)):
        h = 1e-7 * max(abs(u[i]), 1.0)
        shifted = u.copy()
        shifted[i] += h
        columns.append((function(shifted) - r) / h)
    return np.column_stack(columns)
