"""bench/gpu_targets.py: the GPU campaign's target ratios from hand-made results with known answers."""

import sys
from pathlib import Path

import pytest
from fpgacomm import Result, devbw

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import gpu_targets  # noqa: E402

MIB = 1 << 20
ENV = {"rank_devices": ["gpu 0", "gpu 1"]}


def copy_row(rank, size, direction, kind, seconds):
    row = dict.fromkeys(devbw.UNITS, 0.0)
    row.update(
        rank=rank,
        size=size,
        direction=direction,
        host_kind=kind,
        iterations=1,
        time_avg=seconds,
        bandwidth=size / seconds,
    )
    return row


def write_campaign(directory: Path, dd_16m=8e9):
    # Pinned copies: 1 B takes 5 us (h2d) + 6 us (d2h) on rank 0, 7 + 8 us on rank 1;
    # at 16 MiB rank 0 reads at 20 GB/s, rank 1 writes at 12 GB/s.
    rows = []
    seconds = {(0, "h2d"): 5e-6, (0, "d2h"): 6e-6, (1, "h2d"): 7e-6, (1, "d2h"): 8e-6}
    rates = {(0, "h2d"): 30e9, (0, "d2h"): 20e9, (1, "h2d"): 12e9, (1, "d2h"): 25e9}
    for (rank, direction), time in seconds.items():
        for kind in ("H", "H!"):
            rows.append(copy_row(rank, 1, direction, kind, time))
            rows.append(copy_row(rank, 16 * MIB, direction, kind, 16 * MIB / rates[(rank, direction)]))
    Result("devbw", {}, ENV, rows, devbw.UNITS).write_json(directory / "devbw.json")
    bandwidth = {"size": "B", "bandwidth": "B/s"}
    Result(
        "osu_bw", {}, ENV, [{"size": 1024, "bandwidth": 1e9}, {"size": 16 * MIB, "bandwidth": 15e9}], bandwidth
    ).write_json(directory / "osu_bw_H_H.json")
    Result(
        "osu_bw", {}, ENV, [{"size": 1024, "bandwidth": 1e8}, {"size": 16 * MIB, "bandwidth": dd_16m}], bandwidth
    ).write_json(directory / "osu_bw_D_D.json")
    latency = {"size": "B", "latency_avg": "s"}
    Result(
        "osu_latency", {}, ENV, [{"size": 8, "latency_avg": 2e-6}, {"size": 4096, "latency_avg": 3e-6}], latency
    ).write_json(directory / "osu_latency_H_H.json")
    Result(
        "osu_latency", {}, ENV, [{"size": 8, "latency_avg": 17e-6}, {"size": 4096, "latency_avg": 50e-6}], latency
    ).write_json(directory / "osu_latency_D_D.json")


def test_bandwidth_ratio_is_against_the_slower_copy_or_mpi(tmp_path):
    write_campaign(tmp_path)
    results = {name: Result.read_json(tmp_path / f"{name}.json") for name in gpu_targets.FILES}
    (row,) = gpu_targets.bandwidth_rows(results)
    # min(rank 0 d2h 20 GB/s, rank 1 h2d 12 GB/s) = 12 GB/s < H-H 15 GB/s; 8 / 12
    assert row["size"] == 16 * MIB and row["device"] == pytest.approx(12e9)
    assert row["ratio"] == pytest.approx(8 / 12) and not row["met"]


def test_latency_excess_is_counted_in_device_round_trips(tmp_path):
    write_campaign(tmp_path)
    results = {name: Result.read_json(tmp_path / f"{name}.json") for name in gpu_targets.FILES}
    round_trip, rows = gpu_targets.latency_rows(results)
    assert round_trip == pytest.approx((11e-6 + 15e-6) / 2)  # the ranks' 1-byte write + read, averaged
    assert [row["size"] for row in rows] == [8]  # 4 KiB is not a small message
    assert rows[0]["ratio"] == pytest.approx(15e-6 / (2 * 13e-6)) and rows[0]["met"]


def test_report_prints_verdicts_and_names_missing_files(tmp_path, capsys):
    write_campaign(tmp_path, dd_16m=11e9)
    assert gpu_targets.main([str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "16777216" in text and "0.917  met" in text and "gpu 0 | gpu 1" in text
    (tmp_path / "devbw.json").unlink()
    assert gpu_targets.main([str(tmp_path)]) == 2
    assert "lacks devbw.json; run bench/gpu_campaign.sh" in capsys.readouterr().err


def test_fresh_buffer_h_h_is_context_beside_the_unchanged_verdict(tmp_path, capsys):
    write_campaign(tmp_path)
    Result("osu_bw", {}, ENV, [{"size": 16 * MIB, "bandwidth": 6e9}], {"size": "B", "bandwidth": "B/s"}).write_json(
        tmp_path / "osu_bw_H_H_multiple.json"
    )
    assert gpu_targets.main([str(tmp_path)]) == 0
    text = capsys.readouterr().out
    # 8 GB/s over min(copy 12, H-H 15) misses; over min(copy 12, fresh H-H 6) it is 1.333
    (row,) = [line for line in text.splitlines() if line.startswith("16777216")]
    assert row.split() == ["16777216", "8.00", "12.00", "15.00", "0.667", "MISSED", "6.00", "1.333"]
    assert "context, not the target" in text
