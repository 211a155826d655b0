import json
import math
import os
import sys

import fpgacomm
import numpy as np
import pytest
from fpgacomm.results.result import SCHEMA, Result


def latency_result():
    rows = [
        {"size": 1, "latency_avg": 3.34e-06, "latency_p99": 0.1 + 0.2, "iterations": 10000, "validation": "pass"},
        {"size": 8, "latency_avg": 1.5e-06, "latency_p99": None, "iterations": 10000, "validation": None},
        {
            "size": 4194304,
            "latency_avg": 1.234567890123e-3,
            "latency_p99": 2e-3,
            "iterations": 1000,
            "validation": "fail",
        },
    ]
    units = {"size": "B", "latency_avg": "s", "latency_p99": "s", "iterations": "", "validation": ""}
    params = {
        "test": "latency",
        "send_kind": "D",
        "recv_kind": "H",
        "validate": True,
        "window": None,
        "sizes": [1, 8, 4194304],
    }
    env = {
        "hosts": ["n01", "n02"],
        "ranks": 2,
        "mpi": "Open MPI 4.1.4",
        "fpgacomm_version": "0.1.0",
        "device": "pocl cpu \u00e9",
    }
    samples = {"1": [3.3e-6, 3.4e-6], "8": [1.5e-6], "4194304": [1.2e-3, 1.3e-3]}
    return Result("osu_latency", params, env, rows, units, samples)


def assert_same(a, b, samples=True):
    assert a.benchmark == b.benchmark
    assert a.params == b.params
    assert a.env == b.env
    assert a.units == b.units
    assert list(a.units) == list(b.units)
    assert a.columns == b.columns
    assert a.rows == b.rows
    for ra, rb in zip(a.rows, b.rows):
        for k in ra:
            assert type(ra[k]) is type(rb[k]), k  # 1 must not come back as 1.0
    if samples:
        assert a.samples == b.samples


def test_columns_in_row_order():
    r = latency_result()
    assert r.columns == ["size", "latency_avg", "latency_p99", "iterations", "validation"]


def test_dict_round_trip():
    r = latency_result()
    d = r.to_dict()
    assert d["schema"] == SCHEMA == "fpgacomm.result/1"
    assert_same(Result.from_dict(d), r)


def test_json_round_trip_exact(tmp_path):
    r = latency_result()
    path = tmp_path / "lat.json"
    r.write_json(path)
    back = Result.read_json(path)
    assert_same(back, r)
    assert back.rows[0]["latency_p99"] == 0.1 + 0.2  # bit-exact float
    assert json.loads(path.read_text())["schema"] == SCHEMA


def test_csv_round_trip(tmp_path):
    r = latency_result()
    path = tmp_path / "lat.csv"
    r.write_csv(path)
    back = Result.read_csv(path)
    assert_same(back, r, samples=False)
    assert back.samples is None


def test_csv_layout(tmp_path):
    path = tmp_path / "lat.csv"
    latency_result().write_csv(path)
    lines = path.read_text().splitlines()
    comments = [line for line in lines if line.startswith("# ")]
    assert len(comments) == 4
    assert lines[1] == '# benchmark: "osu_latency"'
    assert lines[4] == "size[B],latency_avg[s],latency_p99[s],iterations[],validation[]"
    assert lines[5] == "1,3.34e-06,0.30000000000000004,10000,pass"
    assert lines[6] == "8,1.5e-06,,10000,"


def test_csv_refuses_strings_that_would_read_back_as_numbers(tmp_path):
    r = Result("x", {}, {}, [{"name": "12"}], {"name": ""})
    path = tmp_path / "x.csv"
    with pytest.raises(ValueError, match="'12'"):
        r.write_csv(path)
    assert not path.exists()


def test_empty_table_round_trips(tmp_path):
    r = Result("osu_bw", {"window": 64}, {}, [], {"size": "B", "bandwidth": "B/s"})
    assert r.columns == ["size", "bandwidth"]
    for name in ("e.csv", "e.json"):
        r.write(tmp_path / name)
        read = Result.read_csv if name.endswith("csv") else Result.read_json
        back = read(tmp_path / name)
        assert back.columns == ["size", "bandwidth"]
        assert back.rows == [] and back.params == {"window": 64}


def test_to_numpy_dtypes_and_values():
    a = latency_result().to_numpy()
    assert a.dtype.names == ("size", "latency_avg", "latency_p99", "iterations", "validation")
    assert a.dtype["size"] == np.int64
    assert a.dtype["latency_avg"] == np.float64
    assert a.dtype["latency_p99"] == np.float64
    assert a.dtype["iterations"] == np.int64
    assert a.dtype["validation"].kind == "U"
    assert list(a["size"]) == [1, 8, 4194304]
    assert a["latency_avg"][1] == 1.5e-06
    assert math.isnan(a["latency_p99"][1])
    assert list(a["validation"]) == ["pass", "", "fail"]


def test_int_column_with_none_becomes_float_nan():
    r = Result("x", {}, {}, [{"n": 1}, {"n": None}], {"n": ""})
    col = r.column("n")
    assert col.dtype == np.float64
    assert col[0] == 1.0 and math.isnan(col[1])


def test_column_unknown_name():
    with pytest.raises(KeyError, match="bandwidth"):
        latency_result().column("bandwidth")


def test_numpy_scalars_are_unwrapped():
    r = Result("x", {}, {}, [{"size": np.int64(8), "t": np.float64(1.5e-6)}], {"size": "B", "t": "s"})
    assert type(r.rows[0]["size"]) is int and type(r.rows[0]["t"]) is float


def test_rows_must_share_keys_and_units():
    with pytest.raises(ValueError, match="row 1"):
        Result("x", {}, {}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], {"a": "", "b": ""})
    with pytest.raises(ValueError, match="missing \\['b'\\]"):
        Result("x", {}, {}, [{"a": 1, "b": 2}], {"a": ""})
    with pytest.raises(TypeError, match="bool"):
        Result("x", {}, {}, [{"a": True}], {"a": ""})


def test_rows_keep_given_order():
    rows = [{"size": s} for s in (64, 1, 8)]
    assert [row["size"] for row in Result("x", {}, {}, rows, {"size": "B"}).rows] == [64, 1, 8]


def test_schema_errors(tmp_path):
    d = latency_result().to_dict()
    del d["schema"]
    with pytest.raises(ValueError, match="no 'schema' field"):
        Result.from_dict(d)
    d["schema"] = "fpgacomm.result/99"
    with pytest.raises(ValueError, match="unsupported result schema 'fpgacomm.result/99'"):
        Result.from_dict(d)
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"benchmarks": []}))
    with pytest.raises(ValueError, match="schema"):
        Result.read_json(path)
    path = tmp_path / "other.csv"
    path.write_text("size,latency\n1,2\n")
    with pytest.raises(ValueError, match="key\\[unit\\]"):
        Result.read_csv(path)


def test_failed_write_leaves_no_file(tmp_path):
    r = latency_result()
    r.params["comm"] = object()  # not JSON-serialisable: fails mid-way
    for name in ("bad.json", "bad.csv"):
        with pytest.raises(TypeError):
            r.write(tmp_path / name)
    assert os.listdir(tmp_path) == []  # neither the target nor a temporary file


def test_failed_write_keeps_previous_file(tmp_path):
    good = latency_result()
    for name in ("keep.json", "keep.csv"):
        path = tmp_path / name
        good.write(path)
        before = path.read_bytes()
        bad = latency_result()
        bad.env["handle"] = {1, 2}  # a set: not JSON
        with pytest.raises(TypeError):
            bad.write(path)
        assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.csv", "keep.json"]


def test_write_replaces_existing_file(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    latency_result().write(path)
    assert Result.read_json(path).benchmark == "osu_latency"


def test_write_dispatch_by_suffix(tmp_path):
    r = latency_result()
    r.write(tmp_path / "a.JSON")
    assert Result.read_json(tmp_path / "a.JSON").rows == r.rows
    with pytest.raises(ValueError, match=r"'\.txt'.*\.csv.*\.json"):
        r.write(tmp_path / "a.txt")


def test_repr_is_short():
    assert repr(latency_result()) == "Result('osu_latency', 3 rows, 5 columns)"


# --- for people reading Results: text, Jupyter, pandas, many files -----------


def _latency(kinds=("H", "H"), values=(1.5e-6, 2.25e-6)) -> Result:
    return Result(
        "osu_latency",
        {"send_kind": kinds[0], "recv_kind": kinds[1], "iterations": 100},
        {},
        [{"size": 1 << i, "latency_avg": v, "validation": None} for i, v in enumerate(values)],
        {"size": "B", "latency_avg": "s", "validation": ""},
    )


def test_a_result_prints_as_a_table_with_units():
    assert str(_latency()) == (
        "osu_latency, send_kind H, recv_kind H\n"
        "size  latency_avg  validation\n"
        " 1 B      1.50 us         N/A\n"
        " 2 B      2.25 us         N/A"
    )


def test_jupyter_shows_a_result_as_an_html_table():
    page = _latency(kinds=("H!", "D"))._repr_html_()
    assert page.startswith("<table><caption>osu_latency, send_kind H!, recv_kind D</caption>")
    assert "<th>latency_avg</th>" in page and "<td>2.25 us</td>" in page and page.count("<tr>") == 3


def test_to_pandas_says_what_to_install_when_pandas_is_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas then fails, as without pandas
    with pytest.raises(ImportError, match=r"needs pandas \(pip install pandas\); Result.to_numpy"):
        _latency().to_pandas()


def test_load_joins_many_files_with_what_tells_them_apart(tmp_path):
    _latency(("H", "H"), (1e-6, 2e-6)).write(tmp_path / "hh.json")
    _latency(("D", "D"), (3e-6, 4e-6)).write(tmp_path / "dd.csv")
    table = fpgacomm.load([tmp_path / "hh.json", str(tmp_path / "*.csv")])
    assert table.columns == ["file", "benchmark", "send_kind", "recv_kind", "size", "latency_avg", "validation"]
    assert [(row["send_kind"], row["size"], row["latency_avg"]) for row in table.rows] == [
        ("H", 1, 1e-6),
        ("H", 2, 2e-6),
        ("D", 1, 3e-6),
        ("D", 2, 4e-6),
    ]
    assert table.params == {
        "iterations": 100,
        "files": [str(tmp_path / "hh.json"), str(tmp_path / "dd.csv")],
        "run_columns": ["file", "benchmark", "send_kind", "recv_kind"],
    }
    assert table.units["latency_avg"] == "s"
    assert len(fpgacomm.load(tmp_path).rows) == 2  # a directory: its JSON files


def test_load_refuses_nothing_to_load_and_clashing_units(tmp_path):
    with pytest.raises(ValueError, match="holds no Result files"):
        fpgacomm.load(tmp_path)
    _latency().write(tmp_path / "a.json")
    other = _latency()
    other.units["latency_avg"] = "us"
    other.write(tmp_path / "b.json")
    with pytest.raises(ValueError, match="column 'latency_avg' is in 's' in one file and in 'us' in another"):
        fpgacomm.load(tmp_path)


def test_a_writer_killed_mid_write_leaves_no_temporary_file_and_the_old_content(tmp_path):
    import signal
    import subprocess

    target = tmp_path / "r.json"
    target.write_text("old")
    script = (
        "import sys, time\nfrom fpgacomm.results.result import atomic_write\n"
        "def slow(f):\n    f.write('partial'); f.flush(); print('writing', flush=True); time.sleep(60)\n"
        f"atomic_write({str(target)!r}, slow, newline=None)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.json"]
    assert target.read_text() == "old"


def test_an_incomplete_result_says_so_in_json_csv_and_load(tmp_path):
    stopped = _latency(("H", "H"), (1e-6, 2e-6))
    stopped.incomplete = "interrupted by SIGINT: 2 of 5 sizes measured"
    stopped.write(tmp_path / "stopped.json")
    stopped.write(tmp_path / "stopped.csv")
    _latency(("D", "D"), (3e-6, 4e-6)).write(tmp_path / "whole.json")
    assert json.loads((tmp_path / "stopped.json").read_text())["incomplete"] == stopped.incomplete
    assert "incomplete" not in json.loads((tmp_path / "whole.json").read_text())
    for path in ("stopped.json", "stopped.csv"):
        again = Result.read(tmp_path / path)
        assert again.incomplete == stopped.incomplete and again.rows == stopped.rows
        assert again.title().endswith(f"(incomplete: {stopped.incomplete})")
    assert Result.read(tmp_path / "whole.json").incomplete is None
    table = fpgacomm.load([tmp_path / "stopped.json", tmp_path / "whole.json"])
    assert [row["incomplete"] for row in table.rows] == [stopped.incomplete] * 2 + [None] * 2
    assert "incomplete" not in fpgacomm.load(tmp_path / "whole.json").columns
