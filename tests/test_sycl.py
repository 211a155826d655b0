"""OMB-FPGA's SYCL interface (-d sycl) on Intel's FPGA emulator, under mpirun:
validated transfers, collectives, the device per rank, every refusal, the
devices listing, and a build without SYCL."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fpgacomm import Result
from processes import ENV, command, fpgacomm

pytestmark = [pytest.mark.mpi]

try:
    from fpgacomm import _sycl  # noqa: F401
except ImportError as error:
    # Where set-up built without SYCL (no wheels, FPGACOMM_SYCL=no) these skip
    # and say so; in CI (CI set), where set-up caches the runtime unless told
    # not to, its absence fails them.
    REASON = f"this build of fpgacomm has no SYCL ({error}); scripts/setup.sh caches Intel's SYCL runtime for " "it"
    if os.environ.get("CI") and os.environ.get("FPGACOMM_SYCL") != "no":
        raise RuntimeError(REASON) from None
    pytestmark.append(pytest.mark.skip(reason=REASON))

SMALL = ("-m", "1:1M", "--chunk", "256K", "-i", "2", "-x", "1", "-c")


def sycl_rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if line[:1].isdigit()]


@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
@pytest.mark.parametrize("kinds", [("D", "D"), ("H", "D")])
def test_point_to_point_moves_validated_data_through_sycl(test, kinds, tmp_path):
    """Sizes past the chunk (256 KiB) are staged in pipelined chunks through
    malloc_host memory; every message is checked on the receiving side."""
    target = tmp_path / "run.json"
    run = fpgacomm("osu", test, "-d", "sycl", *kinds, *SMALL, "--json", str(target), ranks=2)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].startswith("# OSU MPI-SYCL ")
    rows = sycl_rows(run.stdout)
    assert len(rows) == 21 and all(row[-1] == "Pass" for row in rows)
    result = Result.read_json(target)
    sycl = result.env["sycl"]
    assert sycl["runtime"] == "sycl" and sycl["version"].startswith("2025.0.5 (libsycl 8.")
    assert sycl["backend"] == "opencl" and sycl["emulated"] is True and "Emulation" in sycl["device"]
    assert result.params["device_api"] == "sycl" and result.params["recv_route"] == "staged"
    assert result.params["chunk_bytes"] == 256 * 1024
    assert "opencl" not in result.env


def test_collectives_validated_on_three_ranks():
    for op in ("allreduce", "alltoall"):
        run = fpgacomm("osu", op, "-d", "sycl", "-c", "-m", "4:16K", "-i", "2", "-x", "1", ranks=3)
        assert run.returncode == 0, (op, run.stderr)
        assert run.stdout.startswith("# OSU MPI-SYCL ")
        rows = sycl_rows(run.stdout)
        assert len(rows) == 13 and all("Pass" in row for row in rows), run.stdout


def test_timeline_from_sycl_event_profiling(tmp_path):
    target = tmp_path / "timeline.json"
    run = fpgacomm(
        "osu",
        "bw",
        "-d",
        "sycl",
        "D",
        "D",
        "-m",
        "1M:1M",
        "--chunk",
        "256K",
        "-i",
        "2",
        "-x",
        "1",
        "-W",
        "2",
        "--timeline",
        str(target),
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    rows = json.loads(target.read_text())["rows"]
    # A window of 2 messages of 4 chunks on each side, each chunk with its copy's device time.
    assert len(rows) == 16 and {row["direction"] for row in rows} == {"send", "recv"}
    assert all(row["copy_enqueued"] <= row["copy_done"] and row["start_to_end"] >= 0 for row in rows)


def latency_mapped(mapping: str, *options) -> subprocess.CompletedProcess:
    """osu latency -d sycl D D at 8 B on 2 ranks, with FPGA_MAPPING set to `mapping` and passed on by mpirun."""
    latency = ("osu", "latency", "-d", "sycl", "D", "D", "-m", "8", *options)
    return subprocess.run(
        command(*latency, ranks=2, oversubscribe=True, mpirun_options=("-x", "FPGA_MAPPING")),
        capture_output=True,
        text=True,
        env=dict(ENV, FPGA_MAPPING=mapping),
        timeout=300,
    )


def test_fpga_mapping_chooses_the_sycl_device_of_each_rank(tmp_path):
    target = tmp_path / "mapped.json"
    run = latency_mapped("0:0", "-i", "2", "-x", "1", "--json", str(target))
    assert run.returncode == 0, run.stderr
    result = Result.read_json(target)
    assert result.params["device_map"] == "0:0"
    assert all(
        label.startswith("SYCL device 1 'Intel(R) FPGA Emulation Device'") for label in result.env["rank_devices"]
    )
    run = latency_mapped("0:1")
    message = "FPGA_MAPPING maps node-local rank 1 to device 1, but only 1 device(s) match"
    assert run.returncode == 2 and run.stderr.count(message) == 1, run.stderr


def test_every_refusal_is_one_message_before_anything_is_allocated():
    bank = "the SYCL interface cannot choose a memory bank from the host"
    cases = [
        (("osu", "latency", "-d", "sycl", "D", "B"), 2, bank),
        (("osu", "bw", "-d", "sycl", "P", "D"), 2, bank),
        (("osu", "allreduce", "-d", "sycl", "--mem", "B"), 2, bank),
        (("osu", "latency", "-d", "sycl", "H!", "D"), 2, "-d sycl offers H (host) and D (device) memory"),
        (("osu", "bcast", "-d", "sycl", "--mem", "H"), 2, "-d sycl puts the buffers in device memory, and --mem H"),
        (("osu", "latency", "-d", "sycl", "-d", "opencl", "D", "D"), 2, "-d sycl and -d opencl contradict each other"),
        (("osu", "put_bw", "-d", "sycl"), 2, "the one-sided tests have no SYCL interface"),
        (("osu", "latency", "-d", "sycl", "D", "D", "--touch"), 2, "fpgacomm's SYCL path has no kernels"),
        (("osu", "bw", "-d", "sycl", "D", "D", "--path", "mapped"), 2, "cannot be mapped into host memory"),
        (
            ("osu", "latency", "-d", "sycl", "D", "D", "--device-type", "gpu"),
            2,
            "-d sycl found no SYCL device of type gpu",
        ),
    ]
    for args, ranks, message in cases:
        run = fpgacomm(*args, ranks=ranks)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.count(message) == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr and not run.stdout, (args, run.stdout)
    # No device: the message names the SYCL devices that were found.
    run = fpgacomm("osu", "latency", "-d", "sycl", "D", "D", "--device-type", "cpu", ranks=2)
    assert run.returncode == 2
    assert "the SYCL devices found:" in run.stderr and "Intel(R) FPGA Emulation Device" in run.stderr
    assert "no USM device allocations" in run.stderr  # PoCL's CPU device


def test_a_build_without_sycl_says_how_to_get_it():
    """The module hidden, as in a build with FPGACOMM_SYCL=no."""
    hide = (
        "import sys; sys.modules['fpgacomm._sycl'] = None; from fpgacomm.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    for args in (("osu", "latency", "-d", "sycl", "D", "D", "-m", "8"), ("osu", "allreduce", "-d", "sycl")):
        run = subprocess.run(
            ["mpirun", "-np", "2", "--oversubscribe", sys.executable, "-c", hide, *args],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
        )
        assert run.returncode == 2, run.stderr
        message = "-d sycl needs fpgacomm's SYCL module, and this build of fpgacomm has none"
        assert run.stderr.count(message) == 1 and "scripts/setup.sh" in run.stderr, run.stderr
    devices = subprocess.run(
        [sys.executable, "-c", hide, "devices", "--no-probe"], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert devices.returncode == 0 and "SYCL device" not in devices.stdout


def test_devices_lists_sycl_devices_beside_opencl_ones(tmp_path):
    run = fpgacomm("devices", "--json", str(tmp_path / "devices.json"))
    assert run.returncode == 0, run.stderr
    table = json.loads((tmp_path / "devices.json").read_text())
    sycl = [row for row in table if row["api"] == "sycl"]
    assert any(row["api"] == "opencl" for row in table) and sycl
    emulator = next(row for row in sycl if row["emulated"])
    assert emulator["usm_device_allocations"] and emulator["backend"] == "opencl" and emulator["kinds"] == ["H", "D"]
    assert f"SYCL device {emulator['device_index']}: {emulator['name']}" in run.stdout
    assert "memory kinds with -d sycl: H D" in run.stdout
    assert any(not row["usm_device_allocations"] for row in sycl)  # PoCL's CPU device lacks them


def test_opencl_runs_never_load_libsycl():
    code = (
        "from fpgacomm import collectives, osu; from fpgacomm import _core; _core.all_devices(); "
        "print('libsycl' in open('/proc/self/maps').read())"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stderr


@pytest.fixture
def private_runtime(tmp_path):
    """A private copy of the SYCL runtime's cache (FPGACOMM_CACHE): its
    libraries and their manifest, to be damaged without touching the real one."""
    from fpgacomm.runtime import sycl_runtime

    real = sycl_runtime.root()
    copy = tmp_path / "cache" / real.name
    copy.mkdir(parents=True)
    shutil.copytree(real / "lib", copy / "lib")
    shutil.copy2(real / "SHA256SUMS", copy / "SHA256SUMS")
    return copy


def with_cache(runtime) -> dict:
    return {**ENV, "FPGACOMM_CACHE": str(runtime.parent)}


def test_the_runtime_is_loaded_from_the_folder_that_was_checked(private_runtime):
    code = (
        "from fpgacomm.runtime import devices; devices.sycl_module().all_devices(); "
        "print([line.split()[-1] for line in open('/proc/self/maps') if 'libsycl.so' in line][0])"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=with_cache(private_runtime)
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(private_runtime / "lib" / "libsycl.so.8")


def truncate(library: Path) -> None:
    library.write_bytes(library.read_bytes()[: 1 << 16])  # loading this ends the process with a bus error


@pytest.mark.parametrize(
    "library, damage, problem",
    [
        ("libsycl.so.8", truncate, "lib/libsycl.so.8 does not match its checksum (damaged or truncated)"),
        ("libur_adapter_opencl.so.0", Path.unlink, "lib/libur_adapter_opencl.so.0 is missing"),  # SYCL: no device
    ],
    ids=["truncated", "missing"],
)
def test_a_damaged_runtime_is_found_before_it_loads(private_runtime, tmp_path, library, damage, problem):
    damage(private_runtime / "lib" / library)
    message = f"Intel's SYCL runtime in {private_runtime} cannot be loaded: {problem}; run scripts/sycl_runtime.sh"
    env = with_cache(private_runtime)
    listing = subprocess.run(
        [sys.executable, "-m", "fpgacomm", "devices", "--json", str(tmp_path / "d.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert listing.returncode == 0, listing.stderr
    assert "platform 0 " in listing.stdout and "Portable Computing Language" in listing.stdout  # OpenCL still listed
    assert listing.stdout.count(f"SYCL: no devices listed: {message}") == 1 and "SYCL device" not in listing.stdout
    assert json.loads((tmp_path / "d.json").read_text())[-1]["error"].startswith(message)
    for args in (("osu", "bw", "-d", "sycl", "D", "D", "-m", "8"), ("osu", "allreduce", "-d", "sycl", "-m", "8")):
        run = subprocess.run(
            command(*args, ranks=2, mpirun_options=("-x", "FPGACOMM_CACHE")),
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert run.returncode == 2, run.stderr
        assert run.stderr.count(message) == 1 and "Traceback" not in run.stderr and run.stdout == "", run.stderr
