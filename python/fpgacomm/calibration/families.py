"""The measurement families of a calibration campaign and the row keys they
share: the one home of both, read by the campaign that writes them and the fit
that reads them back."""

from __future__ import annotations

# What each family measures, in words (the fit names a missing one this way).
FAMILIES = {
    "pingpong": "one-way time of a ping-pong (osu latency) at log-uniformly drawn sizes",
    "send_overhead": "the CPU time of MPI_Isend (LogGP's o_s)",
    "recv_overhead": "the CPU time of receiving a message already arrived (LogGP's o_r)",
    "bandwidth": "streaming time per message of one pair (osu bw)",
    "mbw_mr": "time per message per pair with 1 .. K/2 pairs at once (osu mbw_mr: contention)",
    "host_copy": "memory copies by 1 .. all cores of rank 0's host at once, blocks in memory (the host's bus past "
    "mbw_mr's pairs) and in the caches",
    "host_pass": "blocks passed on from core to core by a chain of 1 .. all cores of rank 0's host at once, each "
    "copying what its neighbour wrote (as a ring gather forwards)",
    "incast": "k ranks sending to one at once (MPI_Gather, osu gather)",
    "barrier": "MPI_Barrier at 2 .. K ranks",
    "gather": "the gather schedules ring, tree, vlink and mpi at three or more rank counts",
    "beff": "b_eff's ring (HPCC FPGA), time per exchange at each message size",
}
# Columns of a campaign's rows; `time` is each family's time per operation.
UNITS = {
    "family": "",
    "ranks": "",
    "schedule": "",
    "pairs": "",  # mbw_mr's pairs; host_copy's and host_pass's threads
    "size": "B",
    "time": "s",
    "spread": "s",
    "iterations": "",
    "load": "",
}
BENCHMARK = "calibration"
INDEX = "index.json"
INDEX_SCHEMA = "fpgacomm.calibration-index/1"


def key(row: dict) -> tuple:
    """What identifies a measured point across launches."""
    return row["family"], row["ranks"], row.get("schedule") or "", row.get("pairs") or 0, row["size"]
