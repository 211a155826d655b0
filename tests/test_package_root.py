"""The package's front door: what `import fpgacomm` gives and what it leaves alone."""

import json
import os
import subprocess
import sys

import fpgacomm
import processes
import pytest

LAUNCHER_PREFIXES = ("OMPI_", "PMIX_", "PMI_", "SLURM_")


def _in_fresh_interpreter(code: str) -> dict:
    # A plain process: not a rank, though this one may be (MPI started as a singleton puts a launcher's
    # variables into its environment, which its children inherit).
    plain = {key: value for key, value in os.environ.items() if not key.startswith(LAUNCHER_PREFIXES)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=plain)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_import_changes_no_environment_and_installs_no_import_hook():
    seen = _in_fresh_interpreter(
        "import json, os, sys\n"
        "before, hooks = dict(os.environ), list(sys.meta_path)\n"
        "import fpgacomm\n"
        "print(json.dumps({'environ_changed': sorted(set(os.environ.items()) ^ set(before.items())),\n"
        "                  'hooks_added': [repr(h) for h in sys.meta_path if h not in hooks],\n"
        "                  'heavy': [m for m in ('mpi4py.MPI', 'matplotlib') if m in sys.modules]}))\n"
    )
    assert seen == {"environ_changed": [], "hooks_added": [], "heavy": []}


def test_dir_lists_the_public_names_and_each_resolves():
    names = dir(fpgacomm)
    for public in (
        "osu",
        "collectives",
        "onesided",
        "beff",
        "gather",
        "devbw",
        "overhead",
        "fabric",
        "gather_sim",
        "fit",
        "plot",
        "report",
        "result",
        "Result",
        "compare",
        "load",
        "launch",
        "__version__",
    ):
        assert public in names and public in fpgacomm.__all__
        assert getattr(fpgacomm, public) is not None
    assert fpgacomm.osu.__name__ == "fpgacomm.benchmarks.osu"
    assert fpgacomm.plot.__name__ == "fpgacomm.figures.plot"
    assert "importlib" not in names and "PUBLIC_MODULES" not in names


def test_short_names_import_as_their_modules():
    from fpgacomm import fabric, osu, report

    assert osu.__name__ == "fpgacomm.benchmarks.osu" and report.__name__ == "fpgacomm.results.report"
    assert fabric.__name__ == "fpgacomm.simulation.fabric"


def test_an_unknown_name_is_an_attribute_error():
    try:
        _ = fpgacomm.nosuch
    except AttributeError as error:
        assert "has no attribute 'nosuch'" in str(error)
    else:
        raise AssertionError("fpgacomm.nosuch resolved")


@pytest.mark.mpi
@pytest.mark.parametrize("given", [None, "3"], ids=["unset", "user's"])
def test_a_launched_rank_starts_no_blas_threads_unless_the_user_says_how_many(given):
    # NumPy's OpenBLAS starts one thread per core in each rank otherwise (runtime/launched.py).
    # One write per rank: unbuffered (PYTHONUNBUFFERED), print writes its text and its newline apart, and the
    # two ranks' lines came interleaved ('"3""3"').
    code = (
        "import json, os, sys, fpgacomm; sys.stdout.write(json.dumps(os.environ.get('OPENBLAS_NUM_THREADS')) + '\\n')"
    )
    run = processes.mpirun(
        2, sys.executable, "-c", code, timeout=120, env={} if given is None else {"OPENBLAS_NUM_THREADS": given}
    )
    assert run.returncode == 0, run.stderr
    assert [json.loads(line) for line in run.stdout.split()] == [given or "1"] * 2
