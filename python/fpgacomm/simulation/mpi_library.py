"""What an MPI library runs for a collective call, declared once: per
library, the algorithm its default selection picks for each call (by the
communicator's size and the block's bytes), and each algorithm's messages as
stages for the simulator (fabric.run_schedule). The cluster preset names its
library (`mpi_library`), so that the `mpi` gather schedule is simulated as the
user's MPI runs it, not as every rank sending to the root at once.

Open MPI 4.1 (checked against v4.1.6's source):

- MPI_Gather goes to coll/tuned, whose fixed rules
  (coll_tuned_decision_fixed.c, ompi_coll_tuned_gather_intra_dec_fixed)
  choose by communicator size and the bytes of one rank's block
  (`gather_decision`): basic_linear, binomial or linear_sync (with a first
  segment of 0 bytes, so the whole block follows the root's zero-byte
  go-ahead).
- MPI_Gatherv and MPI_Scatterv: coll/tuned provides none (its module sets
  coll_gatherv to NULL; sm, han and adapt provide none or have priority 0), so
  coll/basic's linear one runs: every rank sends its block at once, and the
  root takes them one after another in rank order with blocking receives
  (mca_coll_basic_gatherv_intra; scatterv sends in rank order likewise).
  fpgacomm's `mpi` gather schedule calls these (src/bench/gather.cpp).
- MPI_Allgatherv: tuned's allgatherv rules are not modelled here; the
  simulator sends every block to every rank at once ("concurrent").

A message at or below the platform's eager threshold leaves without waiting
for its receive: a linear root's receives then cost it o_r each (the
simulator's receiver takes one message at a time), so the messages of an
eager basic_linear step are one concurrent stage. Past the threshold a
message moves only once its receive is posted: one stage per message, in
the root's order, each paying its rendezvous.

Not modelled: the binomial's copies of each inner rank's own block into its
buffer (one block's memcpy on the critical path), and the sender's o_s and
request-to-send, which in a real linear gather overlap the root's previous
receive (the stage of each message pays them again: o_s + half the
rendezvous, a few hundred ns per block).
"""

from __future__ import annotations

import math

from .. import _core

OPEN_MPI_41 = "openmpi-4.1"
CONCURRENT = "concurrent"
CALLS = ("MPI_Gather", "MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv")
# fpgacomm's mpi schedule: the collective -> the MPI call it makes (src/bench/gather.cpp).
SCHEDULE_CALLS = {"gather": "MPI_Gatherv", "scatter": "MPI_Scatterv", "allgather": "MPI_Allgatherv"}
ALGORITHMS = ("basic_linear", "binomial", "linear_sync", "concurrent")


# coll/tuned's fixed rule for MPI_Gather in Open MPI 4.1 (ompi_coll_tuned_gather_intra_dec_fixed in
# coll_tuned_decision_fixed.c), as data: for the first row whose communicator bound exceeds the size,
# the first (block bound, algorithm) whose bound exceeds the block's bytes (None: no bound). Its
# `total_dsize` is one rank's block (type size x count); its algorithms 1 basic_linear, 2 binomial,
# 3 linear_sync.
OPEN_MPI_41_GATHER = (
    (
        4,
        (
            (2, "linear_sync"),
            (4, "basic_linear"),
            (32768, "binomial"),
            (65536, "basic_linear"),
            (131072, "binomial"),
            (None, "linear_sync"),
        ),
    ),
    (
        8,
        (
            (1024, "binomial"),
            (8192, "basic_linear"),
            (32768, "binomial"),
            (262144, "basic_linear"),
            (None, "linear_sync"),
        ),
    ),
    (256, ((None, "binomial"),)),
    (512, ((2048, "binomial"), (8192, "basic_linear"), (None, "binomial"))),
    (None, ((None, "binomial"),)),
)


def _by_table(table):
    """A rule of (nodes, block bytes) read from a decision table such as OPEN_MPI_41_GATHER."""

    def rule(nodes: int, block_bytes: int) -> str:
        below = lambda bound, value: bound is None or value < bound  # noqa: E731
        sizes = next(row for bound, row in table if below(bound, nodes))
        return next(name for bound, name in sizes if below(bound, block_bytes))

    return rule


# Per library: its source, and per call the algorithm (a name, or a rule of (nodes, block bytes)).
LIBRARIES = {
    OPEN_MPI_41: {
        "source": "Open MPI 4.1 (v4.1.6): coll/tuned's fixed decision for MPI_Gather, coll/basic's linear "
        "gatherv and scatterv",
        "MPI_Gather": _by_table(OPEN_MPI_41_GATHER),
        "MPI_Gatherv": "basic_linear",
        "MPI_Scatterv": "basic_linear",
        "MPI_Allgatherv": "concurrent",
    },
    CONCURRENT: {
        "source": "no library's rules: every rank sends to the root (or to every rank) at once",
        **dict.fromkeys(CALLS, "concurrent"),
    },
}


def check(name) -> str:
    if name not in LIBRARIES:
        raise _core.UsageError(
            f"fabric: cluster mpi_library {name!r}; use one of {', '.join(LIBRARIES)} (another MPI's rules are "
            f"added in simulation/mpi_library.py)"
        )
    return name


def of_version(text: str) -> str | None:
    """The rules' name for an MPI library's version string (a Result's
    env["mpi_library"]), or None where none are declared."""
    words = (text or "").lower()
    if "open mpi v4.1." in words or "open mpi 4.1." in words:
        return OPEN_MPI_41
    return None


def algorithm(library: str, call: str, nodes: int, block_bytes: int) -> str:
    """The algorithm `library` runs for `call` on `nodes` ranks of
    `block_bytes` each."""
    rule = LIBRARIES[check(library)][call]
    return rule if isinstance(rule, str) else rule(nodes, block_bytes)


def _binomial_rounds(nodes: int, block_bytes: int) -> list[list[tuple]]:
    """Open MPI's in-order binomial tree at root 0: rank v (its lowest set
    bit 2^r) sends what its subtree holds, min(2^r, n - v) blocks, to v - 2^r
    after receiving from its children v + 1, v + 2, ... in that order; so in
    round r every such v sends at once, and each parent takes one message."""
    stages = []
    for r in range(math.ceil(math.log2(nodes))):
        step = 1 << (r + 1)
        senders = range(1 << r, nodes, step)
        full = [v for v in senders if v + (1 << r) <= nodes]
        runs = []
        if full:
            runs.append((len(full), 1 << r, step, 0, step, (1 << r) * block_bytes, 0, 0))
        for v in senders:
            if v + (1 << r) > nodes:
                runs.append((1, v, 0, v - (1 << r), 0, (nodes - v) * block_bytes, 0, 0))
        stages.append(runs)
    return stages


def stages(algorithm_name: str, collective: str, nodes: int, block_bytes: int, eager_threshold: float) -> list | None:
    """The algorithm's messages at root 0 as the simulator's stages, each
    [(count, src, src_step, dst, dst_step, bytes, port, lane), ...], run one
    after another, for a gather or a scatter (linear: the root sends in rank
    order); None for "concurrent": the mpi schedule's own single stage
    (schedules.py), every block at once."""
    eager = block_bytes <= eager_threshold
    if algorithm_name == "concurrent":
        return None  # the schedule's own stage: every block at once
    if collective == "allgather":
        raise _core.UsageError(f"gather_sim: the {algorithm_name} algorithm is a gather or scatter, not an allgather")
    if algorithm_name == "basic_linear":
        if collective == "scatter":
            # The root's blocking sends: an eager one returns at once, a rendezvous waits for its receiver.
            return (
                [[(nodes - 1, 0, 0, 1, 1, block_bytes, 0, 0)]]
                if eager
                else [[(1, 0, 0, i, 0, block_bytes, 0, 0)] for i in range(1, nodes)]
            )
        if eager:
            return [[(nodes - 1, 1, 1, 0, 0, block_bytes, 0, 0)]]
        return [[(1, i, 0, 0, 0, block_bytes, 0, 0)] for i in range(1, nodes)]
    if algorithm_name == "linear_sync":
        if collective == "scatter":
            raise _core.UsageError("gather_sim: linear_sync is a gather algorithm")
        # Per rank in order: the root's zero-byte go-ahead, then the whole block (the first
        # segment: the decision passes a segment of 0 bytes); the empty second segments are
        # awaited at the end, so only the last rank's is on the root's path.
        out = []
        for i in range(1, nodes):
            out += [[(1, 0, 0, i, 0, 0, 0, 0)], [(1, i, 0, 0, 0, block_bytes, 0, 0)]]
        return out + [[(1, nodes - 1, 0, 0, 0, 0, 0, 0)]]
    if algorithm_name == "binomial":
        rounds = _binomial_rounds(nodes, block_bytes)
        if collective == "scatter":
            return [[(c, d, ds, s, ss, b, p, q) for c, s, ss, d, ds, b, p, q in runs] for runs in reversed(rounds)]
        return rounds
    raise _core.UsageError(f"gather_sim: MPI algorithm {algorithm_name!r}; use one of {', '.join(ALGORITHMS)}")
