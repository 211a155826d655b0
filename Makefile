# The two entry points of README.md. Both run the whole set-up first
# (scripts/setup.sh is idempotent), so each works on a fresh machine.
# FPGACOMM_PYTHON: an existing interpreter to build into (scripts/setup.sh).
FPGACOMM_PYTHON ?=
export FPGACOMM_PYTHON
PYTHON := $(if $(FPGACOMM_PYTHON),$(FPGACOMM_PYTHON),.venv/bin/python)
NP ?= 2
RESULTS ?= results

# Open MPI refuses root without these; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

.PHONY: setup suite test test-fast bench docs lint
setup:
	scripts/setup.sh

# The quick set (fpgacomm suite --full: every test), which says its expected time first.
# Each run in $(RESULTS)/<UTC date-time>/; $(RESULTS)/latest links to the newest complete one.
suite: setup
	mpirun -np $(NP) --oversubscribe $(PYTHON) -m fpgacomm suite $(RESULTS)

# Every test (CI runs this); test-fast: the unit tests alone, a minute or two, leaving out
# the tests marked mpi (ranks under mpirun or Slurm) and slow (pyproject.toml, tests/conftest.py).
test: setup
	$(PYTHON) -m pytest -q

test-fast: setup
	$(PYTHON) -m pytest -q -m "not mpi and not slow"

bench: setup
	$(PYTHON) bench/pt2pt.py

# The rendered reference in docs/_build/html (docs/conf.py), warnings as errors.
docs: setup
	$(PYTHON) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# The code's checks, before the tests in CI: ruff (lint and format, configured in
# pyproject.toml) and clang-format (.clang-format) over the code the project writes.
CPP_SOURCES = $(shell git ls-files 'src/*.cpp' 'src/*.hpp' 'tests/cpp/*.cpp' 'tests/cpp/*.hpp' 'bench/*.cpp')
lint: setup
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	clang-format --dry-run -Werror $(CPP_SOURCES)
