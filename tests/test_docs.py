"""The rendered reference (`make docs`): Sphinx builds it with warnings as
errors, every public function and class of the package appears in it, and
the command-line reference holds every command's --help."""

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))

from reference import parsers, public_modules  # noqa: E402  (docs/reference.py, the extension)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The reference as `make docs` builds it (-W: a warning fails the build)."""
    out = tmp_path_factory.mktemp("docs")
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html", str(ROOT / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    return out


def public_objects() -> set[str]:
    """module.name of every public function and class, in the module that defines it."""
    found = set()
    for name in public_modules():
        module = importlib.import_module(name)
        for member, value in vars(module).items():
            if (
                not member.startswith("_")
                and (inspect.isfunction(value) or inspect.isclass(value))
                and value.__module__ == name
            ):
                found.add(f"{name}.{member}")
    return found


def test_every_public_function_and_class_is_in_the_reference(built):
    from sphinx.util.inventory import InventoryFile

    with open(built / "objects.inv", "rb") as inventory:
        documented = InventoryFile.load(inventory, "", lambda base, path: path)
    names = {name for kind in ("py:function", "py:class", "py:exception") for name in documented.get(kind, {})}
    wanted = public_objects()
    assert len(wanted) > 300 and "fpgacomm.benchmarks.osu.latency" in wanted
    assert sorted(wanted - names) == []


def test_the_cli_reference_holds_every_commands_help(built):
    page = (built / "cli.html").read_text()
    commands = [prog for prog, _ in parsers()]
    assert {"fpgacomm", "fpgacomm osu", "fpgacomm suite", "fpgacomm fabric latency"} <= set(commands)
    for prog, _ in parsers():
        assert f'>{prog}<a class="headerlink"' in page, prog  # a section titled by the command line
    assert "--beff-max-size" in page and "run the standard benchmarks" in page


def test_the_pages_are_in_the_reference(built):
    for page in ("SLURM", "METHODS", "FABRIC", "ARCHITECTURE", "cli", "api"):
        assert (built / f"{page}.html").exists(), page
