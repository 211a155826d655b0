"""Every kind of Result a producer of fpgacomm makes is declared once in
results/kinds.py, with a text that report.py registers and a figure that
plot.py registers; report, plot and compare look the kind up."""

import ast
from pathlib import Path

import pytest
from fpgacomm import catalog, models
from fpgacomm.calibration import families
from fpgacomm.figures import plot
from fpgacomm.results import compare, kinds, peers, report, result, validation

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "fpgacomm"
PEERS = Path(__file__).resolve().parent / "data" / "peers"
# The calls that name a Result: the class, the simulator's and the peers'
# helpers that build one, and the models' Result of named figures.
MAKERS = {"Result", "_result", "figures"}


def _family(family: str) -> list:
    return [entry.name for entry in catalog.BENCHMARKS if entry.family == family]


def _fits() -> list:
    return [f"fit_{name}" for name in models.REGISTRY]


# What a producer's name that is no string literal stands for, by module
# and expression: the names it makes, or () where it passes on a name made
# elsewhere (a Result rebuilt, a helper's parameter whose callers are
# scanned). A new expression fails test_every_producer_is_known: add it.
MADE = {
    ("benchmarks/collectives.py", "f'osu_{op}'"): _family("collective"),
    ("benchmarks/onesided.py", "f'osu_{test}'"): _family("onesided"),
    ("benchmarks/osu.py", "f'osu_{test}'"): _family("pt2pt"),
    ("benchmarks/osu.py", "benchmark"): [f"{name}_timeline" for name in _family("pt2pt")],
    ("models/base.py", "f'fit_{self.model.name}'"): _fits(),
    ("models/base.py", "f'fit_{self.name}'"): _fits(),
    ("models/vcsn.py", "f'fit_{self.name}'"): ["fit_vcsn"],
    ("simulation/fabric.py", "f'fabric_{op}'"): ["fabric_put", "fabric_get"],
    ("models/fit.py", "'+'.join((r.benchmark for r in results))"): ["osu_latency+osu_bw"],
    ("calibration/campaign.py", "BENCHMARK"): [families.BENCHMARK],
    ("calibration/cross_validation.py", "validation.PREDICTION"): [validation.PREDICTION],
    ("calibration/predict.py", "kinds.PREDICTION"): [kinds.PREDICTION],
    ("results/compare.py", "NAME"): [compare.NAME],
    ("results/validation.py", "NAME"): [validation.NAME],
    ("results/result.py", "LOAD_NAME"): [result.LOAD_NAME],
    # The peers' readers: their names are those of test_every_peer_reader_names_a_kind.
    ("results/peers.py", "name"): (),
    ("results/peers.py", "table.benchmark"): (),
    # Passed on: a Result rebuilt under its own name, or a helper's parameter.
    ("benchmarks/beff.py", "result.benchmark"): (),
    ("benchmarks/overhead.py", "_core.run_overhead(comm, order, counts)"): (),  # its own helper: osu_overhead
    ("calibration/cross_validation.py", "result.benchmark"): (),
    ("figures/iterations.py", "result"): (),  # the figures of a Result's iterations, no Result
    ("models/base.py", "benchmark"): (),  # figures(): its callers' literals are scanned
    ("models/beff.py", "result.benchmark"): (),
    ("models/fit.py", "first.benchmark"): (),
    ("results/compare.py", "result.benchmark"): (),
    ("results/report.py", "result.benchmark"): (),
    ("results/result.py", "first['benchmark']"): (),
    ("results/rounds.py", "first.benchmark"): (),
    ("simulation/fabric.py", "benchmark"): (),  # _result(): its callers' literals are scanned
}


def producers() -> dict:
    """{(module, expression): names}: every call that names a Result in the
    package, its first argument as written, and the names it makes."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            function = node.func
            called = getattr(function, "id", None) or getattr(function, "attr", None)
            if called not in MAKERS:
                continue
            first = node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            key = (module, ast.unparse(first))
            found[key] = [first.value] if literal else MADE.get(key)
    return found


def peer_names() -> list:
    return sorted({peers.read_text(path)["benchmark"] for path in PEERS.glob("*.txt")})


def test_every_producer_is_known():
    unknown = [key for key, names in producers().items() if names is None]
    assert not unknown, f"calls naming a Result by an expression MADE does not know: {unknown}"
    stale = [key for key in MADE if key not in producers()]
    assert not stale, f"MADE names calls that are gone: {stale}"


def test_every_name_a_producer_makes_is_a_declared_kind():
    names = {name for made in producers().values() for name in made or ()}
    names |= {entry.name for entry in catalog.BENCHMARKS} | set(peer_names())
    undeclared = sorted(name for name in names if kinds.find(name) is None)
    assert not undeclared, f"Result names no kind in results/kinds.py declares: {undeclared}"
    unmade = [kind.name for kind in kinds.KINDS if not any(kind.matches(name) for name in names)]
    assert not unmade, f"kinds no producer makes: {unmade}"


def test_every_peer_reader_names_a_kind():
    names = peer_names()
    assert {"beff", "imb_pingpong", "nccl_all_reduce", "omb"} <= set(names), names
    assert all(kinds.find(name) is not None for name in names), names


def test_every_kind_names_a_registered_text_and_figure():
    for kind in (*kinds.KINDS, kinds.OTHER):
        assert kind.text in report.TEXTS, kind
        assert kind.figure is None or kind.figure in plot.FIGURES, kind
        assert kind.quantity is None or kind.quantity in kinds.LOWER_IS_BETTER, kind
        assert all(quantity in kinds.LOWER_IS_BETTER for _, quantity in kind.headlines), kind


def test_names_and_patterns_are_declared_once():
    names = [kind.name for kind in kinds.KINDS]
    assert len(names) == len(set(names))
    # Exact names before patterns: a catalog benchmark is never a pattern's.
    assert kinds.of("osu_latency").benchmark is catalog.BY_NAME["osu_latency"]
    assert kinds.of("osu_latency_timeline").figure is None
    assert kinds.of("fit_hockney").figure == "model" and kinds.of("model_hockney").figure is None


def test_a_name_no_producer_makes_is_the_declared_other_kind():
    assert kinds.find("my_own_table") is None
    other = kinds.of("my_own_table")
    assert other is kinds.OTHER and other.text == "table" and other.figure is None
    assert report.formatter("my_own_table") is report.format_table


def test_headlines_follow_the_kind():
    # A benchmark fixes its quantity; other kinds take the first headline column they hold.
    assert kinds.of("osu_bw").headline(["size", "latency_avg", "bandwidth"]) == ("bandwidth", "bandwidth", False)
    assert kinds.of("osu_latency").headline(["size", "latency_avg", "busbw"]) == ("latency", "latency_avg", True)
    assert kinds.of("nccl_all_reduce").headline(["size", "busbw", "time"]) == ("latency", "time", True)
    assert kinds.of("fabric_traffic").headline(["size", "events"]) is None


@pytest.mark.parametrize(
    "column, unit",
    [
        ("latency_avg", "s"),
        ("busbw", "B/s"),
        ("pair_bandwidth", "B/s"),
        ("packet_size", "B"),
        ("message_rate", "1/s"),
        ("overlap", "fraction"),
        ("hops", ""),
    ],
)
def test_one_rule_gives_the_units_of_columns(column, unit):
    assert kinds.unit_of(column) == unit
    assert plot.unit_of(column) == unit


def test_a_column_whose_name_says_no_unit_is_an_error():
    with pytest.raises(KeyError):
        kinds.unit_of("events")
    with pytest.raises(Exception, match="cannot tell the unit of column 'events'"):
        plot.unit_of("events")
