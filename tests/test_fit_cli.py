"""fpgacomm fit and fpgacomm model: fits of Result files, model figures, and
one clear error for an unknown model, a missing module, a Result the model
cannot use, or a missing file."""

import json

import numpy as np
import pytest
from fpgacomm import cli, fabric, models
from fpgacomm.models.hockney import Hockney
from fpgacomm.results.result import Result

SIZES = [1 << m for m in range(21)]


def latency_file(tmp_path, name="lat.json"):
    truth = Hockney(alpha=2e-6, beta=5e9)
    noise = 1 + 0.01 * np.random.default_rng(1).standard_normal(len(SIZES))
    rows = [{"size": s, "latency_avg": float(truth.predict(s) * e)} for s, e in zip(SIZES, noise)]
    path = tmp_path / name
    Result("osu_latency", {}, {}, rows, {"size": "B", "latency_avg": "s"}).write(str(path))
    return str(path)


def run(capsys, argv):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def test_fit_prints_the_parameters_and_the_comparison_and_writes_json(tmp_path, capsys):
    out_path = tmp_path / "fit.json"
    status, out, _ = run(capsys, ["fit", latency_file(tmp_path), "--model", "hockney", "--json", str(out_path)])
    assert status == 0
    assert f"# hockney fit to osu_latency: {latency_file(tmp_path)}" in out
    assert "hockney fit over 21 points" in out
    assert [line.split() for line in out.splitlines() if line.strip().startswith(("parameter", "alpha", "beta"))][
        0
    ] == ["parameter", "value", "std.", "error"]
    assert "relative_error" in out and len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) == 21
    written = Result.read_json(str(out_path))
    values = {row["parameter"]: row for row in written.rows}
    assert abs(values["alpha"]["value"] - 2e-6) < 4 * values["alpha"]["stderr"]
    assert abs(values["beta"]["value"] - 5e9) < 4 * values["beta"]["stderr"]
    assert len(written.params["against"]["rows"]) == 21 and written.params["sources"] == [latency_file(tmp_path)]
    # The file draws as the model against the measurement.
    figure = tmp_path / "fit.png"
    status, _, _ = run(capsys, ["plot", str(out_path), "-o", str(figure)])
    assert status == 0 and figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def kinds_file(tmp_path, kinds, name, alpha=2e-6):
    truth = Hockney(alpha=alpha, beta=5e9)
    rows = [{"size": s, "latency_avg": float(truth.predict(s))} for s in SIZES]
    path = tmp_path / name
    Result(
        "osu_latency", {"send_kind": kinds[0], "recv_kind": kinds[1]}, {}, rows, {"size": "B", "latency_avg": "s"}
    ).write(str(path))
    return str(path)


def test_hockney_is_the_plain_model_and_the_piecewise_one_has_its_own_name(tmp_path, capsys):
    status, out, _ = run(capsys, ["fit", latency_file(tmp_path), "--model", "hockney_piecewise"])
    assert status == 0 and "hockney_piecewise fit over 21 points" in out and "ranges: 1" in out
    assert models.load("hockney").fit(Result.read_json(latency_file(tmp_path))).model.name == "hockney"


def test_memory_kinds_are_fitted_apart_never_pooled(tmp_path, capsys):
    host = kinds_file(tmp_path, ("H", "H"), "hh.json", alpha=1e-6)
    device = kinds_file(tmp_path, ("D", "D"), "dd.json", alpha=20e-6)
    status, out, _ = run(capsys, ["fit", host, device, "--model", "hockney"])
    assert status == 0
    headers = [line for line in out.splitlines() if line.startswith("# hockney fit to")]
    assert headers == [
        f"# hockney fit to osu_latency, send_kind H, recv_kind H: {host}",
        f"# hockney fit to osu_latency, send_kind D, recv_kind D: {device}",
    ]
    alphas = [scaled(*line.split()[1:3]) for line in out.splitlines() if line.strip().startswith("alpha")]
    assert alphas == pytest.approx([1e-6, 20e-6], rel=1e-6)
    status, _, err = run(capsys, ["fit", host, device, "--model", "hockney", "--json", str(tmp_path / "f.json")])
    assert status == 2 and "--json holds one fit, and these files make 2 groups" in err
    assert not (tmp_path / "f.json").exists()


@pytest.mark.parametrize(
    "second, message",
    [
        ("again", "are two runs of osu_latency over the same points; fit them one at a time"),
        ("bw", "the hockney model reads nothing from {path} (osu_bw); leave it out"),
    ],
)
def test_a_file_the_fit_would_pool_or_drop_is_refused_by_name(tmp_path, capsys, second, message):
    first = kinds_file(tmp_path, ("D", "D"), "lat.json")
    if second == "again":
        path = kinds_file(tmp_path, ("D", "D"), "lat2.json")
    else:
        path = str(tmp_path / "bw.json")
        Result(
            "osu_bw",
            {"send_kind": "D", "recv_kind": "D"},
            {},
            [{"size": s, "bandwidth": 1e9} for s in SIZES],
            {"size": "B", "bandwidth": "B/s"},
        ).write(path)
    status, _, err = run(capsys, ["fit", first, path, "--model", "hockney"])
    assert status == 2 and message.format(path=path) in err


def test_fit_stacks_results_of_one_benchmark(tmp_path, capsys):
    paths = []
    for hops in (1, 2, 3):
        path = tmp_path / f"hops{hops}.json"
        fabric.latency(fabric.cuscomnet_torus(forwarding="store_and_forward"), hops=hops, size=64).write(str(path))
        paths.append(str(path))
    status, out, _ = run(capsys, ["fit", *paths, "--model", "cuscomnet"])
    assert status == 0
    routing = next(line for line in out.splitlines() if line.strip().startswith("routing_latency"))
    assert scaled(*routing.split()[1:3]) == pytest.approx(0.57e-6, rel=2e-3)


def test_fit_joins_results_of_different_benchmarks_on_size(tmp_path, capsys):
    from fpgacomm.models.loggp import LogGP

    truth = LogGP(L=1.5e-6, o_s=0.4e-6, o_r=0.6e-6, g=0.9e-6, G=1 / 8e9)
    files = {
        "lat": ("osu_latency", "latency_avg", "s", truth.predict),
        "bw": ("osu_bw", "bandwidth", "B/s", truth.bandwidth),
        "over": ("osu_overhead", None, "s", None),
    }
    paths = []
    for name, (benchmark, column, unit, function) in files.items():
        # Every file has an iterations column, as osu's and overhead's do.
        if column:
            rows = [{"size": s, column: float(function(s)), "iterations": 10} for s in SIZES]
            units = {"size": "B", column: unit, "iterations": ""}
        else:
            rows = [{"size": s, "send_overhead": 0.4e-6, "recv_overhead": 0.6e-6, "iterations": 10} for s in SIZES]
            units = {"size": "B", "send_overhead": "s", "recv_overhead": "s", "iterations": ""}
        path = tmp_path / f"{name}.json"
        Result(benchmark, {}, {}, rows, units).write(str(path))
        paths.append(str(path))
    status, out, _ = run(capsys, ["fit", *paths, "--model", "loggp", "--json", str(tmp_path / "loggp.json")])
    assert status == 0, out
    values = {row["parameter"]: row["value"] for row in Result.read_json(str(tmp_path / "loggp.json")).rows}
    assert values == pytest.approx({"L": 1.5e-6, "o_s": 0.4e-6, "o_r": 0.6e-6, "g": 0.9e-6, "G": 1 / 8e9}, rel=1e-6)
    from fpgacomm.models.fit import read

    joined = read(paths)
    assert joined.columns == [
        "size",
        "latency_avg",
        "osu_latency.iterations",
        "bandwidth",
        "osu_bw.iterations",
        "send_overhead",
        "recv_overhead",
        "osu_overhead.iterations",
    ]
    assert joined.column("size").tolist() == SIZES


@pytest.mark.parametrize(
    "model,message",
    [
        ("beff", "beff model needs columns 'size' and 'pair_bandwidth'; osu_latency has size, latency_avg"),
        ("packet", "packet model needs columns 'packet_size' and 'peak_bandwidth'"),
        ("loggp", "loggp model needs columns bandwidth, send_overhead, recv_overhead"),
        ("cuscomnet", "cuscomnet model needs columns 'hops' and 'latency'"),
        ("nosuch", "unknown model 'nosuch'; choose hockney, hockney_piecewise, loggp, packet, beff, cuscomnet, vcsn"),
    ],
)
def test_fit_errors_name_the_problem(tmp_path, capsys, model, message):
    status, _, err = run(capsys, ["fit", latency_file(tmp_path), "--model", model])
    assert status == cli.EXIT_USAGE and message in err, err
    assert err.count("error") == 1


def test_fit_errors_on_a_missing_file_or_a_file_that_is_no_result(tmp_path, capsys):
    status, _, err = run(capsys, ["fit", str(tmp_path / "none.json"), "--model", "hockney"])
    assert status == cli.EXIT_USAGE and "none.json: no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    status, _, err = run(capsys, ["fit", str(bad), "--model", "hockney"])
    assert status == cli.EXIT_USAGE and "is not a Result JSON of fpgacomm" in err


def test_a_registered_model_without_its_module_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setitem(models.REGISTRY, "absent", "fpgacomm.models.absent")
    status, _, err = run(capsys, ["model", "absent"])
    assert status == cli.EXIT_USAGE
    assert "model 'absent' is registered, but its module fpgacomm.models.absent is not part of this installation" in err


def test_registry_names_every_model_and_each_module_provides_the_contract():
    assert list(models.REGISTRY) == ["hockney", "hockney_piecewise", "loggp", "packet", "beff", "cuscomnet", "vcsn"]
    for name in ("hockney", "hockney_piecewise", "loggp", "packet", "beff", "cuscomnet"):
        module = models.load(name)
        assert callable(module.predictions) and callable(module.fit)
        assert all(len(option) == 3 for option in module.OPTIONS.values())


# The units fpgacomm's texts scale values into, in their base unit.
SCALES = {
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "B/s": 1.0,
    "kB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "TB/s": 1e12,
    "B": 1.0,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
}


def scaled(number: str, unit: str) -> float:
    """A printed value ("570", "ns") in its base unit."""
    return float(number) * SCALES[unit]


def figure(out, name):
    """The value printed on the line of figure `name`, in its base unit."""
    line = next(line for line in out.splitlines() if line.startswith(name))
    return scaled(*line[len(name) :].split())


def predicted(name, figure_name, **options):
    """The figure's exact value, from the model's predictions in Python."""
    return next(row["value"] for row in models.load(name).predictions(**options).rows if row["figure"] == figure_name)


def test_model_beff_prints_b_eff_per_fpga(capsys):
    status, out, _ = run(capsys, ["model", "beff", "--preset", "520n"])
    assert status == 0
    assert figure(out, "b_eff per FPGA (2 kernel pairs)") == pytest.approx(7.77e9, rel=1e-3)
    assert predicted("beff", "b_eff per FPGA (2 kernel pairs)", preset="520n") == pytest.approx(7.77e9, abs=0.005e9)
    status, out, _ = run(capsys, ["model", "beff", "--fpgas", "4"])
    assert figure(out, "b_eff of a ring of 4 FPGAs") == pytest.approx(4 * 7.7718e9, rel=5e-3)
    assert predicted("beff", "b_eff of a ring of 4 FPGAs", fpgas=4) == pytest.approx(4 * 7.7718e9, rel=1e-4)


def test_model_cuscomnet_prints_eq1s_time(capsys):
    status, out, _ = run(capsys, ["model", "cuscomnet", "--links", "2", "--packet-bits", "512"])
    assert status == 0
    assert "T, eq. 1 (k = 2)" in out and figure(out, "T, eq. 1 (k = 2)") == pytest.approx(
        1.157e-6, rel=1e-9
    )  # four digits
    assert predicted("cuscomnet", "T, eq. 1 (k = 2)", links=2, packet_bits=512) == pytest.approx(1.157e-6, abs=0.5e-9)
    assert "1024 nodes (32x32 torus, k = 33)" in out


def test_model_packet_prints_the_fit_to_the_fshmem_paper(capsys):
    status, out, _ = run(capsys, ["model", "packet", "--packets", "128,512"])
    assert status == 0
    assert figure(out, "peak, 128 B packets") == pytest.approx(2.621e9, rel=1e-9)
    assert figure(out, "peak, 512 B packets") == pytest.approx(3.813e9, rel=1e-9)
    assert figure(out, "header") == pytest.approx(112.06, abs=0.01)
    assert predicted("packet", "peak, 128 B packets", packets="128,512") == pytest.approx(2621e6)
    assert predicted("packet", "peak, 512 B packets", packets="128,512") == pytest.approx(3813e6)
    assert abs(figure(out, "residual of the fit to the FSHMEM paper, 1024 B packets")) < 1e-3


@pytest.mark.parametrize(
    "argv,message",
    [
        (["model", "hockney", "--alpha", "1e-6"], "needs --alpha SECONDS and --beta BYTES_PER_SECOND"),
        (["model", "beff", "--preset", "u280"], "unknown b_eff preset 'u280'; choose 520n"),
        (["model", "cuscomnet", "--rate", "1e9"], "the output queue is unstable"),
        (["model", "packet", "--packets", "a,b"], "--packets takes payload sizes in bytes"),
        (["model", "hockney", "--alpha", "1e-6", "--beta", "0"], "hockney model: beta must be above 0 B/s, got 0"),
        (
            ["model", "hockney", "--alpha=-1e-6", "--beta", "1e9"],
            "hockney model: alpha cannot be negative, got -1e-06 s",
        ),
        (
            ["model", "hockney", "--alpha", "inf", "--beta", "1e9"],
            "hockney model: alpha must be a finite number, got inf",
        ),
        (
            ["model", "loggp", "--L=-1", "--o-s=-1", "--o-r", "0", "--g", "0", "--G", "0"],
            "loggp model: L cannot be negative, got -1 s",
        ),
        (
            ["model", "loggp", "--L", "1e-6", "--o-s", "0", "--o-r", "0", "--g", "0", "--G", "0"],
            "loggp model: G must be above 0 s/B, got 0",
        ),
        (
            ["model", "packet", "--header", "0", "--line-rate", "0"],
            "packet model: line_rate must be above 0 B/s, got 0",
        ),
        (["model", "beff", "--channels", "0"], "beff model: channels must be above 0, got 0"),
    ],
)
def test_model_errors_name_the_problem(capsys, argv, message):
    status, _, err = run(capsys, argv)
    assert status == cli.EXIT_USAGE and message in err, err


def test_model_refuses_an_unknown_option(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["model", "beff", "--colour", "red"])
    assert exit_.value.code == cli.EXIT_USAGE
    assert "unrecognized arguments: --colour red" in capsys.readouterr().err


@pytest.mark.parametrize(
    "latencies, message",
    [
        (
            [-1.0] * 21,
            "hockney model: osu_latency's latency_avg holds values at or below zero (21 of 21), which no "
            "measurement gives; check the file",
        ),
        # refused where the file is read (runtime/files.py): a column in seconds holds numbers
        (["fast"] * 21, "odd.json: row 0 column 'latency_avg': str 'fast' is not a number"),
    ],
)
def test_a_fit_refuses_data_no_measurement_gives(tmp_path, capsys, latencies, message):
    path = tmp_path / "odd.json"
    Result(
        "osu_latency",
        {},
        {},
        [{"size": s, "latency_avg": v} for s, v in zip(SIZES, latencies)],
        {"size": "B", "latency_avg": "s"},
    ).write(str(path))
    status, out, err = run(capsys, ["fit", str(path), "--model", "hockney"])
    assert status == 2 and message in err and "R^2" not in out
