"""The device targets as ratios (device-to-device bandwidth against the pinned
copy and host MPI; device latency against host latency), from one mapping's
JSON of bench/gpu_campaign.sh.

    python bench/gpu_targets.py DIR

DIR holds devbw.json, osu_bw_H_H.json, osu_bw_D_D.json, osu_latency_H_H.json
and osu_latency_D_D.json, all measured in the same run (docs/METHODS.md,
devbw):

- bandwidth: at every size L >= 16 MiB, bw_DD(L) / min(B_dev(L), bw_HH(L)),
  target >= 0.8, where B_dev(L) = min(rank 0's pinned device-to-host,
  rank 1's pinned host-to-device bandwidth at L): the two copies a staged
  message makes;
- latency: at every size up to 1 KiB, (lat_DD - lat_HH) / (2 * RT), target
  <= 1, where RT is one device round trip (a pinned 1-byte write plus read,
  host clock) averaged over the two ranks.

Where DIR also holds osu_bw_H_H_multiple.json (`osu bw H H -b multiple`:
fresh buffers for every message of the window, so none is served from the
host's caches), each bandwidth row adds bw_DD over that H-H as context. The
verdict stays the target's, against OMB's default single buffer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fpgacomm import Result, devbw

BANDWIDTH_FROM = 16 << 20
BANDWIDTH_TARGET = 0.8
LATENCY_UP_TO = 1024
LATENCY_ROUND_TRIPS = 2
FILES = ("devbw", "osu_bw_H_H", "osu_bw_D_D", "osu_latency_H_H", "osu_latency_D_D")
FRESH_BUFFERS = "osu_bw_H_H_multiple"


def by_size(result: Result, column: str) -> dict:
    return {row["size"]: row[column] for row in result.rows}


def copy_bandwidth(result: Result, rank: int, direction: str, size: int) -> float:
    for row in result.rows:
        if (row["rank"], row["direction"], row["host_kind"], row["size"]) == (rank, direction, "H!", size):
            return row["bandwidth"]
    raise ValueError(
        f"devbw has no pinned {direction} row of rank {rank} at {size} B; " f"measure it with -m covering {size} B"
    )


def bandwidth_rows(results: dict) -> list[dict]:
    dd, hh = by_size(results["osu_bw_D_D"], "bandwidth"), by_size(results["osu_bw_H_H"], "bandwidth")
    fresh = by_size(results[FRESH_BUFFERS], "bandwidth") if FRESH_BUFFERS in results else {}
    rows = []
    for size in sorted(s for s in dd if s >= BANDWIDTH_FROM):
        if size not in hh:
            raise ValueError(f"osu_bw_H_H has no {size} B row; run both with the same -m")
        device = min(copy_bandwidth(results["devbw"], 0, "d2h", size), copy_bandwidth(results["devbw"], 1, "h2d", size))
        reference = min(device, hh[size])
        ratio = dd[size] / reference
        rows.append(
            {
                "size": size,
                "dd": dd[size],
                "device": device,
                "hh": hh[size],
                "ratio": ratio,
                "met": ratio >= BANDWIDTH_TARGET,
                "hh_fresh": fresh.get(size),
                "ratio_fresh": dd[size] / min(device, fresh[size]) if size in fresh else None,
            }
        )
    if not rows:
        raise ValueError(f"osu_bw_D_D has no size of {BANDWIDTH_FROM} B or more; run it with -m up to 64M")
    return rows


def latency_rows(results: dict) -> tuple[float, list[dict]]:
    ranks = sorted({row["rank"] for row in results["devbw"].rows})
    round_trip = sum(devbw.round_trip(results["devbw"], rank) for rank in ranks) / len(ranks)
    dd = by_size(results["osu_latency_D_D"], "latency_avg")
    hh = by_size(results["osu_latency_H_H"], "latency_avg")
    rows = []
    for size in sorted(s for s in dd if s <= LATENCY_UP_TO and s in hh):
        ratio = (dd[size] - hh[size]) / (LATENCY_ROUND_TRIPS * round_trip)
        rows.append({"size": size, "dd": dd[size], "hh": hh[size], "ratio": ratio, "met": ratio <= 1})
    if not rows:
        raise ValueError(f"the latency results share no size up to {LATENCY_UP_TO} B")
    return round_trip, rows


def report(directory: Path) -> str:
    missing = [name for name in FILES if not (directory / f"{name}.json").exists()]
    if missing:
        raise ValueError(
            f"{directory} lacks {', '.join(f'{name}.json' for name in missing)}; "
            f"run bench/gpu_campaign.sh to make them"
        )
    fresh = (directory / f"{FRESH_BUFFERS}.json").exists()
    names = FILES + ((FRESH_BUFFERS,) if fresh else ())
    results = {name: Result.read_json(directory / f"{name}.json") for name in names}
    devices = results["osu_bw_D_D"].env.get("rank_devices", [])
    context = f"{'H-H -b m':>10}{'ratio':>8}" if fresh else ""
    lines = [
        f"# device targets, {directory}: {' | '.join(devices)}",
        f"# D-D bandwidth / min(pinned copy, H-H MPI bandwidth), target >= {BANDWIDTH_TARGET}",
    ]
    if fresh:
        lines.append("# context, not the target: the same over H-H with fresh buffers per message (-b multiple)")
    lines.append(f"{'# Size':<12}{'D-D(GB/s)':>12}{'copy(GB/s)':>12}{'H-H(GB/s)':>12}{'ratio':>9}  verdict{context}")
    for row in bandwidth_rows(results):
        line = (
            f"{row['size']:<12d}{row['dd'] / 1e9:12.2f}{row['device'] / 1e9:12.2f}{row['hh'] / 1e9:12.2f}"
            f"{row['ratio']:9.3f}  {'met    ' if row['met'] else 'MISSED '}"
        )
        if row["hh_fresh"] is not None:
            line += f"{row['hh_fresh'] / 1e9:10.2f}{row['ratio_fresh']:8.3f}"
        lines.append(line.rstrip())
    round_trip, rows = latency_rows(results)
    lines += [
        f"# (D-D - H-H latency) / {LATENCY_ROUND_TRIPS} device round trips "
        f"(RT = {round_trip * 1e6:.2f} us), target <= 1",
        f"{'# Size':<12}{'D-D(us)':>12}{'H-H(us)':>12}{'ratio':>9}  verdict",
    ]
    for row in rows:
        lines.append(
            f"{row['size']:<12d}{row['dd'] * 1e6:12.2f}{row['hh'] * 1e6:12.2f}{row['ratio']:9.3f}"
            f"  {'met' if row['met'] else 'MISSED'}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="one mapping's output directory of bench/gpu_campaign.sh")
    args = parser.parse_args(argv)
    try:
        print(report(args.directory))
    except ValueError as error:
        print(f"gpu_targets: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
