"""Simulated gathers: the gather schedules on the VCSN paper's fabric presets,
against the models of fpgacomm.models.vcsn."""

import inspect

import pytest
from fpgacomm import _core, fabric, gather, gather_sim
from fpgacomm.models import vcsn

MiB = 1 << 20
CONTRACT = ["schedule", "nodes", "size", "stages", "time", "throughput", "setup", "transfer", "barrier"]


@pytest.mark.parametrize("schedule, preset", [("ring", "dcn_ring"), ("tree", "vcsn"), ("vlink", "vcsn")])
def test_simulation_agrees_with_the_model_of_its_own_stages(schedule, preset):
    # Where the model's assumptions hold (no contention, data >= 1 MiB): 1 %.
    result = gather_sim.run(schedule, preset, nodes=(4, 9, 16), sizes=(MiB, 16 * MiB))
    for row in result.rows:
        assert row["time"] == pytest.approx(row["model"], rel=0.01), (row["nodes"], row["size"])
        assert row["stages"] == len(gather.schedule(schedule, row["nodes"], row["size"]).stages)


def test_fat_tree_gather_agrees_with_the_model():
    row = gather_sim.run("tree", "vcsn_fat_tree", nodes=[64], sizes=[MiB]).rows[0]
    assert row["levels"] == 2
    assert row["time"] == pytest.approx(row["model"], rel=0.01)


def test_eq7_as_printed_counts_fewer_stages_than_the_tree():
    # Eq. 7 has ceil((n-1)/4) stages of 2d per port; the tree needs one more
    # (section 5.2) and hands the root one block per port in its early stages.
    row = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[16 * MiB]).rows[0]
    assert row["model_printed"] == pytest.approx(vcsn.VcsnGather.from_paper().time(9, 16 * MiB), rel=1e-12)
    assert row["stages"] == 3 and row["model_printed"] < row["time"]


def test_contract_columns_and_breakdown():
    result = gather_sim.run("tree", "vcsn", nodes=[4, 9], sizes=[64 << 10, MiB])
    assert result.benchmark == "gather_sim" and result.columns[:9] == CONTRACT
    assert {"model", "model_printed"} <= set(result.columns)
    assert result.params["control"] == "barrier" and result.params["fabric"] == "vcsn"
    for row in result.rows:
        key = f"{row['nodes']}/{row['size']}"
        for part in ("setup", "transfer", "barrier"):
            assert len(result.samples[f"{key}/{part}"]) == row["stages"]
            assert sum(result.samples[f"{key}/{part}"]) == pytest.approx(row[part], rel=1e-12)
        assert row["time"] == pytest.approx(row["setup"] + row["transfer"] + row["barrier"], rel=1e-12)
        assert row["throughput"] == pytest.approx((row["nodes"] - 1) * row["size"] / row["time"], rel=1e-12)
        # Stage 1 carries t and c with their barriers: eq. 6 for ceil(n/2) servers, short work.
        first = result.samples[f"{key}/setup"][0]
        assert first == pytest.approx(1.24e-4 + 1.35e-6, rel=1e-12)


def test_slowing_one_link_slows_only_the_stages_that_use_it():
    # Tree on 9 nodes: node 3 collects node 4's block in stage 1 and sends
    # both to the root in stage 3, on plane 0; stage 2 does not touch it.
    plan = gather.schedule("tree", 9, MiB)
    base = gather_sim.simulate(plan, fabric.vcsn(9))["transfer"]
    slow = fabric.vcsn(9)
    slow.spec.scale_link(3, 0, 0.5)
    changed = gather_sim.simulate(plan, slow)["transfer"]
    # (Equal but for rounding: each stage's time is measured from a later start.)
    assert changed[1] == pytest.approx(base[1], rel=1e-12)
    assert changed[0] > 1.9 * base[0] and changed[2] > 1.9 * base[2]
    # Ring on 9 nodes: the link 3-4 carries node 4's block in stage 1 only.
    plan = gather.schedule("ring", 9, MiB)
    base = gather_sim.simulate(plan, fabric.dcn_ring(9))["transfer"]
    slow = fabric.dcn_ring(9)
    slow.spec.scale_link(3, 1, 0.5)  # node 3's second port: the link to node 4
    changed = gather_sim.simulate(plan, slow)["transfer"]
    assert changed[1:] == pytest.approx(base[1:], rel=1e-12) and changed[0] > 1.9 * base[0]


def test_local_control_keeps_only_the_first_set_up():
    barrier = gather_sim.run("tree", "vcsn", nodes=[16], sizes=[MiB]).rows[0]
    local = gather_sim.run("tree", "vcsn", nodes=[16], sizes=[MiB], control="local")
    row = local.rows[0]
    assert row["transfer"] == barrier["transfer"]
    assert local.samples[f"16/{MiB}/barrier"][1:] == [0.0] * (row["stages"] - 1)
    assert row["time"] < barrier["time"] and row["time"] == pytest.approx(row["model"], rel=0.01)


def test_scatter_and_ring_allgather_follow_their_models():
    scatter = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[MiB], collective="scatter").rows[0]
    assert scatter["time"] == pytest.approx(scatter["model"], rel=0.01)
    allgather = gather_sim.run("ring", "dcn_ring", nodes=[9], sizes=[MiB], collective="allgather").rows[0]
    assert allgather["stages"] == 8 and allgather["model_printed"] is None
    assert allgather["time"] == pytest.approx(allgather["model"], rel=0.01)


def test_four_ports_and_four_virtual_ports():
    # Section 5.2: ceil((n-1)/8) + 3 tree stages with 4 ports or 4 virtual ports per port.
    for ports, virtual_ports in ((4, 2), (2, 4)):
        row = gather_sim.run("tree", "vcsn", nodes=[16], sizes=[MiB], ports=ports, virtual_ports=virtual_ports).rows[0]
        assert row["stages"] == 5 and row["time"] == pytest.approx(row["model"], rel=0.01)
    row = gather_sim.run("ring", "vcsn", nodes=[16], sizes=[MiB], ports=4).rows[0]
    assert row["stages"] == 5 and row["time"] == pytest.approx(row["model"], rel=0.01)


def test_mpi_gather_on_the_host_path_has_no_stage_model():
    row = gather_sim.run("mpi", "host_path", nodes=[4], sizes=[MiB]).rows[0]
    assert row["stages"] == 1 and row["model"] is None and row["time"] > 0


def test_each_fabric_has_its_own_schedule():
    for preset, schedule in (("dcn_ring", "ring"), ("vcsn", "tree"), ("host_path", "mpi")):
        assert gather_sim.run(fabric=preset, nodes=[4], sizes=[MiB]).rows[0]["schedule"] == schedule


def test_same_inputs_same_results():
    first = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[MiB])
    second = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[MiB])
    assert first.rows == second.rows and first.samples == second.samples


def test_fit_of_a_simulated_sweep_recovers_the_presets_costs():
    result = gather_sim.run("tree", "vcsn", nodes=(4, 9, 16), sizes=(MiB, 4 * MiB, 16 * MiB))
    fit = vcsn.fit(result)
    assert fit.params["t"] == pytest.approx(1.24e-4, rel=1e-6)
    assert fit.params["c"] == pytest.approx(1.35e-6, rel=1e-6)
    assert fit.params["b"] == pytest.approx(12.44e9, rel=0.005)
    assert fit.params["barrier_round"] == pytest.approx(3.34e-5, rel=1e-6)
    assert fit.params["barrier_short"] == pytest.approx(5.84e-6 + 52e-6, rel=1e-6)
    assert fit.params["barrier_long"] == pytest.approx(5.84e-6 + 210e-6, rel=1e-6)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(schedule="tree", fabric="dcn_ring"), "does not run on fabric 'dcn_ring'"),
        (dict(fabric="torus"), "does not run on fabric 'torus'"),
        (dict(schedule="fan"), "schedule 'fan'"),
        (dict(control="none"), "gather: unknown control 'none'; choose barrier"),
        (dict(nodes=[1]), "node count 1"),
        (dict(sizes=[0]), "gather: size per node 0; give whole bytes, 1 or more"),
        (dict(collective="reduce"), "collective 'reduce'"),
        (dict(schedule="ring", fabric="dcn_ring", ports=4), "needs a second ring dimension"),
    ],
)
def test_bad_input_is_one_clear_error(arguments, message):
    with pytest.raises(_core.UsageError, match=message):
        gather_sim.run(**{"nodes": [4], "sizes": [MiB], **arguments})


def test_broadcast_stages_cannot_be_simulated():
    plan = gather.schedule("tree", 4, MiB, collective="allgather", broadcast=True)
    with pytest.raises(_core.UsageError, match="broadcast=False"):
        gather_sim.simulate(plan, fabric.vcsn(4))


def test_against_with_each_rows_schedule_or_eq7s_own():
    result = gather_sim.run("tree", "vcsn", nodes=(4, 9), sizes=(64 << 10, MiB))
    own = vcsn.VcsnGather.from_paper().against(result)
    printed = vcsn.VcsnGather.from_paper().against(result, stages="model")
    assert own.columns == printed.columns == ["size", "original_4", "original_9", "corrected_4", "corrected_9"]
    for mine, eq7 in zip(own.rows, printed.rows):
        for n in (4, 9):
            assert mine[f"corrected_{n}"] < 0.002 < eq7[f"corrected_{n}"]
            assert mine[f"original_{n}"] > mine[f"corrected_{n}"]


def test_past_the_papers_11664_nodes_the_fat_tree_grows_a_level_and_says_so():
    result = gather_sim.run("tree", "vcsn_fat_tree", nodes=[11665], sizes=[64 << 10])
    assert result.rows[0]["levels"] == 4
    assert result.params["topologies"] == {"11665": "2 plane(s) of a 4-level fat tree of 36-port switches, 11665 nodes"}
    assert 0 < result.rows[0]["events_simulated"] and result.rows[0]["events_estimated"] > 0


def test_gather_options_are_read_by_the_simulated_run_and_refused_where_only_real_runs_read_them():
    options = gather.GatherOptions(schedule="tree", fabric="vcsn", nodes=[4], sizes=[MiB])
    assert gather.simulate(options).rows == gather_sim.run("tree", "vcsn", nodes=[4], sizes=[MiB]).rows
    assert gather.simulate(options, control="local").params["control"] == "local"
    # -i and -c are real runs' and not refused (as with --fabric); --root, --mem and --rounds are.
    assert gather.simulate(options, iterations=3, validate=False).rows[0]["nodes"] == 4
    for keywords, message in [
        (dict(root=1), "--root applies to real runs"),
        (dict(mem="D"), "--mem applies to real runs"),
        (dict(rounds=2), "leave --rounds out, got 2"),
        (dict(nodes=[1]), "gather: node count 1; give node counts of 2 or more"),
    ]:
        with pytest.raises(_core.UsageError, match=message) as caught:
            gather.simulate(options, **keywords)
        assert caught.value.agreed
    with pytest.raises(TypeError, match="GatherOptions has no option 'fabrics'"):
        gather.simulate(fabrics="vcsn")


def test_gather_options_defaults_are_the_cores_and_the_simulated_runs():
    core, own = _core.GatherOptions(), inspect.signature(gather_sim.run).parameters
    options = gather.GatherOptions()
    assert (options.root, options.validate, options.barrier_reference) == (
        core.root,
        core.validation,
        core.barrier_reference,
    )
    for name in ("ports", "virtual_ports", "control", "collective", "reuse", "fast_forward"):
        assert getattr(options, name) == own[name].default, name
    assert (
        "nodes" in inspect.signature(gather.simulate).parameters
        and "on_row" in inspect.signature(gather.run).parameters
    )
