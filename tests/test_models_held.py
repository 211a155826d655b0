"""Fits that never crash or lie: a parameter the data cannot determine is
printed and saved as undetermined with its reason (never inf or NaN), a
latency or overhead never comes out below zero, covariances hold finite
numbers only, and stacking Results keeps their samples. On the simulator's
Results, on gathers run under mpirun, and on every registered model."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from fpgacomm import cli, models, plot
from fpgacomm.models import fit as fitting
from fpgacomm.models.beff import ChannelModel
from fpgacomm.models.cuscomnet import CusComNet
from fpgacomm.models.hockney import Hockney
from fpgacomm.models.packet import PacketModel
from fpgacomm.results.result import Result

FPGACOMM = [sys.executable, "-m", "fpgacomm"]


def strict(path) -> dict:
    """The file as JSON, refusing Infinity and NaN as strict readers (jq, browsers) do."""

    def refuse(constant):
        raise AssertionError(f"{path} holds {constant}")

    with open(path) as f:
        return json.load(f, parse_constant=refuse)


def run(capsys, argv):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return status, out, err


def test_a_simulated_ring_gather_fits_with_its_undetermined_parameters_said(tmp_path, capsys):
    # The ring never writes a topology, and no stage of 64 KiB or less closes
    # 500 us of work: t and barrier_long cannot be determined. This stopped
    # with OverflowError while printing inf, and --json was never written.
    ring, out_path = tmp_path / "ring.json", tmp_path / "fit.json"
    status, _, _ = run(
        capsys,
        [
            "gather",
            "--fabric",
            "vcsn",
            "--schedule",
            "ring",
            "--nodes",
            "4,9",
            "--sizes",
            "1K:64K",
            "--json",
            str(ring),
        ],
    )
    assert status == 0
    status, out, _ = run(capsys, ["fit", str(ring), "--model", "vcsn", "--json", str(out_path)])
    assert status == 0
    table = [line.split() for line in out.splitlines() if line.startswith("  ")]
    assert ["t", "undetermined", "undetermined"] in table
    assert ["barrier_long", "undetermined", "undetermined"] in table
    assert "  t undetermined: no row's schedule writes the topology (a ring's never does); held at 0" in out
    assert "  barrier_long undetermined: no barrier closes more than 500 us of work" in out
    rows = {row["parameter"]: row for row in strict(out_path)["rows"]}
    assert rows["t"]["value"] is None and rows["t"]["stderr"] is None
    assert rows["t"]["note"].startswith("undetermined: no row's schedule writes the topology")
    assert rows["b"]["value"] > 0 and rows["b"]["stderr"] > 0 and rows["b"]["note"] is None
    assert strict(out_path)["params"]["undetermined"] == ["t", "barrier_long"]
    # The simulator's own parameters come back where determined.
    assert rows["c"]["value"] == pytest.approx(1.35e-6, rel=1e-6)
    # CSV holds the same, the undetermined cells empty.
    csv = tmp_path / "fit.csv"
    Result.read_json(str(out_path)).write_csv(str(csv))
    assert Result.read_csv(str(csv)).rows[0]["value"] is None
    # The figure: per node count the measured times and the model's, from the file as from the Fit.
    figure = tmp_path / "fit.png"
    status, _, _ = run(capsys, ["plot", str(out_path), "-o", str(figure)])
    assert status == 0 and figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fitted = models.load("vcsn").fit(Result.read_json(str(ring)))
    drawn = plot.model_against_measurement(fitted).axes[0]
    assert [line.get_label() for line in drawn.get_lines()] == [
        "4 nodes: model",
        "4 nodes: measured",
        "9 nodes: model",
        "9 nodes: measured",
    ]


def test_the_covariance_of_a_gather_fit_is_finite_over_what_it_estimated(tmp_path, capsys):
    ring = tmp_path / "ring.json"
    run(
        capsys,
        [
            "gather",
            "--fabric",
            "vcsn",
            "--schedule",
            "ring",
            "--nodes",
            "4,9",
            "--sizes",
            "1K:64K",
            "--json",
            str(ring),
        ],
    )
    fitted = models.load("vcsn").fit(Result.read_json(str(ring)))
    assert fitted.estimated == ("c", "l", "b", "barrier_round", "barrier_short")
    assert fitted.covariance.shape == (5, 5) and np.all(np.isfinite(fitted.covariance))
    # The three sub-fits are measured apart: no covariance between them.
    assert fitted.covariance[0, 2] == 0 and fitted.covariance[2, 3] == 0


def gathers_under_mpirun(tmp_path) -> list:
    """Real tree gathers of host buffers at 2 and 4 ranks, each one launch.
    Not 3: on the 2-core machine 3 ranks share the cores so that the
    receiving rank finds each block's request already waiting when it posts,
    and Open MPI copies the block inside the posting call, so the set-up
    grows with the size and the transfer does not (a fit of the transfers
    then finds no bandwidth)."""
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
    )
    paths = []
    for ranks in (2, 4):
        path = tmp_path / f"tree{ranks}.json"
        launch = subprocess.run(
            [
                "mpirun",
                "-np",
                str(ranks),
                *FPGACOMM,
                "gather",
                "--schedule",
                "tree",
                "--mem",
                "H",
                "--sizes",
                "16K:256K",
                "-i",
                "3",
                "--json",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert launch.returncode == 0, launch.stderr[-3000:]
        paths.append(str(path))
    return paths


@pytest.mark.mpi
def test_real_gathers_stacked_keep_their_samples_and_fit_inside_the_bounds(tmp_path, capsys):
    paths = gathers_under_mpirun(tmp_path)
    single = [Result.read_json(path) for path in paths]
    stacked = fitting.read(paths)
    # The per-stage samples the fit classifies its barriers by: every key of
    # every launch, the one they share named after its place in the stack.
    keys = [set(result.samples) for result in single]
    assert set(stacked.samples) == (keys[0] ^ keys[1]) | {f"{n}.{k}" for n in "12" for k in keys[0] & keys[1]}
    assert stacked.samples["4/262144/transfer"] == single[1].samples["4/262144/transfer"]
    out_path = tmp_path / "fit.json"
    status, out, _ = run(capsys, ["fit", *paths, "--model", "vcsn", "--json", str(out_path)])
    assert status == 0
    fitted = models.load("vcsn").fit(stacked)
    for name in fitted.model.non_negative:
        assert fitted.params[name] >= 0, (name, fitted.params[name])
    assert np.all(np.isfinite(fitted.covariance))
    rows = {row["parameter"]: row for row in strict(out_path)["rows"]}
    for name, (label, why) in fitted.held.items():
        assert rows[name]["stderr"] is None and rows[name]["note"] == f"{label}: {why}"
        assert f"  {name} {label}: {why}" in out


# Data that an unbounded fit turns into a negative latency, overhead or
# header, for every model with such a parameter: (model, Result, the
# parameter, extra fit keywords).
SIZES = np.array([1 << m for m in range(16, 21)], dtype=float)


def bounded_cases():
    hockney = [{"size": int(s), "latency_avg": float(-1e-6 + s / 5e9)} for s in SIZES]
    latency = Result("osu_latency", {}, {}, hockney, {"size": "B", "latency_avg": "s"})
    hops = [{"hops": h, "latency": float(CusComNet.from_paper(app_latency=-0.05e-6).predict(h))} for h in (1, 2, 3, 4)]
    cuscomnet = Result("fabric_latency", {}, {}, hops, {"hops": "", "latency": "s"})
    beff_sizes = [1 << m for m in range(0, 21)]
    pair = ChannelModel(2, 32, 156.25e6, -3e-9)
    beff = Result(
        "b_eff",
        {},
        {},
        [{"size": s, "pair_bandwidth": float(pair.bandwidth(s))} for s in beff_sizes],
        {"size": "B", "pair_bandwidth": "B/s"},
    )
    packets = PacketModel(header=-16, line_rate=3e9, ceiling=5e9)
    peaks = Result(
        "fshmem_peaks",
        {},
        {},
        [{"packet_size": p, "peak_bandwidth": float(packets.predict(p))} for p in (64, 128, 256, 512)],
        {"packet_size": "B", "peak_bandwidth": "B/s"},
    )
    joined = [
        {
            "size": int(s),
            "latency_avg": float(1e-6 + s / 5e9),
            "bandwidth": float(s / (2e-7 + s / 5e9)),
            "send_overhead": 0.8e-6,
            "recv_overhead": 0.7e-6,
        }
        for s in SIZES
    ]
    loggp = Result(
        "osu_latency+osu_bw+overhead",
        {},
        {},
        joined,
        {"size": "B", "latency_avg": "s", "bandwidth": "B/s", "send_overhead": "s", "recv_overhead": "s"},
    )
    return [
        ("hockney", latency, "alpha"),
        ("hockney_piecewise", latency, "alpha"),
        ("cuscomnet", cuscomnet, "app_latency"),
        ("beff", beff, "latency_s"),
        ("packet", peaks, "header"),
        ("loggp", loggp, "L"),
    ]


def test_every_model_with_a_time_or_header_is_covered():
    covered = {name for name, _, _ in bounded_cases()} | {"vcsn"}  # vcsn: the gathers above
    assert covered == set(models.REGISTRY)


@pytest.mark.parametrize("name,result,parameter", bounded_cases(), ids=[c[0] for c in bounded_cases()])
def test_a_fit_holds_a_parameter_at_zero_rather_than_below_and_says_so(tmp_path, name, result, parameter):
    fitted = models.load(name).fit(result)
    assert fitted.params[parameter] == 0.0
    label, why = fitted.held[parameter]
    assert label == "at bound" and "not physical" in why
    assert fitted.stderr[parameter] is None and parameter not in fitted.estimated
    assert np.all(np.isfinite(fitted.covariance)) and fitted.covariance.shape == (len(fitted.estimated),) * 2
    assert all(math.isfinite(fitted.stderr[p]) for p in fitted.estimated)
    assert f"  {parameter} at bound: " in str(fitted)
    path = tmp_path / "fit.json"
    fitted.to_result().write(str(path))
    row = next(row for row in strict(path)["rows"] if row["parameter"] == parameter)
    assert row["value"] == 0.0 and row["stderr"] is None and row["note"].startswith("at bound: ")
    # The rest still describes the data: residuals small where only the bound moved the fit.
    assert np.all(np.isfinite(fitted.residuals))


def test_the_unbounded_value_is_in_the_reason():
    fitted = Hockney.fit(bounded_cases()[0][1])
    assert fitted.held["alpha"][1].startswith("unbounded, the fit puts it at -1")
    assert fitted.params["beta"] == pytest.approx(5e9, rel=0.01)


def test_one_overhead_size_has_no_scatter_and_says_so():
    # A single overhead size gave the variance inf, and the covariance with it.
    _, result, _ = bounded_cases()[-1]
    one = Result(
        result.benchmark,
        {},
        {},
        [result.rows[0]] + [{**row, "send_overhead": None, "recv_overhead": None} for row in result.rows[1:]],
        result.units,
    )
    fitted = models.load("loggp").fit(one)
    assert fitted.held["o_s"] == ("no scatter", "measured at one size only: no scatter to take its error from")
    assert np.all(np.isfinite(fitted.covariance))
