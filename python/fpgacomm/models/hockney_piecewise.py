"""The piecewise Hockney model on the command line (`fpgacomm fit --model
hockney_piecewise`): Hockney models on contiguous size ranges between the
protocol switches that the fit finds (models/hockney.py holds the model;
the registry names one module per model)."""

from __future__ import annotations

from ..results.result import Result
from .base import Fit, usage_error
from .hockney import PiecewiseHockney

OPTIONS = {}


def predictions() -> Result:
    raise usage_error(
        "the hockney_piecewise model has as many parameters as its fit finds ranges; fit it "
        "(fpgacomm fit LATENCY.json --model hockney_piecewise), or give one range's alpha and beta "
        "to fpgacomm model hockney"
    )


def fit(result: Result) -> Fit:
    """Hockney over each size range between the protocol switches found."""
    return PiecewiseHockney.fit(result)
