"""The benchmark registry: every benchmark the modules run is registered once,
with facts that agree with the modules, the report, the figures and the osu command."""

from fpgacomm import catalog
from fpgacomm.benchmarks import collectives, onesided, osu, registry
from fpgacomm.cli.command import build_parser
from fpgacomm.figures import plot
from fpgacomm.results import kinds
from fpgacomm.results.report import TEXTS, format_table, formatter


def test_catalog_entries_name_known_families_quantities_texts_and_figures():
    names = [benchmark.name for benchmark in catalog.BENCHMARKS]
    assert len(names) == len(set(names)) == len(registry.BENCHMARKS)
    for benchmark in catalog.BENCHMARKS:
        assert benchmark.family in catalog.FAMILIES and benchmark.quantity in catalog.QUANTITIES, benchmark
        assert benchmark.text in catalog.TEXTS and benchmark.figure in catalog.FIGURES, benchmark
        assert bool(benchmark.title) == benchmark.text.startswith("osu_"), benchmark


def test_every_test_of_the_benchmark_modules_is_registered_with_its_function():
    tests = {family: {benchmark.test for benchmark in registry.of_family(family)} for family in catalog.OSU_FAMILIES}
    assert tests == {
        "pt2pt": set(osu.ITERATIONS),
        "collective": set(collectives.TESTS),
        "onesided": set(onesided.TESTS),
    }
    for benchmark in registry.BENCHMARKS.values():
        module = registry.FAMILIES[benchmark.family].module
        assert benchmark.function.__module__ == module.__name__, benchmark.name
    assert registry.get("osu_put_bw").function is onesided.put_bw
    assert registry.get("osu_latency").function is osu.latency


def test_options_follow_family_and_test():
    windowed = {benchmark.test for benchmark in registry.osu_tests().values() if "window" in benchmark.options}
    assert windowed == {"bw", "bibw", "mbw_mr", "put_bw", "get_bw", "put_bibw"}
    rooted = {benchmark.test for benchmark in registry.osu_tests().values() if "root" in benchmark.options}
    assert rooted == set(collectives.ROOTED)
    assert registry.get("osu_bw").window == osu.DEFAULT_WINDOW and registry.get("osu_latency").window is None
    assert registry.get("osu_allreduce").sizes == collectives.DEFAULT_SIZES
    assert registry.get("osu_barrier").options == ()
    assert "transfer" in registry.get("osu_mbw_mr").options and "transfer" not in registry.get("osu_bcast").options


def test_report_figures_and_command_take_their_lists_from_the_registry():
    for name, benchmark in registry.BENCHMARKS.items():
        kind = kinds.find(name)
        assert kind is not None and kind.benchmark is catalog.BY_NAME[name], name
        assert formatter(name) is TEXTS[benchmark.text]
        assert (formatter(name) is format_table) == (benchmark.text == "table")
        in_latency, in_bandwidth = kind.figure == "latency", kind.figure == "bandwidth"
        assert in_latency == (benchmark.figure == "sweep" and benchmark.quantity == "latency"), name
        assert in_bandwidth == (benchmark.figure == "sweep" and benchmark.quantity == "bandwidth"), name
        assert kind.figure is None or kind.figure in plot.FIGURES, name
    assert kinds.of("osu_barrier").figure is None and kinds.of("gather").figure == "gather"
    osu_parser = build_parser()._subparsers._group_actions[0].choices["osu"]
    tests = osu_parser._subparsers._group_actions[0].choices
    assert list(tests) == list(registry.osu_tests())


def test_every_osu_test_function_shows_its_familys_options():
    import inspect

    for benchmark in registry.osu_tests().values():
        function = benchmark.function
        parameters = inspect.signature(function).parameters
        assert list(parameters)[0] == "comm" and "sizes" in parameters and "validate" in parameters, benchmark.name
        assert "**" not in str(inspect.signature(function)), benchmark.name
        assert function.__qualname__ == benchmark.test and function.__doc__.count("\n") > 3, benchmark.name
