"""One test's function with its family's options as its own signature.

Each OSU test is a small function calling its family's run() with the
test's name; the decorator gives it run()'s keyword options and their
meanings, so that help(), IDEs and notebooks show them instead of
`**options`.
"""

from __future__ import annotations

import inspect


def options_of(run):
    """Decorator: the function's signature becomes run()'s without its
    first parameter (the test's name), and its docstring gains run()'s."""
    signature = inspect.signature(run)
    parameters = list(signature.parameters.values())[1:]
    explained = inspect.cleandoc(run.__doc__ or "").partition("\n")[2].strip()

    def decorate(function):
        function.__signature__ = signature.replace(parameters=parameters)
        function.__doc__ = f"{inspect.cleandoc(function.__doc__ or '')}\n\n{explained}".strip()
        return function

    return decorate
