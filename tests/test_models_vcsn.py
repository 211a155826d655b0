"""VCSN and DCN models of the VCSN paper: eq. 1-7, the barrier model and its
correction, the Fig. 20 estimate, fitting and Table 6's comparison."""

import json

import numpy as np
import pytest
from fpgacomm import _core, gather
from fpgacomm.models import vcsn
from fpgacomm.results.result import Result

MiB = 1 << 20
UsageError = _core.UsageError


def test_protocol_bandwidths_are_eq1_and_eq2():
    assert vcsn.DCN_BANDWIDTH * 8 / 1e9 == pytest.approx(96.18, abs=0.005)
    assert vcsn.VCSN_BANDWIDTH * 8 / 1e9 == pytest.approx(99.54, abs=0.005)
    assert round(vcsn.DCN_BANDWIDTH / 1e9, 2) == 12.02
    assert round(vcsn.VCSN_BANDWIDTH / 1e9, 2) == 12.44


def test_barrier_model_eq6():
    assert vcsn.servers(16) == 8 and vcsn.servers(9) == 5
    assert vcsn.barrier_time(8) == pytest.approx(1.0604e-4, rel=1e-12)
    assert vcsn.barrier_time(1) == pytest.approx(5.84e-6, rel=1e-12)
    model = vcsn.VcsnGather.from_paper()
    assert model.barrier(16, 100e-6) == pytest.approx(1.0604e-4 + 52e-6, rel=1e-12)
    assert model.barrier(16, 600e-6) == pytest.approx(1.0604e-4 + 210e-6, rel=1e-12)
    assert vcsn.VcsnGather.from_paper(corrected=False).barrier(16, 600e-6) == pytest.approx(1.0604e-4, rel=1e-12)


def test_fat_tree_levels_of_36_port_switches():
    assert [vcsn.fat_tree_levels(n) for n in (2, 36, 37, 648, 649, 11664)] == [1, 1, 2, 2, 3, 3]
    with pytest.raises(UsageError, match="exceed a three-level fat tree"):
        vcsn.fat_tree_levels(11665)
    assert vcsn.fat_tree_levels(9, switch_ports=4) == 3


def test_eq7_as_printed_and_corrected():
    n, d = 32, 16 * MiB
    S, b, Tb = 8, vcsn.VCSN_BANDWIDTH, vcsn.barrier_time(16)
    printed = 1.24e-4 + S * (1.35e-6 + 8.47e-7 + 2 * d / b) + (S + 2) * Tb
    assert vcsn.VcsnGather.from_paper(corrected=False).time(n, d) == pytest.approx(printed, rel=1e-12)
    # Section 6.3's correction: 52 us after t and after c, 210 us after each 2.7 ms stage.
    corrected = vcsn.VcsnGather.from_paper().time(n, d)
    assert corrected == pytest.approx(printed + 2 * 52e-6 + S * 210e-6, rel=1e-12)
    assert corrected == pytest.approx(25e-3, rel=0.01)  # section 6.5: "about 25 msec"


def test_dcn_counterpart_follows_fig11():
    n, d = 9, 1 * MiB
    S, Tb = 4, vcsn.barrier_time(5)
    expected = S * (1.35e-6 + 4.91e-7 + d / vcsn.DCN_BANDWIDTH) + (S + 1) * Tb
    assert vcsn.DcnGather.from_paper(corrected=False).time(n, d) == pytest.approx(expected, rel=1e-12)


def test_section_5_3_candidates():
    p = dict(t=1.24e-4, c=1.35e-6, l=8.47e-7, b=vcsn.VCSN_BANDWIDTH, p=1e-4)
    d = 4 * MiB
    assert vcsn.ring_time(9, d, **p) == pytest.approx(p["t"] + 4 * (p["c"] + p["l"] + d / p["b"] + p["p"]))
    assert vcsn.tree_time(9, d, **p) == pytest.approx(p["t"] + 4 * d / p["b"] + 2 * (p["c"] + p["l"] + p["p"]))
    assert vcsn.vlink_time(9, d, **p) == pytest.approx(2 * p["t"] + 4 * (p["c"] + p["l"] + d / p["b"] + p["p"]))
    # Section 5.3: the tree is the fastest of the three.
    assert vcsn.tree_time(9, d, **p) < vcsn.ring_time(9, d, **p) < vcsn.vlink_time(9, d, **p)


def test_fig20_ratios_for_the_largest_cluster():
    result = vcsn.estimate([vcsn.FIG20_NODES], [64 << 10, 256 * MiB])
    ratios = {row["size"]: row["ratio"] for row in result.rows}
    assert ratios[64 << 10] == pytest.approx(1.97, abs=0.005)
    assert ratios[256 * MiB] == pytest.approx(1.05, abs=0.005)
    # DCN's extra stages weigh more in larger clusters (Fig. 20).
    small = vcsn.estimate([16, 64, 1024], [64 << 10]).column("ratio")
    assert np.all(np.diff(small) > 0)


def _gather_result(model, schedules, nodes, sizes, *, control="barrier", noise=0.0, seed=1):
    """A gather Result whose set-up, transfer and barrier columns are
    `model`'s, times (1 + noise * N(0, 1)) each."""
    rng = np.random.default_rng(seed)
    rows, samples = [], {}
    for name in schedules:
        for n in nodes:
            for d in sizes:
                schedule = gather.schedule(name, n, d)
                parts = model.breakdown(
                    n,
                    d,
                    control=control,
                    schedule_stages=(vcsn.stage_bytes(schedule), [stage.setup for stage in schedule.stages]),
                )
                for key in ("setup", "transfer", "barrier"):
                    parts[key] = [v * (1 + noise * rng.standard_normal()) for v in parts[key]]
                    samples[f"{n}/{d}/{key}"] = parts[key]
                total = sum(sum(parts[k]) for k in ("setup", "transfer", "barrier"))
                rows.append(
                    {
                        "schedule": name,
                        "nodes": n,
                        "size": d,
                        "stages": len(schedule.stages),
                        "time": total,
                        "throughput": (n - 1) * d / total,
                        "setup": sum(parts["setup"]),
                        "transfer": sum(parts["transfer"]),
                        "barrier": sum(parts["barrier"]),
                    }
                )
    units = {
        "schedule": "",
        "nodes": "",
        "size": "B",
        "stages": "",
        "time": "s",
        "throughput": "B/s",
        "setup": "s",
        "transfer": "s",
        "barrier": "s",
    }
    return Result(
        "gather_sim",
        {"control": control, "ports": 2, "virtual_ports": 2, "collective": "gather", "levels": 1},
        {},
        rows,
        units,
        samples,
    )


TRUE = dict(t=2.0e-4, c=3.0e-6, l=1.2e-6, b=10e9, barrier_round=4.0e-5, barrier_short=6.0e-5, barrier_long=2.5e-4)
SIZES = [64 << 10, 1 * MiB, 16 * MiB, 256 * MiB]


def test_fit_recovers_known_parameters_within_its_error():
    truth = vcsn.VcsnGather(**TRUE)
    data = _gather_result(truth, ["tree", "vlink"], [4, 9, 16, 33], SIZES, noise=0.002)
    fit = vcsn.VcsnGather.fit(data)
    for name, value in TRUE.items():
        error = fit.stderr[name]
        assert 0 < error < 0.1 * value, name
        assert abs(fit.params[name] - value) < 4 * error, (name, fit.params[name], value, error)
    assert fit.r_squared > 0.999
    # Without noise the fit is exact.
    exact = vcsn.VcsnGather.fit(_gather_result(truth, ["tree"], [4, 9, 16, 33], SIZES))
    for name, value in TRUE.items():
        assert exact.params[name] == pytest.approx(value, rel=1e-6), name


def test_fit_of_dcn_rings_leaves_t_undetermined():
    truth = vcsn.DcnGather(**{**TRUE, "t": 0.0})
    fit = vcsn.fit(_gather_result(truth, ["ring"], [4, 9, 16, 33], SIZES, noise=0.001))
    assert fit.model.name == "dcn"
    assert fit.undetermined == ["t"] and fit.stderr["t"] is None
    assert fit.held["t"][1].startswith("no row's schedule writes the topology")
    assert fit.params["b"] == pytest.approx(10e9, rel=0.01)
    # Written out, the undetermined error is null: the file is strict JSON.
    rows = {row["parameter"]: row for row in fit.to_result().to_dict()["rows"]}
    assert rows["t"]["value"] is None and rows["t"]["stderr"] is None and rows["b"]["stderr"] > 0
    assert rows["t"]["note"].startswith("undetermined: no row's schedule writes the topology")
    json.loads(json.dumps(fit.to_result().to_dict(), allow_nan=False))


def test_fit_at_one_node_count_folds_what_it_cannot_separate():
    # One node count: t and c always come together (t + S c), and the
    # barrier's slope times ceil(log2 N) is a constant like the others.
    truth = vcsn.VcsnGather(**TRUE)
    fit = vcsn.VcsnGather.fit(_gather_result(truth, ["tree"], [9], SIZES))
    assert fit.undetermined == ["t", "barrier_round"]
    assert fit.params["t"] == 0.0 and fit.stderr["t"] is None
    assert fit.held["t"][1] == "the measurements cannot separate it from c; held at 0, its share counted in them"
    assert fit.params["c"] == pytest.approx(TRUE["c"] + TRUE["t"] / 3, rel=1e-6)  # 3 stages at 9 nodes
    assert fit.params["b"] == pytest.approx(TRUE["b"], rel=1e-6)
    assert np.max(np.abs(fit.residuals / fit.y)) < 1e-9


def test_local_control_leaves_only_the_first_barriers():
    model = vcsn.VcsnGather.from_paper()
    schedule = gather.schedule("tree", 16, MiB)
    stages = (vcsn.stage_bytes(schedule), [stage.setup for stage in schedule.stages])
    local = model.breakdown(16, MiB, control="local", schedule_stages=stages)
    assert local["barrier"][1:] == [0.0] * (len(schedule.stages) - 1)
    assert local["barrier"][0] == pytest.approx(2 * model.barrier(16, 0.0))
    assert local["setup"] == [1.24e-4 + 1.35e-6] + [0.0] * (len(schedule.stages) - 1)
    with pytest.raises(UsageError, match="'barrier' or 'local'"):
        model.breakdown(16, MiB, control="global")


def test_fit_names_the_columns_it_needs():
    bad = Result("osu_latency", {}, {}, [{"size": 1, "avg_latency": 1e-6}], {"size": "B", "avg_latency": "s"})
    with pytest.raises(UsageError, match="columns schedule, nodes, size, stages, setup, transfer, barrier"):
        vcsn.fit(bad)


def test_against_has_table6_layout():
    corrected = vcsn.VcsnGather.from_paper()
    rows = [{"nodes": n, "size": d, "time": corrected.time(n, d)} for n in (4, 9, 16) for d in SIZES]
    measured = Result("gather", {}, {}, rows, {"nodes": "", "size": "B", "time": "s"})
    table = corrected.against(measured)
    assert table.columns == [
        "size",
        "original_4",
        "original_9",
        "original_16",
        "corrected_4",
        "corrected_9",
        "corrected_16",
    ]
    assert list(table.column("size")) == sorted(SIZES, reverse=True)
    for row in table.rows:
        assert [row[f"corrected_{n}"] for n in (4, 9, 16)] == pytest.approx([0, 0, 0], abs=1e-12)
        assert all(row[f"original_{n}"] > 0 for n in (4, 9, 16))
    # Table 6's trend: the uncorrected model errs most for small data.
    assert table.rows[-1]["original_16"] > table.rows[0]["original_16"]


def test_registered_module():
    result = vcsn.predictions()
    assert result.columns == ["figure", "value", "unit"]  # what `fpgacomm model` prints
    assert [(r["value"], r["unit"]) for r in result.rows] == [(vcsn.DCN_BANDWIDTH, "B/s"), (vcsn.VCSN_BANDWIDTH, "B/s")]
    times = vcsn.predictions(nodes="32", sizes="16M").rows[2:]
    assert times[0]["figure"].startswith("VCSN gather time (eq. 7), 32 nodes")
    assert times[0]["value"] == pytest.approx(25e-3, rel=0.01)
    printed = vcsn.predictions(nodes="32", sizes="16M", barrier="printed").rows[2]["value"]
    assert printed == pytest.approx(vcsn.VcsnGather.from_paper(corrected=False).time(32, 16 * MiB), rel=1e-12)
    assert set(vcsn.OPTIONS) == {"nodes", "sizes", "barrier"}
    with pytest.raises(UsageError, match="node count 'x'"):
        vcsn.predictions(nodes="x")
    with pytest.raises(UsageError, match="'corrected' or 'printed'"):
        vcsn.predictions(barrier="none")
