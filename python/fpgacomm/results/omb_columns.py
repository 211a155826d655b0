"""OSU Micro-Benchmarks' column headers and fpgacomm's columns, both ways:
report.py prints a Result under these headers, peers.py reads OMB's text
(and fpgacomm's) back by them. Each entry is (header, row key, factor from
the SI value to the printed number)."""

from __future__ import annotations

from .kinds import unit_of

US = 1e6  # s -> us
MB = 1e-6  # B/s -> MB/s (MB = 10^6 bytes)

LATENCY_MAIN = [("Avg Latency(us)", "latency_avg", US)]
LATENCY_FULL = [
    ("Min Latency(us)", "latency_min", US),
    ("Max Latency(us)", "latency_max", US),
    ("Stdev(us)", "latency_stdev", US),
    ("P50 Tail Lat(us)", "latency_p50", US),
    ("P90 Tail Lat(us)", "latency_p90", US),
    ("P99 Tail Lat(us)", "latency_p99", US),
]
BANDWIDTH_MAIN = [("Bandwidth (MB/s)", "bandwidth", MB)]
MBW_MR_MAIN = [("MB/s", "bandwidth", MB), ("Messages/s", "message_rate", 1.0)]
BANDWIDTH_FULL = [
    ("Min BW(MB/s)", "bandwidth_min", MB),
    ("Max BW(MB/s)", "bandwidth_max", MB),
    ("Stdev(MB/s)", "bandwidth_stdev", MB),
    ("P50 Tail BW(MB/s)", "bandwidth_p50", MB),
    ("P90 Tail BW(MB/s)", "bandwidth_p90", MB),
    ("P99 Tail BW(MB/s)", "bandwidth_p99", MB),
]
STAGING = [("Staging(%)", "staging_share", 100.0)]
# Collectives: -f adds nccl-tests' bandwidths and the staging share.
COLLECTIVE_FULL = LATENCY_FULL + [("Algbw(MB/s)", "algbw", MB), ("Busbw(MB/s)", "busbw", MB)] + STAGING
# Non-blocking collectives (osu_i*): the whole operation with the compute
# overlapped, the compute alone, the communication alone, and the share of
# the communication hidden behind the compute.
NONBLOCKING = [
    ("Overall(us)", "overall", US),
    ("Compute(us)", "compute", US),
    ("Pure Comm.(us)", "pure_comm", US),
    ("Overlap(%)", "overlap", 100.0),
]
# Headers OMB prints that fpgacomm's text does not: 7.x one-sided's latency
# header, and -f's iteration count.
OMB_ONLY = [("Latency (us)", "latency_avg", US), ("Iterations", "iterations", 1.0)]


#: header -> (row key, factor, unit), every header either side prints; the
#: units by the one rule of results/kinds.py.
BY_HEADER = {
    header: (key, factor, unit_of(key))
    for header, key, factor in (
        LATENCY_MAIN
        + LATENCY_FULL
        + BANDWIDTH_MAIN
        + MBW_MR_MAIN
        + BANDWIDTH_FULL
        + COLLECTIVE_FULL
        + NONBLOCKING
        + OMB_ONLY
    )
}
