"""The standard figures: what they draw equals the Results' columns, on the
axes and in the units they say, in files of the format asked for."""

import os
import subprocess
import sys

import numpy as np
import pytest
from fpgacomm import _core, plot
from fpgacomm.models.base import Model
from fpgacomm.models.cuscomnet import CusComNet
from fpgacomm.models.hockney import Hockney
from fpgacomm.results.result import Result

SIZES = [1 << m for m in range(0, 23, 2)]
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


class Linear(Model):
    """A Hockney-shaped model of the test's own: latency = alpha + size / beta."""

    name = "linear"
    parameters = ("alpha", "inverse_beta")
    units = {"alpha": "s", "inverse_beta": "s/B"}
    y_column = "latency_avg"

    def predict(self, x):
        return self.alpha + np.asarray(x, dtype=float) * self.inverse_beta

    @classmethod
    def _solve(cls, x, y, sigma, **options):
        return cls._linear(np.column_stack([np.ones_like(x), x]), y, sigma, cls.parameters)


def osu(test, send, recv, alpha=2e-6, beta=10e9, noise=0.01):
    """An OSU Result of a Hockney network with a little noise."""
    noise = 1 + noise * np.sin(np.arange(len(SIZES)))
    times = (alpha + np.array(SIZES) / beta) * noise
    latency = test in ("latency", "multi_lat")
    column, unit = ("latency_avg", "s") if latency else ("bandwidth", "B/s")
    values = times if latency else np.array(SIZES) / times
    rows = [{"size": size, column: float(v), "validation": "pass"} for size, v in zip(SIZES, values)]
    return Result(
        f"osu_{test}",
        {"test": test, "send_kind": send, "recv_kind": recv},
        {},
        rows,
        {"size": "B", column: unit, "validation": ""},
    )


def beff_result():
    rows = [
        {
            "pattern": pattern,
            "size": size,
            "bandwidth": scale * size / (1e-6 + size / 5e9),
            "model_bandwidth": size / (0.5e-6 + size / 8e9),
        }
        for pattern, scale in (("natural", 1.0), ("random0", 0.9))
        for size in SIZES
    ]
    return Result(
        "beff",
        {"comm_type": "cpu", "b_eff": 1.5e9},
        {},
        rows,
        {"pattern": "", "size": "B", "bandwidth": "B/s", "model_bandwidth": "B/s"},
    )


def gather_result(benchmark="gather_sim", schedules=("ring", "tree")):
    """A gather Result with the contract's columns (simulated: with model)."""
    rows = []
    for schedule in schedules:
        for nodes in (4, 9):
            stages = nodes - 1 if schedule == "ring" else int(np.ceil(np.log2(nodes)))
            for size in SIZES[3:]:
                setup, barrier = 1e-6 * stages, 3e-5 * stages
                transfer = (nodes - 1) * size / 12e9 * (1.0 if schedule == "ring" else 1.3)
                time = setup + transfer + barrier
                row = {
                    "schedule": schedule,
                    "nodes": nodes,
                    "size": size,
                    "stages": stages,
                    "time": time,
                    "throughput": (nodes - 1) * size / time,
                    "setup": setup,
                    "transfer": transfer,
                    "barrier": barrier,
                }
                if benchmark == "gather_sim":
                    row.update(model=time * 1.05, model_printed=time * 1.1)
                else:
                    row["validation"] = "pass"
                rows.append(row)
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
    units.update({"model": "s", "model_printed": "s"} if benchmark == "gather_sim" else {"validation": ""})
    params = {
        "collective": "gather",
        "control": "barrier",
        "ports": 2,
        "virtual_ports": 2,
        **({"fabric": "vcsn"} if benchmark == "gather_sim" else {"mem": "D"}),
    }
    return Result(benchmark, params, {}, rows, units)


def lines(ax):
    """{label: Line2D} of the lines the legend names."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


# --------------------------------------------------------------- files


@pytest.mark.parametrize("fmt", plot.FORMATS)
def test_figures_are_written_in_the_format_of_their_suffix(tmp_path, fmt):
    path = tmp_path / f"latency.{fmt}"
    plot.save(plot.figure_for([osu("latency", "H", "H"), osu("latency", "D", "D")]), path)
    head = path.read_bytes()[:400]
    if fmt == "svg":
        assert head.startswith(b"<?xml") and b"<svg" in head
    else:
        assert head.startswith(MAGIC[fmt])
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_an_unknown_extension_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(_core.UsageError, match=r"unknown extension \.jpg; use \.png, \.pdf or \.svg"):
        plot.save(plot.latency(osu("latency", "H", "H")), tmp_path / "figure.jpg")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------- size sweeps


def test_latency_draws_each_results_column_in_microseconds_on_log_axes():
    host, device = osu("latency", "H", "H"), osu("latency", "D", "D", alpha=9e-6)
    figure = plot.latency([host, device])
    ax = figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "message size (bytes)" and ax.get_ylabel() == "latency (µs)"
    drawn = lines(ax)
    assert sorted(drawn) == ["D D", "H H"]  # OMB-style: one line per send/receive kind pair
    for name, result in (("H H", host), ("D D", device)):
        np.testing.assert_array_equal(drawn[name].get_xdata(), result.column("size"))
        np.testing.assert_allclose(drawn[name].get_ydata(), result.column("latency_avg") * 1e6, rtol=1e-15)


def test_bandwidth_is_drawn_in_gigabytes_per_second():
    result = osu("bw", "D", "H")
    ax = plot.bandwidth(result).axes[0]
    assert ax.get_ylabel() == "bandwidth (GB/s)" and ax.get_yscale() == "log"
    np.testing.assert_allclose(lines(ax)["D H"].get_ydata(), result.column("bandwidth") * 1e-9, rtol=1e-15)


def test_a_fitted_model_is_drawn_over_a_fine_grid_on_latency_and_as_size_over_time_on_bandwidth():
    latency_result = osu("latency", "H", "H")
    fit = Linear.fit(latency_result)
    assert fit.params["alpha"] == pytest.approx(2e-6, rel=0.05)
    ax = plot.latency(latency_result, models=[fit]).axes[0]
    curve = [line for label, line in lines(ax).items() if label.startswith("linear: alpha ")]
    assert len(curve) == 1
    grid = curve[0].get_xdata()
    assert len(grid) == 200 and grid[0] == SIZES[0] and grid[-1] == pytest.approx(SIZES[-1])
    np.testing.assert_allclose(curve[0].get_ydata(), fit.model.predict(grid) * 1e6)

    ax = plot.bandwidth(osu("bw", "H", "H"), models=[fit.model]).axes[0]
    curve = next(line for label, line in lines(ax).items() if label.startswith("linear"))
    np.testing.assert_allclose(curve.get_ydata(), grid / fit.model.predict(grid) * 1e-9)


def test_memory_kinds_puts_latency_and_bandwidth_side_by_side_with_each_kinds_fit():
    results = [
        osu("latency", "H", "H"),
        osu("latency", "D", "D", alpha=9e-6),
        osu("bw", "H", "H"),
        osu("bw", "D", "D", alpha=9e-6),
    ]
    fits = {result: Hockney.fit(result) for result in results[:2]}
    figure = plot.figure_for(results, models=fits)
    left, right = figure.axes
    assert left.get_ylabel() == "latency (µs)" and right.get_ylabel() == "bandwidth (GB/s)"
    np.testing.assert_allclose(lines(right)["D D"].get_ydata(), results[3].column("bandwidth") * 1e-9)
    for ax in (left, right):
        drawn = lines(ax)
        assert {"D D", "H H"} <= set(drawn) and len(drawn) == 4
        for result, fit in fits.items():
            name = plot.label(result)
            curve = next(line for text, line in drawn.items() if text.startswith(f"{name} hockney: alpha "))
            assert curve.get_color() == drawn[name].get_color()  # a fit wears its kinds' colour
            grid = curve.get_xdata()
            time = fit.model.predict(grid)
            expected = time * 1e6 if ax is left else grid / time * 1e-9
            np.testing.assert_allclose(curve.get_ydata(), expected)


def test_several_benchmarks_on_one_axis_are_named_by_benchmark():
    ax = plot.latency([osu("latency", "D", "D"), osu("multi_lat", "D", "D")]).axes[0]
    assert sorted(lines(ax)) == ["osu_latency D D", "osu_multi_lat D D"]


def test_an_axes_given_is_drawn_on():
    figure, axes = plot.new_figure(1, 2)
    assert plot.latency(osu("latency", "H", "H"), axes[1]) is figure
    assert lines(axes[1]) and not lines(axes[0])


# ---------------------------------------------------------------- b_eff


def test_beff_draws_every_ring_the_channel_model_and_b_eff():
    result = beff_result()
    ax = plot.figure_for(result).axes[0]
    drawn = lines(ax)
    table = result.to_numpy()
    natural = table[table["pattern"] == "natural"]
    np.testing.assert_allclose(drawn["cpu natural (bandwidth)"].get_ydata(), natural["bandwidth"] * 1e-9)
    np.testing.assert_allclose(
        drawn["cpu random0 (bandwidth)"].get_ydata(), table[table["pattern"] == "random0"]["bandwidth"] * 1e-9
    )
    np.testing.assert_allclose(drawn["cpu channel model"].get_ydata(), natural["model_bandwidth"] * 1e-9)
    np.testing.assert_allclose(drawn["cpu b_eff 1.50 GB/s"].get_ydata(), [1.5, 1.5])
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_ylabel() == "bandwidth (GB/s)"


# --------------------------------------------------------------- gather


@pytest.mark.parametrize("benchmark_name", ["gather", "gather_sim"])
def test_gather_draws_time_and_throughput_per_schedule_and_node_count(benchmark_name):
    result = gather_result(benchmark_name, schedules=("ring", "tree", "mpi"))
    figure = plot.figure_for(result)
    time_ax, throughput_ax = figure.axes
    assert time_ax.get_ylabel() == "time (µs)" and throughput_ax.get_ylabel() == "throughput (GB/s)"
    assert time_ax.get_xlabel() == throughput_ax.get_xlabel() == "data per node (bytes)"
    assert all(ax.get_xscale() == ax.get_yscale() == "log" for ax in figure.axes)
    suffix = ", vcsn (simulated)" if benchmark_name == "gather_sim" else ""
    table = result.to_numpy()
    for schedule in ("ring", "tree", "mpi"):
        for nodes in (4, 9):
            rows = table[(table["schedule"] == schedule) & (table["nodes"] == nodes)]
            name = f"{schedule}, {nodes} nodes{suffix}"
            np.testing.assert_array_equal(lines(time_ax)[name].get_xdata(), rows["size"])
            np.testing.assert_allclose(lines(time_ax)[name].get_ydata(), rows["time"] * 1e6)
            np.testing.assert_allclose(lines(throughput_ax)[name].get_ydata(), rows["throughput"] * 1e-9)
            crosses = [
                line
                for line in time_ax.get_lines()
                if line.get_marker() == "x"
                and len(line.get_xdata())
                and line.get_color() == lines(time_ax)[name].get_color()
                and line.get_linestyle() == "None"
                and np.array_equal(line.get_xdata(), rows["size"])
            ]
            if benchmark_name == "gather_sim":  # the model's times, in the line's colour
                assert any(np.allclose(line.get_ydata(), rows["model"] * 1e6) for line in crosses)
            else:
                assert not crosses
    assert ("model (VCSN eq. 7)" in lines(time_ax)) == (benchmark_name == "gather_sim")


def test_a_gather_result_without_the_contract_columns_is_refused():
    broken = Result("gather", {}, {}, [{"nodes": 4, "size": 8, "time": 1.0}], {"nodes": "", "size": "B", "time": "s"})
    with pytest.raises(_core.UsageError, match="gather lacks the gather column 'schedule'"):
        plot.gather(broken)


# --------------------------------------------------- model against measurement


def test_model_against_measurement_draws_points_model_and_relative_residuals():
    result = osu("latency", "H", "H")
    fit = Linear.fit(result)
    figure = plot.model_against_measurement(fit)
    top, bottom = figure.axes
    np.testing.assert_allclose(lines(top)["measured"].get_ydata(), result.column("latency_avg") * 1e6)
    assert top.get_ylabel() == "latency_avg (µs)" and top.get_yscale() == "log"
    assert bottom.get_ylabel() == "relative error (%)" and bottom.get_xlabel() == "message size (bytes)"
    residual = bottom.get_lines()[0]
    y = result.column("latency_avg")
    np.testing.assert_allclose(residual.get_ydata(), (fit.model.predict(result.column("size")) - y) / y * 100)
    assert "R^2 = " in top.get_title()


def test_a_model_of_hops_is_drawn_on_linear_axes_named_by_its_column():
    model = CusComNet.from_paper()
    hops = [1, 2, 3, 4]
    rows = [{"hops": h, "size": 64, "latency": float(model.predict(h)) * (1 + 0.01 * h)} for h in hops]
    result = Result("fabric_latency", {}, {}, rows, {"hops": "", "size": "B", "latency": "s"})
    top, bottom = plot.model_against_measurement(CusComNet.fit(result)).axes
    assert bottom.get_xlabel() == "hops" and top.get_xscale() == top.get_yscale() == "linear"
    assert top.get_ylabel() == "latency (µs)"
    np.testing.assert_array_equal(lines(top)["measured"].get_xdata(), hops)
    np.testing.assert_allclose(lines(top)["measured"].get_ydata(), result.column("latency") * 1e6)


def test_a_fit_points_result_is_drawn_from_its_columns():
    result = osu("latency", "H", "H")
    comparison = Linear.fit(result).model.against(result)
    figure = plot.figure_for(comparison)
    top, bottom = figure.axes
    np.testing.assert_allclose(lines(top)["measured"].get_ydata(), comparison.column("measured") * 1e6)
    np.testing.assert_allclose(lines(top)["model"].get_ydata(), comparison.column("predicted") * 1e6)
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), comparison.column("relative_error") * 100)
    assert top.get_ylabel() == "latency_avg (µs)" and bottom.get_xlabel() == "message size (bytes)"


def test_a_model_against_bare_arrays_takes_its_units_from_the_models_columns():
    result = osu("latency", "H", "H")
    comparison = Linear.fit(result).model.against((result.column("size"), result.column("latency_avg")))
    assert comparison.units["measured"] == ""  # nothing recorded: the column's name says seconds
    top, _ = plot.model_against_measurement(comparison).axes
    assert top.get_ylabel() == "latency_avg (µs)"
    np.testing.assert_allclose(lines(top)["measured"].get_ydata(), result.column("latency_avg") * 1e6)


# ------------------------------------------------------------ dispatch


def test_figure_for_refuses_what_it_cannot_draw_and_mixtures():
    traffic = Result("fabric_traffic", {}, {}, [{"rate": 1.0}], {"rate": "1/s"})
    with pytest.raises(_core.UsageError, match="cannot draw a fabric_traffic Result"):
        plot.figure_for(traffic)
    with pytest.raises(_core.UsageError, match="cannot draw beff and gather Results on one figure"):
        plot.figure_for([beff_result(), gather_result()])
    with pytest.raises(_core.UsageError, match="model overlays apply to latency, bandwidth and b_eff"):
        plot.figure_for(gather_result(), models=[Linear(alpha=1.0, inverse_beta=1.0)])
    with pytest.raises(_core.UsageError, match="nothing to plot"):
        plot.figure_for([])


# ------------------------------------------------------------------ CLI


def fpgacomm_plot(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "fpgacomm", "plot", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ, MPLBACKEND="Agg"),
    )


def test_cli_draws_saved_results_with_a_fitted_model(tmp_path):
    osu("latency", "H", "H", noise=0).write_json(tmp_path / "lat_hh.json")
    osu("latency", "D", "D", noise=0).write_csv(tmp_path / "lat_dd.csv")
    run = fpgacomm_plot("lat_hh.json", "lat_dd.csv", "-o", "latency.svg", "--model", "hockney", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    svg = (tmp_path / "latency.svg").read_bytes()
    assert b"<svg" in svg[:400]
    # Each kind's fit in the legend (Matplotlib writes text as a comment beside its glyphs).
    for kinds in (b"H H", b"D D"):
        assert svg.count(b"<!-- " + kinds + b" hockney: alpha 2.00 us, beta 10.0 GB/s -->") == 1


def test_cli_fits_a_model_to_the_results_it_can_use_and_says_which_it_cannot(tmp_path):
    osu("latency", "D", "D", noise=0).write_json(tmp_path / "lat.json")
    osu("bw", "D", "D", noise=0).write_json(tmp_path / "bw.json")
    run = fpgacomm_plot("lat.json", "bw.json", "-o", "kinds.svg", "--model", "hockney", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("fpgacomm plot: hockney not fitted: hockney model needs columns") == 1
    # The latency fit, on the latency panel and beside the bandwidth of the same kinds.
    svg = (tmp_path / "kinds.svg").read_bytes()
    assert svg.count(b"<!-- D D hockney: alpha 2.00 us, beta 10.0 GB/s -->") == 2


def test_cli_errors_are_clear_and_leave_no_figure(tmp_path):
    osu("latency", "H", "H").write_json(tmp_path / "lat.json")
    beff_result().write_json(tmp_path / "beff.json")
    Result("fabric_traffic", {}, {}, [{"rate": 1.0}], {"rate": "1/s"}).write_json(tmp_path / "traffic.json")
    (tmp_path / "junk.json").write_text("{")
    cases = [
        (("lat.json", "-o", "figure.jpg"), "unknown extension .jpg; use .png, .pdf or .svg"),
        (("missing.json", "-o", "figure.png"), "missing.json: no such file"),
        (("junk.json", "-o", "figure.png"), "junk.json: not an fpgacomm Result: "),
        (("traffic.json", "-o", "figure.png"), "cannot draw a fabric_traffic Result"),
        (("lat.json", "beff.json", "-o", "figure.png"), "cannot draw beff and latency Results on one figure"),
        (("lat.json", "-o", "nodir/figure.png"), "does not exist"),
        (("lat.json", "-o", "figure.png", "--model", "nosuch"), "unknown model 'nosuch'; choose hockney, "),
        (("beff.json", "-o", "figure.png", "--model", "hockney"), "hockney model needs columns 'size' and one of"),
    ]
    for args, message in cases:
        run = fpgacomm_plot(*args, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stderr)
        assert run.stderr.count(message) == 1, (args, run.stderr)
        assert run.stderr.startswith("fpgacomm: error: ") and "Traceback" not in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beff.json", "junk.json", "lat.json", "traffic.json"]


def test_results_of_one_name_are_told_apart_by_the_parameters_that_differ():
    """A chunk-size sweep: every Result is "D D", so the legend adds chunk_bytes."""
    sweep = []
    for chunk in (1 << 20, 4 << 20):
        result = osu("bw", "D", "D")
        sweep.append(Result(result.benchmark, {**result.params, "chunk_bytes": chunk}, {}, result.rows, result.units))
    fig = plot.figure_for(sweep)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels == ["D D chunk_bytes=1048576", "D D chunk_bytes=4194304"]


def test_only_colliding_names_get_parameters_and_run_length_only_when_needed():
    """H-H single against multiple buffers beside D-D: only the two H-H lines
    grow, by buffers (their differing iterations are left out); two runs that
    differ in iterations alone are named by them."""

    def h_h(**params):
        result = osu("bw", "H", "H")
        return Result(
            result.benchmark,
            {**result.params, "buffers": "single", "iterations": 10, **params},
            {},
            result.rows,
            result.units,
        )

    results = [h_h(), h_h(buffers="multiple", iterations=4), osu("bw", "D", "D")]
    labels = [line.get_label() for line in plot.figure_for(results).axes[0].get_lines()]
    assert labels == ["H H buffers=single", "H H buffers=multiple", "D D"]
    labels = [line.get_label() for line in plot.figure_for([h_h(), h_h(iterations=1000)]).axes[0].get_lines()]
    assert labels == ["H H iterations=10", "H H iterations=1000"]


# ------------------------------------------------ titles, sparse points, series


def test_a_figure_is_titled_by_its_benchmark_and_shared_kinds():
    assert plot.latency([osu("latency", "D", "D")]).axes[0].get_title() == "osu_latency D D: latency by message size"
    both = plot.latency([osu("latency", "H", "H"), osu("latency", "D", "D")]).axes[0]
    assert both.get_title() == "osu_latency: latency by message size"


def test_sizes_far_apart_are_drawn_as_points_not_joined():
    sparse = osu("latency", "H", "H")
    sparse.rows = [row for row in sparse.rows if row["size"] in (8, 65536, 1 << 20)]
    ax = plot.latency([sparse, osu("latency", "D", "D")]).axes[0]
    assert lines(ax)["H H"].get_linestyle() == "None" and lines(ax)["D D"].get_linestyle() == "-"


def test_gather_measured_and_simulated_runs_of_one_schedule_differ_in_style():
    ax = plot.gather_time([gather_result("gather", ("ring",)), gather_result("gather_sim", ("ring",))]).axes[0]
    styles = {name: line.get_linestyle() for name, line in lines(ax).items()}
    assert styles["ring, 4 nodes"] != styles["ring, 4 nodes, vcsn (simulated)"]


# ------------------------------------------------ notebooks and legends


def test_a_notebook_cell_returning_a_figure_shows_it_as_an_image_without_magics():
    """Executed by the fpgacomm kernel (tests/test_notebooks.py's), as a user's
    notebook is: the figure is image/png, not "<Figure size ...>" text; under
    `%matplotlib inline` it is shown once."""
    nbclient = pytest.importorskip("nbclient", reason="scripts/setup.sh installs Debian's python3-nbclient")
    nbformat = pytest.importorskip("nbformat")
    cells = [
        "from fpgacomm import Result, plot\n"
        "rows = [{'size': 1 << k, 'latency_avg': 1e-6 * (1 + k)} for k in range(8)]\n"
        "plot.latency([Result('osu_latency', {}, {}, rows, {'size': 'B', 'latency_avg': 's'})])",
        "%matplotlib inline\nimport matplotlib.pyplot\n"
        "plot.latency([Result('osu_latency', {}, {}, rows, {'size': 'B', 'latency_avg': 's'})])",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nbclient.NotebookClient(notebook, kernel_name="fpgacomm", timeout=300).execute()
    for cell in notebook.cells:
        images = [output for output in cell.outputs if "image/png" in output.get("data", {})]
        assert len(images) == 1, cell.outputs
        assert images[0]["data"]["image/png"].startswith("iVBORw0KGgo")  # base64 of PNG's signature


def test_runs_of_one_kind_are_named_by_label_or_file_never_by_their_round_seed(tmp_path):
    runs = []
    for seed in (1506449136941045982, 42):
        result = osu("latency", "H", "H")
        runs.append(
            Result(result.benchmark, {**result.params, "rounds": 3, "round_seed": seed}, {}, result.rows, result.units)
        )
    assert plot.legend_labels(runs) == ["H H (1)", "H H (2)"]
    assert [line.get_label() for line in plot.latency(runs, labels=["before", "after"]).axes[0].get_lines()] == [
        "before",
        "after",
    ]
    with pytest.raises(_core.UsageError, match="1 label for 2 Results: give one label per Result"):
        plot.latency(runs, labels=["before"])
    for name, run in zip(("before.json", "after.json"), runs):
        run.write_json(tmp_path / name)
    for extra, expected in (
        ((), ["before.json", "after.json"]),
        (("--label", "old", "--label", "new"), ["old", "new"]),
    ):
        drawn = fpgacomm_plot("before.json", "after.json", "-o", "runs.svg", *extra, cwd=tmp_path)
        assert drawn.returncode == 0, drawn.stderr
        svg = (tmp_path / "runs.svg").read_text()
        assert all(f">{name}<" in svg or f"<!-- {name} -->" in svg for name in expected)
        assert "round_seed" not in svg


def test_peer_results_take_their_labels_too(tmp_path):
    posted = os.path.join(os.path.dirname(__file__), "data", "peers")
    drawn = fpgacomm_plot(
        os.path.join(posted, "rccl_tests_all_reduce.txt"),
        os.path.join(posted, "nccl_tests_tagged_error_column.txt"),
        "-o",
        "peers.svg",
        "--label",
        "rccl",
        "--label",
        "nccl",
        cwd=tmp_path,
    )
    assert drawn.returncode == 0, drawn.stderr
    svg = (tmp_path / "peers.svg").read_text()
    assert "<!-- rccl test=all_reduce type=float redop=sum -->" in svg and "<!-- nccl type=float" in svg
