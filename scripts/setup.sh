#!/usr/bin/env bash
# Everything a fresh Debian 12 machine needs, idempotent: the system packages
# (OpenCL ICD loader and headers, PoCL, Open MPI, Debian's mpi4py/NumPy/
# Matplotlib/pytest built for /usr/bin/python3, nbclient/ipykernel/
# nbformat, with which the tests run the notebooks, pyte, the terminal
# emulator with which they read a terminal's screen, Slurm and MUNGE, which
# tests/test_slurm.py starts as a cluster of its own, and Sphinx with
# myst-parser, which `make docs` builds the reference with), a virtual environment
# in .venv that sees them, the build of fpgacomm into it, the Jupyter kernel
# "fpgacomm" of that environment, and Intel's FPGA
# emulation platform for OpenCL registered beside PoCL
# (scripts/fpga_emulator.sh says where; FPGACOMM_ICD_VENDORS=DIR registers
# it in DIR instead of the loader's global folder, FPGACOMM_FPGA_EMULATOR=no
# leaves it out).
#
# mpi4py comes from Debian on purpose: it is built against Debian's Open MPI,
# the same library fpgacomm._core links, which a wheel from PyPI is not.
#
# FPGACOMM_SYCL=no builds fpgacomm without its SYCL module (-d sycl); by
# default scripts/sycl_runtime.sh caches Intel's SYCL runtime for it.
#
# FPGACOMM_PYTHON=/path/to/python uses an existing interpreter that already
# has mpi4py, NumPy, Matplotlib, pytest, pybind11 and scikit-build-core (as on
# machines without a package registry) and skips the system packages and
# the FPGA emulator (FPGACOMM_FPGA_EMULATOR=yes installs it there too).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake git pkg-config
          ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
          openmpi-bin libopenmpi-dev
          python3-dev python3-venv python3-pip python3-mpi4py python3-numpy
          python3-matplotlib python3-pytest pybind11-dev python3-pybind11
          python3-nbclient python3-ipykernel python3-nbformat python3-pyte
          slurm-wlm munge python3-sphinx python3-myst-parser clang-format)

RUFF_VERSION=0.8.4

if [ -n "${FPGACOMM_PYTHON:-}" ]; then
  python="$FPGACOMM_PYTHON"
else
  missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
  fi
  python=.venv/bin/python
  if ! "$python" -c "import scikit_build_core" 2>/dev/null; then
    "$python" -m pip install -q "scikit-build-core>=0.8"
  fi
  # The linter and formatter that make lint (and CI) run, pinned: another
  # version would judge the same code differently.
  if [ "$("$python" -m ruff --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
    "$python" -m pip install -q "ruff==$RUFF_VERSION"
  fi
fi

if [ -z "${FPGACOMM_PYTHON:-}" ] || [ "${FPGACOMM_FPGA_EMULATOR:-}" = "yes" ]; then
  scripts/fpga_emulator.sh
fi
# Intel's SYCL runtime for -d sycl; where it cannot be had, one line and a
# build without SYCL.
scripts/sycl_runtime.sh

# --no-build-isolation: CMake must see the environment's mpi4py (its C API
# header) and pybind11. The build tree under build/ makes a rebuild incremental.
"$python" -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir="build/{wheel_tag}" .

# The Jupyter kernel "fpgacomm", the one the notebooks name: this
# environment's interpreter, registered in its own prefix (.venv/share/jupyter),
# where Jupyter and nbclient started from the environment look, so that
# every clone has its own and none replaces another's (a Jupyter started
# elsewhere finds it with JUPYTER_PATH=$PWD/.venv/share/jupyter).
if "$python" -c "import ipykernel" 2>/dev/null; then
  PYDEVD_DISABLE_FILE_VALIDATION=1 "$python" -m ipykernel install --sys-prefix --name fpgacomm --display-name "Python 3 (fpgacomm)" >/dev/null \
    || echo "setup: could not register the Jupyter kernel fpgacomm in $("$python" -c 'import sys; print(sys.prefix)')"
else
  echo "setup: ipykernel is not importable: no Jupyter kernel registered (the notebooks name the kernel fpgacomm)"
fi
