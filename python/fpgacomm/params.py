"""Parameters shared by every benchmark, model and command: the usage error
that every rank raises alike, message sizes, iteration counts, memory kinds
and datatypes, with the constants the C++ core defines. The core checks
memory kinds and datatypes where a benchmark's options take them."""

from __future__ import annotations

from . import _core


def usage_error(message: str) -> Exception:
    """A UsageError that every rank raises identically (it depends on the
    parameters alone), so front ends may report it once."""
    error = _core.UsageError(message)
    error.agreed = True
    return error


# Above this many bytes OSU Micro-Benchmarks switches to its large-message
# iteration counts (the core's constant).
LARGE_MESSAGE = _core.LARGE_MESSAGE
# Memory kinds as the command line names them (the core's): pageable and
# pinned host memory, device global memory, HBM, PLRAM.
MEMORY_KINDS = tuple(_core.mem_kind_codes())
HOST_KINDS = tuple(_core.mem_kind_codes(host_only=True))
# OSU Micro-Benchmarks' point-to-point and one-sided defaults (timed, warm-up,
# timed large, warm-up large): many iterations where a test times single
# messages, few where it times windows of them.
LATENCY_COUNTS = (10000, 100, 1000, 10)
BANDWIDTH_COUNTS = (100, 10, 20, 2)
# OSU Micro-Benchmarks' default sweep: 1 B .. 4 MiB.
DEFAULT_SIZES = (1, 4 << 20)
# OMB's -T, its default MPI_CHAR first.
DATATYPES = tuple(_core.datatype_names())


def parse_size(text: str) -> int:
    """Bytes with K/M/G suffixes; errors are the same on every rank."""
    try:
        return _core.parse_size(text)
    except _core.UsageError as error:
        raise usage_error(str(error)) from None


def resolve_sizes(sizes, defaults: tuple = DEFAULT_SIZES) -> list[int]:
    """None (defaults: OMB's 1 B .. 4 MiB), an OMB -m string "[MIN:]MAX"
    (the missing end from defaults), one size, or a list."""
    if sizes is None:
        return _core.doubling_sizes(*defaults)
    if isinstance(sizes, str):
        try:
            return _core.doubling_sizes(*_core.parse_size_range(sizes, *defaults))
        except _core.UsageError as error:
            raise usage_error(str(error)) from None
    if isinstance(sizes, int):
        sizes = [sizes]
    sizes = [int(size) for size in sizes]
    if not sizes or min(sizes) < 1:
        raise usage_error(f"message sizes must be at least 1 byte, got {sizes}")
    return sizes


def byte_sizes(sizes, what: str, smallest: int = 0) -> list[int]:
    """Sizes where OMB's rule (1 B and more) does not hold: a message or a
    block per node may be empty (smallest 0), a simulated block may not
    (smallest 1). A range "MIN:MAX" doubles as OMB's -m; one size (an int or
    text with K/M/G) or a list of them. The usage error starts with `what`."""
    if isinstance(sizes, str) and ":" in sizes:
        return resolve_sizes(sizes)
    sizes = [sizes] if isinstance(sizes, (int, float, str)) else list(sizes)
    sizes = [parse_size(size) if isinstance(size, str) else size for size in sizes]
    if not sizes:
        raise usage_error(f"{what}: give at least one size")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < smallest:
            raise usage_error(f"{what} {size!r}; give whole bytes, {smallest} or more")
    return sizes


def iteration_counts(
    defaults: tuple, iterations: int | None, warmup: int | None, large_threshold: int = LARGE_MESSAGE
) -> _core.IterationCounts:
    """The counts of a sweep: defaults (timed, warm-up, timed large, warm-up
    large), OMB's, unless iterations or warmup (OMB's -i, -x) set one count
    for every size; the large ones hold above large_threshold bytes."""
    small, small_warmup, large, large_warmup = defaults
    if iterations is not None:
        small = large = iterations
    if warmup is not None:
        small_warmup = large_warmup = warmup
    return _core.IterationCounts(
        iterations=small,
        warmup=small_warmup,
        iterations_large=large,
        warmup_large=large_warmup,
        large_threshold=large_threshold,
    )


def counts_params(counts: _core.IterationCounts) -> dict:
    """The counts as a Result's params name them."""
    return {
        "iterations": counts.iterations,
        "warmup": counts.warmup,
        "iterations_large": counts.iterations_large,
        "warmup_large": counts.warmup_large,
    }
