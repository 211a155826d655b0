"""Performance models: each a small class with named parameters, `predict`,
`fit(result)` and `against(result)` (models/base.py has the interface).

REGISTRY maps the names the command line uses (`fpgacomm fit --model`,
`fpgacomm model NAME`) to the modules that implement them; each provides
OPTIONS, ``predictions(**options)`` and ``fit(result)`` (docs/METHODS.md, "Models").
"""

from __future__ import annotations

import importlib

from ..params import usage_error

REGISTRY = {
    "hockney": "fpgacomm.models.hockney",
    "hockney_piecewise": "fpgacomm.models.hockney_piecewise",
    "loggp": "fpgacomm.models.loggp",
    "packet": "fpgacomm.models.packet",
    "beff": "fpgacomm.models.beff",
    "cuscomnet": "fpgacomm.models.cuscomnet",
    "vcsn": "fpgacomm.models.vcsn",
}


def load(name: str):
    """The module registered as `name`, or a UsageError that says what is wrong."""
    if name not in REGISTRY:
        raise usage_error(f"unknown model '{name}'; choose {', '.join(REGISTRY)}")
    try:
        return importlib.import_module(REGISTRY[name])
    except ModuleNotFoundError as error:
        if error.name != REGISTRY[name]:
            raise
        raise usage_error(
            f"model '{name}' is registered, but its module {REGISTRY[name]} is not part of this "
            f"installation; update fpgacomm or choose "
            f"{', '.join(n for n in REGISTRY if n != name)}"
        ) from None
