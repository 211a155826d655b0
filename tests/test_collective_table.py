"""The core's table of collectives (src/bench/collective_table.cpp): every
collective the catalog offers has a complete entry, the entries give
nccl-tests' figures, and an unknown name is an error, never a default."""

import pytest
from fpgacomm import _core, catalog
from fpgacomm.benchmarks import collectives, registry
from fpgacomm.cli import osu as osu_cli

# Per collective, in OSU Micro-Benchmarks' order: whether it has a root,
# nccl-tests' byte base in OMB's per-rank sizes (N: size * ranks) and bus
# bandwidth factor on n ranks (its doc/PERFORMANCE.md; docs/METHODS.md,
# "Collectives"), and the options of OMB's collectives that OMB 7.4's test
# lacks. A new collective adds its line here, written from those sources,
# not from the table.
EXPECTED = {
    "gather": (True, "N", lambda n: (n - 1) / n, ()),
    "scatter": (True, "N", lambda n: (n - 1) / n, ()),
    "allgather": (False, "N", lambda n: (n - 1) / n, ()),
    "alltoall": (False, "N", lambda n: (n - 1) / n, ()),
    "bcast": (True, "1", lambda n: 1.0, ("-l",)),
    "reduce": (True, "1", lambda n: 1.0, ("-D",)),
    "allreduce": (False, "1", lambda n: 2.0 * (n - 1) / n, ("-D",)),
    "reduce_scatter": (False, "1", lambda n: (n - 1) / n, ("-D",)),
    "barrier": (False, None, None, ("-l", "-D")),
}


def offered() -> list:
    return [benchmark for benchmark in catalog.BENCHMARKS if benchmark.family == "collective"]


def test_the_catalog_offers_the_tables_collectives_in_its_order():
    assert [benchmark.test for benchmark in offered()] == [entry.name for entry in _core.collectives()]
    assert [benchmark.test for benchmark in offered()] == list(collectives.TESTS) == list(EXPECTED)


@pytest.mark.parametrize("benchmark", offered(), ids=lambda benchmark: benchmark.test)
def test_every_collective_the_catalog_offers_has_a_complete_entry(benchmark):
    entry = _core.collective(benchmark.test)
    assert entry.name == benchmark.test and entry.title and entry.summary
    assert entry.mpi_call.startswith("MPI_")
    assert benchmark.title == f"{entry.title} Latency Test"
    assert benchmark.messages == entry.moves_data and (benchmark.figure is None) == (not entry.moves_data)
    assert (entry.name in collectives.ROOTED) == entry.rooted
    # Its function, named as the test, with the entry's summary.
    function = registry.get(benchmark.name).function
    assert function is getattr(collectives, entry.name) and function.__name__ == entry.name
    assert function.__doc__.startswith(entry.summary) and "mem_limit" in function.__doc__
    # Bytes and a bus factor exactly where data moves, and the OMB options it lacks are REFUSED's.
    for ranks in (2, 3, 4, 64):
        assert (entry.nccl_bytes(8, ranks) is None) == (entry.busbw_factor(ranks) is None) == (not entry.moves_data)
    families = {flag: families for flag, (_, families, _) in osu_cli.REFUSED.items()}
    assert all("collective" in families[flag] for flag in entry.omb_lacks), entry.omb_lacks


@pytest.mark.parametrize("op", list(EXPECTED))
def test_the_entries_give_nccl_tests_figures(op):
    rooted, base, factor, lacks = EXPECTED[op]
    entry = _core.collective(op)
    assert entry.rooted == rooted and (op in collectives.ROOTED) == rooted
    for ranks in (2, 3, 4, 7, 64):
        size = 1 << 10
        want = None if base is None else size * (ranks if base == "N" else 1)
        assert collectives.nccl_bytes(op, size, ranks) == want
        assert collectives.busbw_factor(op, ranks) == (None if factor is None else factor(ranks))
    assert tuple(entry.omb_lacks) == lacks == registry.get(f"osu_{op}").omb_lacks
    assert entry.holds_every_rank == (base == "N")


def test_the_refused_options_of_a_collective_are_those_omb_gives_it():
    refused = {test: set(osu_cli._refused(registry.get(f"osu_{test}"))) for test in EXPECTED}
    assert "-l" in refused["gather"] and "-D" in refused["gather"]
    assert "-l" not in refused["bcast"] and "-D" in refused["bcast"]
    assert "-D" not in refused["allreduce"] and "-l" in refused["allreduce"]
    assert not {"-l", "-D"} & refused["barrier"] and "-m" in refused["barrier"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: _core.collective("gossip"),
        lambda: collectives.busbw_factor("gossip", 4),
        lambda: collectives.nccl_bytes("gossip", 8, 4),
        lambda: collectives.mem_limit_sizes("gossip", [8], 4, collectives.MEM_LIMIT),
        lambda: collectives.run("gossip"),  # before MPI or a device
        lambda: _core.CollectiveOptions(op="gossip", sizes=[8]).validate(),
    ],
)
def test_an_unknown_collective_is_an_error_never_a_default(call):
    choices = ", ".join(collectives.TESTS)
    with pytest.raises(_core.UsageError, match=f"^unknown collective 'gossip'; choose {choices}$"):
        call()


def test_no_ranks_is_an_error_not_a_division_by_zero():
    with pytest.raises(_core.UsageError, match="ranks must be at least 1, got 0"):
        collectives.busbw_factor("allreduce", 0)
