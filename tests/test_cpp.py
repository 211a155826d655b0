"""The C++ tests (ctest) of the parts with logic, built with the package."""

import glob
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ctest_passes():
    trees = sorted(glob.glob(str(ROOT / "build" / "*" / "CTestTestfile.cmake")), key=lambda p: Path(p).stat().st_mtime)
    assert trees, "no C++ build tree under build/: run scripts/setup.sh (make test does)"
    run = subprocess.run(
        ["ctest", "--output-on-failure", "--test-dir", str(Path(trees[-1]).parent)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "100% tests passed" in run.stdout
