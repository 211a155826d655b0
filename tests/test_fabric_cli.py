"""fpgacomm fabric latency|bw|traffic."""

import argparse
import json

import pytest
from fpgacomm.cli import fabric as fabric_cli


def run(argv):
    parser = argparse.ArgumentParser()
    fabric_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.run(args)


def test_latency_prints_each_value_with_its_unit_and_json_keeps_every_digit(tmp_path, capsys):
    path = tmp_path / "lat.json"
    assert (
        run(
            [
                "fabric",
                "latency",
                "cuscomnet_torus",
                "--nodes",
                "16",
                "--hops",
                "2",
                "--size",
                "64",
                "--json",
                str(path),
            ]
        )
        == 0
    )
    header, row = capsys.readouterr().out.splitlines()[1:]
    assert header.split()[:4] == ["size", "hops", "latency", "first_byte"]
    assert row.split()[:6] == ["64", "B", "2", "1.727", "us", "1.400"]  # 1.157 us + one hub (0.57 us)
    assert json.loads(path.read_text())["rows"][0]["latency"] == pytest.approx(1.727157e-06, rel=1e-6)


def test_bw_writes_json(tmp_path, capsys):
    path = tmp_path / "bw.json"
    assert run(["fabric", "bw", "vcsn", "--nodes", "4", "--size", str(64 << 20), "--json", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[2].split() == [
        "64",
        "MiB",
        "2",
        "5.395",
        "ms",
        "12.44",
        "GB/s",
        "44001",
    ]
    row = json.loads(path.read_text())["rows"][0]
    assert row["bandwidth"] == pytest.approx(12.44e9, rel=0.005)


def test_json_into_a_missing_directory_is_refused_before_simulating(tmp_path, capsys):
    from fpgacomm import cli

    assert cli.main(["fabric", "bw", "vcsn", "--json", str(tmp_path / "missing" / "bw.json")]) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == "" and "its directory does not exist; create it or give another path" in err


def test_traffic_needs_a_rate(capsys):
    with pytest.raises(SystemExit):
        run(["fabric", "traffic", "cuscomnet_torus"])
    assert run(["fabric", "traffic", "cuscomnet_torus", "--rate", "1e5", "--packets", "100"]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert header.split()[:5] == ["rate", "size", "packets", "mean_latency", "mean_wait"]


def test_gather_on_the_host_path_runs_mpi_from_the_command_line_as_the_api_does(tmp_path, capsys):
    from fpgacomm import cli, gather_sim

    path = tmp_path / "mpi.json"
    assert cli.main(["gather", "--fabric", "host_path", "--nodes", "4", "--sizes", "1M", "--json", str(path)]) == 0
    saved = json.loads(path.read_text())
    assert saved["params"]["schedule"] == "mpi"
    api = gather_sim.run(fabric="host_path", nodes=[4], sizes=[1 << 20]).rows[0]
    assert saved["rows"][0]["time"] == api["time"] and saved["rows"][0]["events_estimated"] == api["events_estimated"]
