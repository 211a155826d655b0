"""Errors of bad input that every rank finds alike."""

from __future__ import annotations

from . import _core


def usage_error(message: str) -> Exception:
    """A UsageError that every rank raises identically (it depends on the
    parameters alone), so front ends may report it once."""
    error = _core.UsageError(message)
    error.agreed = True
    return error
