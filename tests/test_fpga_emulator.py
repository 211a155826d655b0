"""The FPGA path on Intel's FPGA emulation platform, which scripts/setup.sh
installs and registers: device buffers on both sides, validation, --touch,
every OSU family, b_eff's pcie and kernel types and gather on D buffers, all
under mpirun with --device-type fpga, and the memory kinds it lacks refused.

Where set-up left the emulator out (FPGACOMM_FPGA_EMULATOR=no, or
FPGACOMM_PYTHON machines) these tests skip and say so; in CI (CI set), where
set-up installs it unless told not to, its absence fails them.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fpgacomm import Result, _core
from fpgacomm.runtime.devices import describe, kernel_dir
from loaded import without_load_warning
from processes import HERE, fpgacomm, mpirun

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parent.parent
EMULATORS = [info for info in _core.all_devices() if info.emulated and info.type == "fpga"]


@pytest.fixture(scope="module")
def emulator():
    if not EMULATORS:
        reason = (
            "Intel's FPGA emulator is not registered with the OpenCL ICD loader "
            "(scripts/setup.sh installs and registers it)"
        )
        if os.environ.get("CI") and os.environ.get("FPGACOMM_FPGA_EMULATOR") != "no":
            pytest.fail(reason)
        pytest.skip(reason)
    return EMULATORS[0]


def fpga(*args, ranks=2, timeout=300):
    return fpgacomm(*args, "--device-type", "fpga", ranks=ranks, timeout=timeout)


@pytest.mark.parametrize("info", _core.all_devices(), ids=lambda info: info.name)
def test_a_written_device_buffer_reads_back_at_once_on_every_device(info):
    """A blocking write returns once its source may be reused; the emulator
    had not finished the copy then, and a read on the other queue saw the old
    bytes about half the time. Buffer.write must complete the write."""
    device = _core.Device(info, kernel_dir())
    for size in (1, 2, 7, 64, 4096, 65536):
        buffer = _core.Buffer(device, "D", size)
        for trial in range(8):
            pattern = ((np.arange(size) * 13 + trial) & 0xFF).astype(np.uint8)
            buffer.write(pattern)
            assert np.array_equal(np.asarray(buffer.read(size)), pattern), (size, trial)


def test_the_emulator_is_an_fpga_with_host_and_device_memory_only(emulator):
    row = next(row for row in describe() if row["emulated"])
    assert row["type"] == "fpga" and "Emulation" in row["platform"]
    assert row["kinds"] == ["H", "H!", "D"]
    assert "cl_intel_channels" in emulator.extensions
    assert "cl_intel_mem_alloc_buffer_location" not in emulator.extensions


@pytest.mark.parametrize(
    "kind,reason",
    [
        ("B", "HBM (B) needs the Xilinx XRT memory-bank extension or Intel's " "cl_intel_mem_alloc_buffer_location"),
        ("P", "PLRAM (P) needs the Xilinx XRT memory-bank extension"),
    ],
)
def test_memory_kinds_the_emulator_lacks_are_refused_with_the_reason(emulator, kind, reason):
    run = fpga("osu", "latency", kind, kind, "-m", "1:1", "-i", "1", "-x", "0")
    assert run.returncode == 2, run.stdout + run.stderr
    assert reason in run.stderr and "Intel(R) FPGA Emulation Device" in run.stderr
    assert run.stderr.count(reason) == 1 and "Traceback" not in run.stderr


def test_device_buffers_validated_and_touched_and_the_result_says_emulation(emulator, tmp_path):
    out = tmp_path / "latency.json"
    run = fpga("osu", "latency", "D", "D", "-m", "1:4K", "-i", "20", "-x", "2", "-c", "--touch", "--json", str(out))
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in run.stdout.splitlines() if line[:1].isdigit()]
    assert [int(row[0]) for row in rows] == [1 << m for m in range(13)]
    assert all(row[-1] == "Pass" for row in rows)
    result = Result.read_json(out)
    opencl = result.env["opencl"]
    assert opencl["emulated"] is True and opencl["device"] == "Intel(R) FPGA Emulation Device"
    assert "not an FPGA's performance" in opencl["emulation"]
    assert all(label.endswith("(emulated)") for label in result.env["rank_devices"])
    assert result.params["touch"] is True


@pytest.mark.parametrize(
    "command",
    [
        ("osu", "bw", "D", "D", "-m", "1:64K", "-i", "4", "-x", "1", "-W", "4", "-c"),
        ("osu", "bibw", "D", "D", "-m", "1:64K", "-i", "4", "-x", "1", "-W", "4", "-c", "--path", "staged"),
        ("osu", "multi_lat", "D", "D", "-m", "1:1K", "-i", "4", "-x", "1", "-c"),
        ("osu", "mbw_mr", "D", "D", "-m", "1:1K", "-i", "4", "-x", "1", "-W", "4", "-c", "--touch"),
        ("osu", "allreduce", "--mem", "D", "-m", "4:4K", "-i", "4", "-x", "1", "-c"),
        ("osu", "allgather", "--mem", "D", "-m", "1:4K", "-i", "4", "-x", "1", "-c"),
        ("osu", "put_bw", "--mem", "D", "-m", "1:4K", "-i", "4", "-x", "1", "-W", "4", "-c"),
        ("osu", "get_latency", "--mem", "D", "-m", "1:4K", "-i", "4", "-x", "1", "-c"),
    ],
    ids=lambda command: command[1],
)
def test_every_osu_family_on_device_buffers_passes_validation(emulator, command):
    run = fpga(*command)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in run.stdout.splitlines() if line[:1].isdigit()]
    assert rows and all(row[-1] == "Pass" for row in rows), run.stdout


@pytest.mark.parametrize("comm_type", ["pcie", "kernel"])
def test_beff_staged_and_kernel_types_deliver_every_message(emulator, comm_type, tmp_path):
    out = tmp_path / "beff.json"
    run = fpga(
        "beff",
        "--comm-type",
        comm_type,
        "-m",
        "8",
        "-n",
        "2",
        "--target-time",
        "0.02",
        "--validation-iterations",
        "2",
        "--json",
        str(out),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = Result.read_json(out)
    assert [row["size"] for row in result.rows] == [1 << m for m in range(9)]
    assert all(row["validation"] == "pass" for row in result.rows)
    assert result.params["loop_rule"] == "adaptive" and result.env["opencl"]["emulated"]


def test_gather_on_device_buffers_checks_every_block(emulator, tmp_path):
    out = tmp_path / "gather.json"
    run = fpga("gather", "--mem", "D", "--sizes", "1K:16K", "--json", str(out), ranks=3)
    assert run.returncode == 0, run.stdout + run.stderr
    result = Result.read_json(out)
    assert result.rows and all(row["validation"] == "pass" for row in result.rows)
    assert json.dumps(result.env["opencl"]["emulated"]) == "true"


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_beff_iec_rings_of_emulated_fpgas(emulator, ranks):
    """tests/mpi/test_beff_iec.py under mpirun: one rank is HPCC FPGA's
    loopback, two share both neighbours, three make an odd ring."""
    run = mpirun(
        ranks,
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        str(HERE / "mpi" / "test_beff_iec.py"),
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout


def test_setup_registers_the_cached_emulator_where_it_is_told(emulator, tmp_path):
    """scripts/fpga_emulator.sh with the cache filled: no download, the
    manifest checked, and one .icd naming the cached library written into
    FPGACOMM_ICD_VENDORS beside copies of the system's .icd files."""
    library = emulator_library()
    if library is None:
        pytest.skip("the emulator is registered from elsewhere than set-up's cache")
    vendors = tmp_path / "vendors"
    run = subprocess.run(
        [str(ROOT / "scripts" / "fpga_emulator.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, FPGACOMM_ICD_VENDORS=str(vendors)),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "found in" in run.stdout and "downloading" not in run.stdout
    assert (vendors / "fpgacomm-intel-fpga-emu.icd").read_text().strip() == str(library)
    system = {path.name for path in Path("/etc/OpenCL/vendors").glob("*.icd")}
    assert {path.name for path in vendors.glob("*.icd")} == system | {"fpgacomm-intel-fpga-emu.icd"}


def emulator_library():
    """The libintelocl_emu.so of set-up's cache, if the loader's registry names it."""
    folders = [os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors"), "/etc/OpenCL/vendors"]
    for folder in folders:
        icd = Path(folder) / "fpgacomm-intel-fpga-emu.icd"
        if icd.is_file():
            return Path(icd.read_text().strip())
    return None


def test_a_pocl_run_writes_nothing_on_stderr_that_fpgacomm_did_not_write(emulator, tmp_path):
    """The emulator's runtime writes "SYCL CPU RT Warning: Unknown host CPU."
    on CPUs its LLVM does not know (AMD EPYC here), and nothing switches it
    off: an OpenCL run that cannot take the emulator leaves it unloaded, and
    MPI_Init's hwloc lists no OpenCL devices. HWLOC_COMPONENTS here is for
    mpirun itself, whose own hwloc runs before fpgacomm does (README.md)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HWLOC_COMPONENTS="-opencl")
    run = subprocess.run(
        [
            "mpirun",
            "-np",
            "2",
            "--oversubscribe",
            sys.executable,
            "-m",
            "fpgacomm",
            "osu",
            "latency",
            "D",
            "D",
            "-m",
            "1:64",
            "-i",
            "2",
            "-x",
            "1",
            "-c",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0 and without_load_warning(run.stderr) == "", run.stderr
    assert run.stdout.count("Pass") == 7
    # Where a run may take the emulator, it still finds it.
    fpga = subprocess.run(
        [
            "mpirun",
            "-np",
            "2",
            "--oversubscribe",
            sys.executable,
            "-m",
            "fpgacomm",
            "osu",
            "latency",
            "D",
            "D",
            "-m",
            "8",
            "-i",
            "2",
            "-x",
            "1",
            "--device-type",
            "fpga",
            "--json",
            str(tmp_path / "fpga.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert fpga.returncode == 0, fpga.stderr
    assert Result.read_json(tmp_path / "fpga.json").env["opencl"]["emulated"] is True
    # MPI started by fpgacomm itself (a singleton, no launcher) loads no OpenCL driver.
    alone = subprocess.run(
        [sys.executable, "-c", "from fpgacomm.runtime import mpi; mpi.world()"],
        capture_output=True,
        text=True,
        timeout=120,
        env={name: value for name, value in env.items() if name != "HWLOC_COMPONENTS"},
    )
    assert alone.returncode == 0 and without_load_warning(alone.stderr) == "", alone.stderr
