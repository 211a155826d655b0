"""The interface every performance model shares, and its least-squares fit.

A model is a small class with named parameters (SI units), `predict(x)` for
its independent variable (message size in bytes, unless the model says
otherwise), `fit(result)` returning a `Fit` (the fitted model, standard
errors, R^2, residuals), and `against(result)`, a Result of measured against
predicted values with the relative error per row.

Subclasses set::

    parameters  the names of the fitted parameters, in order
    units       the unit of each parameter ("s", "B/s", "B", "")
    x_column, y_column
                the Result columns `fit` and `compare` read (defaults
                "size" and "latency_avg", the OSU latency column); `data(result)` may be overridden
                where a model needs more than one column

and implement `predict(x)`. `initial(x, y)` gives the starting point of the
nonlinear fit; a model that is linear in its parameters overrides `_solve`
instead, returning the Solution of `cls._linear(design, y, sigma, names)`
(see Hockney). `fit(..., fixed={name: value})` holds parameters that
the data cannot determine at known values (their standard error is 0).

Every fit keeps the `non_negative` parameters (latencies, overheads) at or
above zero by bounded least squares, refuses data that put a `positive` one
(a bandwidth, a rate) at or below zero, and reports a parameter it cannot
determine as undetermined, with the reason (least_squares.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..params import usage_error
from ..results.result import Result
from ..units import with_unit
from .least_squares import UNDETERMINED, Solution, constrained_linear, levenberg_marquardt


@dataclass
class Fit:
    """A fitted model with what the fit says about itself.

    stderr
        one standard error per parameter, from the covariance of the
        weighted least-squares estimate scaled by the residual variance; 0
        for a fixed parameter, None for a held one (no error exists).
    residuals
        y - predict(x), in y's unit, for every point used.
    r_squared
        1 - SS_res / SS_tot, both weighted as the fit was.
    covariance
        over `estimated` (neither fixed nor held), in order; finite.
    fixed
        the parameters held at values the caller gave.
    held
        name -> (label, why) of the parameters the fit did not estimate
        (least_squares.py: undetermined, at bound); printed and saved with
        their reason, never as inf or NaN.
    extra
        derived figures (name: value), printed after the parameters.
    """

    model: Model
    stderr: dict
    covariance: np.ndarray
    r_squared: float
    x: np.ndarray
    y: np.ndarray
    residuals: np.ndarray
    weighted: bool
    extra: dict = field(default_factory=dict)
    fixed: tuple = ()
    held: dict = field(default_factory=dict)

    def __post_init__(self):
        # The invariant every output relies on: no infinity or NaN anywhere a
        # number is claimed.
        count = len(self.estimated)
        errors = [self.stderr[name] for name in self.estimated]
        if (
            np.shape(self.covariance) != (count, count)
            or not np.all(np.isfinite(self.covariance))
            or not all(isinstance(e, float) and math.isfinite(e) for e in errors)
            or any(self.stderr[name] is not None for name in self.held)
        ):
            raise RuntimeError(
                f"{self.model.name} fit: covariance {np.shape(self.covariance)} over "
                f"{self.estimated}, errors {self.stderr}, held {list(self.held)}: a solver let an "
                "undetermined parameter through"
            )

    @property
    def params(self) -> dict:
        return self.model.params

    @property
    def estimated(self) -> tuple:
        """The parameters the covariance is over: neither fixed nor held."""
        return tuple(p for p in self.model.parameters if p not in self.fixed and p not in self.held)

    @property
    def undetermined(self) -> list:
        """The parameters the measurements cannot determine."""
        return [name for name, (label, _) in self.held.items() if label == UNDETERMINED]

    def note(self, name: str) -> str | None:
        """Why a parameter has no standard error ("fixed", or a held one's label and reason), else None."""
        if name in self.fixed:
            return "fixed"
        return f"{self.held[name][0]}: {self.held[name][1]}" if name in self.held else None

    def to_result(self) -> Result:
        """The fit as a Result: one row per parameter (value, standard error,
        unit, note) and the goodness of fit in params. An undetermined
        parameter's value and a held one's error are None, its note says
        why: JSON has no Infinity, and a number would claim what the data do
        not show."""
        rows = [
            {
                "parameter": name,
                "value": None if name in self.undetermined else float(self.model.params[name]),
                "stderr": self.stderr[name],
                "unit": self.model.units.get(name, ""),
                "note": self.note(name),
            }
            for name in self.model.parameters
        ]
        params = {
            "model": self.model.name,
            "r_squared": self.r_squared,
            "points": int(len(self.x)),
            "weighted": self.weighted,
            "fixed": list(self.fixed),
            "undetermined": self.undetermined,
            **self.extra,
        }
        return Result(
            f"fit_{self.model.name}",
            params,
            {},
            rows,
            {"parameter": "", "value": "", "stderr": "", "unit": "", "note": ""},
        )

    def __str__(self) -> str:
        """A title line, then the parameters as a table: value and standard
        error of each, with its unit; then why each held one has none."""
        lines = [
            f"{self.model.name} fit over {len(self.x)} points (R^2 = {self.r_squared:.6f}"
            f"{', weighted' if self.weighted else ''})"
        ]
        rows = [("parameter", "value", "std. error")]
        for name in self.model.parameters:
            unit = self.model.units.get(name, "")
            value = UNDETERMINED if name in self.undetermined else with_unit(float(self.model.params[name]), unit)
            error = (
                "fixed"
                if name in self.fixed
                else self.held[name][0]
                if name in self.held
                else with_unit(self.stderr[name], unit)
            )
            rows.append((name, value, error))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines += ["  " + f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}" for row in rows]
        lines += [f"  {name} {label}: {why}" for name, (label, why) in self.held.items()]
        for name, value in self.extra.items():
            lines.append(f"  {name}: {value:.6g}" if isinstance(value, float) else f"  {name}: {value}")
        return "\n".join(lines)


# What the relative_error column of `against` holds, in the words its tables print.
ERROR = "relative error = (predicted - measured) / measured"


class Model:
    """Base of the performance models: named parameters, predict, fit, compare."""

    name = "model"
    parameters: tuple = ()
    units: dict = {}
    x_column = "size"
    y_column = "latency_avg"
    # What parameters must be: rates, widths and sizes above zero, times at
    # zero or above. Checked for parameters given by hand (checked), bounds
    # of every fit (lower_bounds, require_positive); __init__ does not check,
    # so that a solver may try any value on its way.
    positive: tuple = ()
    non_negative: tuple = ()

    @classmethod
    def checked(cls, **values) -> Model:
        """The model from parameters given by hand (`fpgacomm model NAME`):
        a usage error names the first that is not a finite number, or below
        zero where it must be above (or at) zero."""
        for name, value in values.items():
            unit = f" {cls.units[name]}" if cls.units.get(name) else ""
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise usage_error(f"{cls.name} model: {name} must be a finite number, got {value!r}")
            if name in cls.positive and value <= 0:
                raise usage_error(f"{cls.name} model: {name} must be above 0{unit}, got {value:g}")
            if name in cls.non_negative and value < 0:
                raise usage_error(f"{cls.name} model: {name} cannot be negative, got {value:g}{unit}")
        return cls(**values)

    def __init__(self, **values):
        unknown = sorted(set(values) - set(self.parameters))
        missing = [p for p in self.parameters if p not in values]
        if unknown or missing:
            raise usage_error(
                f"{self.name} model: parameters are {', '.join(self.parameters)}; "
                f"unknown {unknown}, missing {missing}"
            )
        self.params = {p: float(values[p]) for p in self.parameters}

    def __getattr__(self, name):
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v:.6g}" for k, v in self.params.items())
        return f"{type(self).__name__}({inner})"

    def predict(self, x):
        raise NotImplementedError

    # ------------------------------------------------------------------ data

    @classmethod
    def data(cls, result: Result) -> tuple:
        """(x, y) from a Result's columns, rows with a missing value dropped."""
        for column in (cls.x_column, cls.y_column):
            if column not in result.columns:
                raise usage_error(
                    f"{cls.name} model needs columns '{cls.x_column}' and '{cls.y_column}'; "
                    f"{result.benchmark} has {', '.join(result.columns)}"
                )
        return cls.measured(result, cls.x_column, cls.y_column)

    @classmethod
    def measured(cls, result: Result, x_column: str, y_column: str) -> tuple:
        """(x, y) as floats, rows with a missing value dropped; a usage error
        for a column of text, or measured values (times, bandwidths) at or
        below zero, which no measurement gives."""
        x, y = (_numbers(result, column) for column in (x_column, y_column))
        keep = np.isfinite(x) & np.isfinite(y)
        if np.any(y[keep] <= 0):
            raise usage_error(
                f"{cls.name} model: {result.benchmark}'s {y_column} holds values at or below zero "
                f"({np.count_nonzero(y[keep] <= 0)} of {np.count_nonzero(keep)}), which no measurement "
                "gives; check the file"
            )
        return x[keep], y[keep]

    # ------------------------------------------------------------------- fit

    @classmethod
    def fit(cls, result, *, weighted: bool | None = None, fixed: dict | None = None, **options) -> Fit:
        """Least squares of predict(x) against y, from a Result or an (x, y)
        pair. weighted (default: when x spans more than two decades) fits
        relative errors, so that small sizes count as much as large ones.
        fixed: parameters held at the values given."""
        x, y = cls.data(result) if isinstance(result, Result) else map(np.asarray, result)
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        fixed = {name: float(value) for name, value in (fixed or {}).items()}
        unknown = sorted(set(fixed) - set(cls.parameters))
        if unknown:
            raise usage_error(f"{cls.name} model: cannot fix {unknown}; its parameters are {', '.join(cls.parameters)}")
        free = cls.free_parameters(fixed)
        if len(x) < len(free) + 1:
            raise usage_error(
                f"{cls.name} model: {len(free)} parameters need at least " f"{len(free) + 1} points, got {len(x)}"
            )
        weighted, sigma = uncertainties(x, y, weighted)
        # fixed goes to _solve only when given, so that a model's _solve(x, y,
        # sigma) written before fixed parameters existed still works.
        solution = cls._solve(x, y, sigma, **({"fixed": fixed} if fixed else {}), **options)
        values = dict(zip(free, map(float, solution.values)))
        cls.require_positive(values)
        model = cls(**fixed, **values)
        residuals = y - np.asarray(model.predict(x), dtype=float)
        stderr = {p: 0.0 for p in fixed}
        stderr.update({p: None for p in solution.held})
        stderr.update({p: math.sqrt(max(solution.covariance[i, i], 0.0)) for i, p in enumerate(solution.estimated)})
        return Fit(
            model,
            stderr,
            solution.covariance,
            r_squared(y, residuals, sigma),
            x,
            y,
            residuals,
            weighted,
            fixed=tuple(p for p in cls.parameters if p in fixed),
            held=solution.held,
        )

    @classmethod
    def require_positive(cls, values: dict) -> None:
        """A usage error where a fit puts a rate, width or size (`positive`)
        at or below zero: no bound can hold those (a zero bandwidth is an
        infinite time), so the data cannot be this model's."""
        for name in cls.positive:
            if name in values and not values[name] > 0:
                unit = f" {cls.units[name]}" if cls.units.get(name) else ""
                raise usage_error(
                    f"{cls.name} model: the fit puts {name} at {values[name]:.3g}{unit}, at or below "
                    f"zero: the measurements do not follow the model; check the file, or measure over a "
                    f"wider range"
                )

    @classmethod
    def lower_bounds(cls) -> dict:
        """The bound of each parameter that must not go below zero."""
        return {name: 0.0 for name in cls.non_negative}

    @classmethod
    def free_parameters(cls, fixed: dict) -> tuple:
        return tuple(p for p in cls.parameters if p not in fixed)

    @classmethod
    def initial(cls, x, y) -> list:
        """Starting parameters of the nonlinear fit; models override."""
        raise NotImplementedError(f"{cls.name}: no starting point for a nonlinear fit")

    @classmethod
    def _solve(cls, x, y, sigma, fixed=None, **options) -> Solution:
        """The Solution over the free parameters minimising
        sum(((y - predict) / sigma)^2), from initial(x, y)."""
        fixed = fixed or {}
        start = dict(zip(cls.parameters, cls.initial(x, y)))
        return cls._nonlinear(x, y, sigma, [start[p] for p in cls.free_parameters(fixed)], fixed)

    @classmethod
    def _nonlinear(cls, x, y, sigma, start, fixed: dict) -> Solution:
        """Bounded Levenberg-Marquardt over the free parameters from `start`."""
        free = cls.free_parameters(fixed)

        def residual(values):
            model = cls(**fixed, **dict(zip(free, values)))
            return (y - np.asarray(model.predict(x), dtype=float)) / sigma

        return levenberg_marquardt(
            residual, np.asarray(start, dtype=float), free, lower=cls.lower_bounds(), units=cls.units
        )

    @classmethod
    def _linear(cls, design, y, sigma, names, **options) -> Solution:
        """Bounded linear least squares of y ~ design @ (names' values)."""
        return constrained_linear(design, y, sigma, names, lower=cls.lower_bounds(), units=cls.units, **options)

    # --------------------------------------------------------------- compare

    def against(self, result) -> Result:
        """Measured against predicted per point: the relative error
        (predicted - measured) / measured, as a Result."""
        x, y = self.data(result) if isinstance(result, Result) else map(np.asarray, result)
        predicted = np.asarray(self.predict(np.asarray(x, dtype=float)), dtype=float)
        rows = [
            {
                "x": float(a),
                "measured": float(b),
                "predicted": float(p),
                "relative_error": float((p - b) / b) if b else math.nan,
            }
            for a, b, p in zip(x, y, predicted)
        ]
        source = result.benchmark if isinstance(result, Result) else "data"
        units = result.units if isinstance(result, Result) else {}
        y_unit = units.get(self.y_column, "")
        return Result(
            f"fit_{self.name}",
            {
                "model": self.name,
                "source": source,
                "x_column": self.x_column,
                "y_column": self.y_column,
                "error": ERROR,
                **self.params,
            },
            {},
            rows,
            {"x": units.get(self.x_column, ""), "measured": y_unit, "predicted": y_unit, "relative_error": "fraction"},
        )


def uncertainties(x: np.ndarray, y: np.ndarray, weighted: bool | None) -> tuple:
    """(weighted, sigma): relative errors (sigma = ``|y|``) when weighted, by
    default when x spans more than two decades; else sigma = 1."""
    if weighted is None:
        weighted = bool(np.min(x) > 0 and np.max(x) / np.min(x) > 100)
    sigma = np.abs(y) if weighted else np.ones_like(y)
    return weighted, np.where(sigma == 0, np.max(np.abs(y)) or 1.0, sigma)


def r_squared(y: np.ndarray, residuals: np.ndarray, sigma: np.ndarray) -> float:
    """1 - SS_res / SS_tot, both weighted by 1 / sigma^2 (1 for constant y)."""
    weights = 1.0 / sigma**2
    mean = np.sum(weights * y) / np.sum(weights)
    total = float(np.sum(weights * (y - mean) ** 2))
    return 1.0 - float(np.sum(weights * residuals**2)) / total if total > 0 else 1.0


def _numbers(result: Result, column: str) -> np.ndarray:
    """A column as floats, or a usage error naming a column that holds text."""
    values = result.column(column) if not any(isinstance(row[column], str) for row in result.rows) else None
    if values is None or values.dtype.kind not in "iuf":
        raise usage_error(f"{result.benchmark}'s column {column!r} holds text, not numbers; check the file")
    return np.asarray(values, dtype=float)


def figures(benchmark: str, params: dict, rows: list) -> Result:
    """What `fpgacomm model NAME` prints: a Result of named figures, one
    (figure, value, unit) row each, values in SI units."""
    return Result(
        benchmark,
        params,
        {},
        [{"figure": f, "value": float(v), "unit": u} for f, v, u in rows],
        {"figure": "", "value": "", "unit": ""},
    )


def linear_least_squares(design: np.ndarray, y: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The values of y ~ design @ values, weighted by 1/sigma, unbounded:
    the starting point of a nonlinear fit."""
    values, *_ = np.linalg.lstsq(design / sigma[:, None], y / sigma, rcond=None)
    return values
