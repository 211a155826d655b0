"""fpgacomm on NVIDIA GPUs through NVIDIA's OpenCL (lent machines with NVIDIA GPUs).

Runs only where an NVIDIA OpenCL platform is present and skips elsewhere,
saying why. Every command names the platform, so a rank that cannot see the
GPU fails loudly instead of measuring PoCL.
"""

import json
import os
import subprocess
import sys

import pytest
from fpgacomm import Result, _core

GPUS = [info for info in _core.all_devices() if "NVIDIA" in info.platform_name and info.type == "gpu"]
pytestmark = [
    pytest.mark.mpi,
    pytest.mark.skipif(
        not GPUS, reason="no NVIDIA OpenCL platform with a GPU here " "(the test needs the lent GPU machine)"
    ),
]


def rank_environment() -> dict:
    """The environment for mpirun. Open MPI forwards an OCL_ICD_FILENAMES list
    cut at its first colon (bench/RESULTS.md, H100), which can hide the NVIDIA
    ICD from the ranks; they get the NVIDIA entries alone."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    icds = env.get("OCL_ICD_FILENAMES", "")
    if ":" in icds:
        nvidia = [name for name in icds.split(":") if "nvidia" in name.lower()]
        env["OCL_ICD_FILENAMES"] = nvidia[0] if nvidia else icds
    return env


def fpgacomm(*args, ranks=None, env=None, timeout=300):
    command = [sys.executable, "-m", "fpgacomm", *args, "--platform", "NVIDIA", "--device-type", "gpu"]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env={**rank_environment(), **(env or {})}
    )


def test_devices_lists_every_gpu_with_host_pinned_and_device_memory(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "fpgacomm", "devices", "--json", str(tmp_path / "d.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env=rank_environment(),
    )
    assert run.returncode == 0, run.stderr
    gpus = [
        row
        for row in json.loads((tmp_path / "d.json").read_text())
        if "NVIDIA" in row["platform"] and row["type"] == "gpu"
    ]
    assert len(gpus) == len(GPUS)
    for row in gpus:
        assert row["kinds"] == ["H", "H!", "D"], row
        assert set(row["unavailable"]) == {"B", "P"}
        assert not row["host_unified_memory"] and row["global_mem_bytes"] >= row["max_alloc_bytes"] > 0
        assert f"device {row['device_index']}: {row['name']}" in run.stdout


def test_osu_bw_device_to_device_validates_16_mib(tmp_path):
    """One GPU per rank where there are two, else both ranks on GPU 0."""
    mapping = "0:1" if len(GPUS) >= 2 else "0:0"
    path = tmp_path / "bw.json"
    run = fpgacomm(
        "osu",
        "bw",
        "D",
        "D",
        "-m",
        "16M:16M",
        "-i",
        "5",
        "-x",
        "1",
        "-W",
        "8",
        "-c",
        "--json",
        str(path),
        ranks=2,
        env={"FPGA_MAPPING": mapping},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    result = Result.read_json(path)
    assert [row["size"] for row in result.rows] == [16 << 20]
    assert result.rows[0]["validation"] == "pass" and result.rows[0]["bandwidth"] > 0
    assert result.params["send_route"] == result.params["recv_route"] == "staged"
    assert result.env["opencl"]["device_type"] == "gpu" and "NVIDIA" in result.env["opencl"]["platform"]
    devices = result.env["rank_devices"]
    assert (devices[0] != devices[1]) == (mapping == "0:1"), devices


def test_beff_kernel_type_passes_validation(tmp_path):
    path = tmp_path / "beff.json"
    run = fpgacomm(
        "beff", "--comm-type", "kernel", "-m", "10", "-n", "1", "--target-time", "0.02", "--json", str(path), ranks=2
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    result = Result.read_json(path)
    assert [row["size"] for row in result.rows] == [1 << m for m in range(11)]
    assert all(row["validation"] == "pass" and row["bandwidth"] > 0 for row in result.rows)
    assert "NVIDIA" in result.env["opencl"]["platform"]
