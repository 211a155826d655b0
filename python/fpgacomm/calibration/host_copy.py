"""The host's copy rate with 1 .. all of its cores copying at once.

A message between two ranks of one host is, in the end, a copy of its bytes
in memory by the receiver (docs/FABRIC.md, the cluster preset), so the most
the ranks of a host move together is what all its cores copy together. The
campaign's mbw_mr has K/2 pairs at most, often too few to see that bus
saturate; this measures it at every core, with threads of the rank that runs
it (C++ threads, src/bench/host_copy.cpp), each copying a block of its own larger
than the caches (BLOCK); and with blocks that stay in a core's own cache
and in the caches the cores share (CACHED_BLOCKS), since messages that live
there are not held to the memory's rate (b_eff's at 16-256 KiB on 32 ranks
of a 64-core host moved more than all its cores copying 32 MiB blocks).
The host_pass family measures the copies that cross cores: a chain of
threads, each copying the block its neighbour wrote the round before, as a
ring gather forwards and as b_eff's ranks take their neighbours' messages in
(b_eff's bus past a core's own cache is taken from it: experiments.with_host;
a ring gather's 1 MiB blocks at 32 ranks of a 32-core host took each 1.7-2.1
times as long as at 8 ranks, more than copies within a core slow down)."""

from __future__ import annotations

import os

from .. import _core

BLOCK = 32 << 20  # bytes each thread copies per copy: its two blocks outgrow a core's share of the caches
# Blocks from a core's own cache to the caches the cores share, each twice as deep as the last but one:
# two of 64 KiB or 256 KiB fit a core's L2 (1-2 MiB on current x86 servers); 64 cores' two of 1 MiB (128 MiB)
# fit a large shared L3 (300 MiB on the 64-core Xeon of bench/RESULTS.md), two of 4 MiB (512 MiB) do not.
CACHED_BLOCKS = (64 << 10, 256 << 10, 1 << 20, 4 << 20)
SECONDS = 0.2  # how long every thread copies, at each thread count
MEMORY_SHARE = 4  # use at most 1/MEMORY_SHARE of the memory free at the start


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4 .. and `cores` itself."""
    return sorted({cores} | {1 << k for k in range(cores.bit_length()) if 1 << k <= cores})


def rate(threads: int, block: int = BLOCK, seconds: float = SECONDS, passed: bool = False) -> float:
    """Bytes per second copied by `threads` threads at once, each its own
    block; passed: each the block its neighbour wrote the round before (the
    host_pass family)."""
    copy = _core.host_pass_rate if passed else _core.host_copy_rate
    return copy(threads, block, seconds)


def measure(block: int = BLOCK, seconds: float = SECONDS, passed: bool = False) -> list[tuple[int, float]]:
    """(threads, seconds per block and thread) at every thread count up to
    the host's cores (the process's affinity widened to all of them for the
    while, where the launcher bound it to fewer and the system allows),
    fewer where the free memory could not hold two blocks a thread; passed:
    as `rate`."""
    bound = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    except OSError:  # a cpuset (Slurm's cgroup) that forbids it: the cores this process may use
        pass
    try:
        cores = len(os.sched_getaffinity(0))
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        cores = max(1, min(cores, free // MEMORY_SHARE // (2 * block)))
        return [(threads, threads * block / rate(threads, block, seconds, passed)) for threads in thread_counts(cores)]
    finally:
        os.sched_setaffinity(0, bound)
