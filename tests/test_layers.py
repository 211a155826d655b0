"""The package's layers (docs/ARCHITECTURE.md): every module imports only
modules of its own layer or those below, and no modules import each other in
a circle. Imports inside functions count: a late import is still an arrow."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "fpgacomm"

# Bottom to top; a module's layer is its folder, or its name at the root.
LAYERS = [
    "_core",
    "params",
    "schedules",
    "catalog",
    "runtime",
    "results",
    "models",
    "simulation",
    "benchmarks",
    "figures",
    "calibration",
    "suite",
    "cli",
]
# params, schedules, units and the catalog of benchmarks depend on nothing but the core: one floor.
FLOOR = {layer: index for index, layer in enumerate(LAYERS)}
FLOOR["schedules"] = FLOOR["catalog"] = FLOOR["units"] = FLOOR["params"]
# The compiled modules: the core, and the SYCL devices beside it (loaded only for -d sycl).
COMPILED = ("fpgacomm._core", "fpgacomm._sycl")
FLOOR["_sycl"] = FLOOR["_core"]


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(["fpgacomm", *parts])] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """Every fpgacomm module that module `name` imports, anywhere in its body."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    known = modules()
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in known or candidate in COMPILED else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module.startswith("fpgacomm.") or module == "fpgacomm"}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fpgacomm"


def test_every_module_has_a_layer():
    unplaced = [
        name for name in modules() if layer(name) not in FLOOR and name not in ("fpgacomm", "fpgacomm.__main__")
    ]
    assert not unplaced, f"modules outside the layers of docs/ARCHITECTURE.md: {unplaced}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_imports_point_down(name):
    if name in ("fpgacomm", "fpgacomm.__main__"):
        return  # the package root re-exports the public API; __main__ runs the command
    # The package root sits above every layer: it re-exports them all.
    upward = [
        target
        for target in imports(name, modules()[name])
        if FLOOR.get(layer(target), len(LAYERS)) > FLOOR[layer(name)]
    ]
    assert not upward, f"{name} (layer {layer(name)}) imports from layers above it: {upward}"


def test_no_circles():
    graph = {
        name: {target for target in imports(name, path) if target in modules() and target != name}
        for name, path in modules().items()
        if name != "fpgacomm"
    }
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        if state.get(node) == "open":
            raise AssertionError(
                f"modules import each other in a circle: {' -> '.join(trail[trail.index(node):] + [node])}"
            )
        state[node] = "open"
        for target in graph.get(node, ()):
            visit(target, trail + [node])
        state[node] = "done"

    for node in graph:
        visit(node, [])


def _reach(name: str) -> set:
    """Every fpgacomm module that `name` imports, directly or through others."""
    found, todo = set(), [name]
    while todo:
        module = todo.pop()
        for target in imports(module, modules()[module]) if module in modules() else ():
            if target not in found:
                found.add(target)
                todo.append(target)
    return found


@pytest.mark.parametrize(
    "name", ["fpgacomm.figures.plot"] + sorted(m for m in modules() if m.startswith("fpgacomm.models"))
)
def test_figures_and_models_need_no_benchmark_and_no_command_line(name):
    reached = _reach(name)
    assert not [m for m in reached if m.startswith(("fpgacomm.benchmarks", "fpgacomm.cli"))], sorted(reached)
