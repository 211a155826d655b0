"""The one boundary through which fpgacomm reads files (runtime/files.py):
what is no regular file, too large, unreadable, binary or no UTF-8 is a
ResultError naming the path; every cell of a Result, a launch record and a
timeline is checked for its type and shape; and the commands say each in
one line with status 2, no traceback, no hang."""

import json
import math
import os
import subprocess
import sys

import pytest
from fpgacomm import Result
from fpgacomm.results import launch_record
from fpgacomm.runtime import files
from fpgacomm.runtime.files import ResultError

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
FPGACOMM = [sys.executable, "-m", "fpgacomm"]


def good() -> dict:
    """A Result's dict of two rows with rounds and samples."""
    rows = [
        {
            "size": size,
            "latency_avg": 1e-6 * size,
            "validation": "pass",
            "rounds": {"latency_avg": [1e-6 * size, 1.1e-6 * size]},
        }
        for size in (1, 2)
    ]
    return Result(
        "osu_latency",
        {"send_kind": "H"},
        {"hosts": ["a"]},
        rows,
        {"size": "B", "latency_avg": "s", "validation": ""},
        {"1": [1e-6], "2": [2e-6]},
    ).to_dict()


def written(tmp_path, data, name="r.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# ----------------------------------------------------------- what is read


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(ResultError, match=r"pipe.json: a FIFO \(named pipe\), not a regular file"):
        Result.read(fifo)  # no writer: a plain open() would block here forever


def test_a_device_is_refused_before_a_byte_is_read():
    with pytest.raises(ResultError, match="/dev/zero: a character device, not a regular file"):
        Result.read("/dev/zero")  # read to the end, it would fill the memory


def test_a_folder_a_missing_file_and_one_too_large(tmp_path):
    with pytest.raises(ResultError, match="a folder, not a file"):
        files.read_text(tmp_path)
    with pytest.raises(ResultError, match="none.json: no such file"):
        Result.read(tmp_path / "none.json")
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2048)
    assert files.read_bytes(big, limit=2048) == b"x" * 2048
    with pytest.raises(ResultError, match=r"big.txt: larger than"):
        files.read_bytes(big, limit=2047)


def test_a_file_this_user_cannot_read(tmp_path):
    secret = written(tmp_path, good(), "secret.json")
    secret.chmod(0)
    if os.geteuid() == 0:  # root reads anything: read it as nobody, as a user without the right would
        os.seteuid(65534)
    try:
        with pytest.raises(ResultError, match="secret.json: permission denied"):
            Result.read(secret)
    finally:
        if os.getuid() == 0:
            os.seteuid(0)


@pytest.mark.parametrize(
    "content, problem",
    [
        (b'{"schema": "fpgacomm.result/1"\x00}', r"binary data \(a NUL byte at offset 30\), not text"),
        (b"\x89PNG\r\n\x1a\n\xff\xfe", r"binary data|not UTF-8 text"),
        (b'{"schema": "caf\xe9"}', r"not UTF-8 text \(byte 0xe9 at offset 15\)"),
        (b"{", "not an fpgacomm Result: not valid JSON: Expecting property name"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply|nested deeper"),
        (b'{"x": 1' + b"0" * 5000 + b"}", "not an fpgacomm Result"),
    ],
    ids=["nul", "png", "latin-1", "broken", "deep", "huge-int"],
)
def test_binary_encodings_and_broken_json(tmp_path, content, problem):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(ResultError, match=problem):
        Result.read(path)


# ------------------------------------------------------------- every cell


def mutated(change) -> dict:
    data = good()
    change(data)
    return data


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda d: d["rows"][0].update(latency_avg="fast"), "row 0 column 'latency_avg': str 'fast' is not a number"),
        (lambda d: d["rows"][1].update(size=float("nan")), "row 1 column 'size': nan is not a finite number"),
        (lambda d: d["rows"][1].update(size=float("inf")), "row 1 column 'size': inf is not a finite number"),
        (lambda d: d["rows"][0].update(size=-8), "row 0 column 'size': -8 is below 0"),
        (lambda d: d["rows"][0].update(size=10**30), "out of the range of a 64-bit integer"),
        (lambda d: d["rows"][0].update(size=True), "row 0 column 'size': bool True is not a number"),
        (lambda d: d["rows"][0].update(validation=[1]), "must be int, float, str or None, got list"),
        (lambda d: d["rows"][1].update(validation=3), "row 1 column 'validation': 3 mixes text and numbers"),
        (lambda d: d["rows"][0].update(rounds=[1, 2]), "the rounds cell must be a non-empty dict"),
        (
            lambda d: d["rows"][0].update(rounds={"latency_avg": "x"}),
            "rounds of 'latency_avg' must be a non-empty list",
        ),
        (lambda d: d["rows"][0]["rounds"].update(size=[1, 2]), "names 'size', which is no measured column"),
        (lambda d: d["units"].update(latency_avg=1), "the unit of 'latency_avg' is int 1, not a unit's name"),
        (lambda d: d["units"].pop("validation"), "units must name every column"),
        (lambda d: d.update(rows={"size": 1}), "'rows' is dict"),
        (lambda d: d.update(rows=[1, 2]), "'rows' holds something other than objects"),
        (lambda d: d.update(params=[]), "'params' is list"),
        (lambda d: d.update(benchmark=7), "'benchmark' is int"),
        (lambda d: d.update(samples={"1": ["x"]}), "sample 0 of size 1: str 'x' is not a number"),
        (lambda d: d.update(samples={"1": [10**400]}), "sample 0 of size 1: int"),
        (lambda d: d.update(incomplete=5), "'incomplete' is int"),
        (lambda d: d.update(schema="fpgacomm.result/0"), "unsupported result schema"),
    ],
    ids=[
        "text-latency",
        "nan-size",
        "inf-size",
        "negative-size",
        "huge-size",
        "bool-size",
        "list-cell",
        "mixed-column",
        "rounds-list",
        "rounds-text",
        "rounds-size",
        "unit-int",
        "unit-missing",
        "rows-dict",
        "rows-ints",
        "params-list",
        "benchmark-int",
        "samples-text",
        "samples-huge",
        "incomplete-int",
        "schema",
    ],
)
def test_every_cell_of_a_result_json_is_checked(tmp_path, change, problem):
    path = written(tmp_path, mutated(change))
    with pytest.raises(ResultError, match=problem) as raised:
        Result.read(path)
    assert str(raised.value).startswith(f"{path}: ")


def test_a_result_file_still_reads_whole(tmp_path):
    back = Result.read(written(tmp_path, good()))
    assert back.rows[1]["rounds"] == {"latency_avg": [2e-6, 2.2e-6]} and back.samples == {"1": [1e-6], "2": [2e-6]}
    nan = mutated(lambda d: d["rows"][0].update(latency_avg=math.nan))  # a value not measured stays NaN
    assert math.isnan(Result.read(written(tmp_path, nan)).rows[0]["latency_avg"])


@pytest.mark.parametrize(
    "text, problem",
    [
        ("# schema: nope\n", "comment line 1 .* does not hold one JSON value"),
        ('# schema: "fpgacomm.result/1"\nsize\n', "header cell 'size' is not 'key\\[unit\\]'"),
        ('# schema: "fpgacomm.result/1"\n# benchmark: "x"\nsize[B],t[s]\n1\n', "line 4 has 1 cells, the header has 2"),
        ('# schema: "fpgacomm.result/1"\n# benchmark: "x"\nsize[B],t[s]\n1,fast\n', "row 0 column 't': str 'fast'"),
        ('# schema: "fpgacomm.result/1"\n# benchmark: "x"\nsize[B]\n"a' + "b" * 200000 + "\n", "not CSV"),
    ],
    ids=["meta", "header", "short-line", "text-time", "field-limit"],
)
def test_every_cell_of_a_result_csv_is_checked(tmp_path, text, problem):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(ResultError, match=problem):
        Result.read(path)


@pytest.mark.parametrize(
    "record, problem",
    [
        ([], "the record: list \\[\\] is not an object"),
        ({"command": 3, "launches": []}, "command: int 3 is not a command's text"),
        ({"command": "x", "launches": {}}, "launches: dict {} is not a list of launches"),
        (
            {"command": "x", "launches": [{"output": "01.txt", "status": "0", "load_before": 0.5, "cores": 4}]},
            "launch 1 status: str '0' is not a whole number",
        ),
        (
            {"command": "x", "launches": [{"output": "01.txt", "status": 0, "load_before": -1, "cores": 4}]},
            "launch 1 load_before: -1 is below 0",
        ),
        (
            {"command": "x", "launches": [{"output": 1, "status": 0, "load_before": 1, "cores": 4}]},
            "launch 1 output: int 1 is not a file name",
        ),
    ],
    ids=["list", "command", "launches", "status", "load", "output"],
)
def test_a_launch_record_of_the_wrong_shape(tmp_path, record, problem):
    (tmp_path / launch_record.LAUNCHES).write_text(json.dumps(record))
    with pytest.raises(ResultError, match=problem) as raised:
        launch_record.record(tmp_path)
    assert "not the record fpgacomm compare --run writes" in str(raised.value)


# ------------------------------------------------------------ as users see it


def fpgacomm(*argv, cwd):
    return subprocess.run(FPGACOMM + list(argv), capture_output=True, text=True, timeout=120, env=ENV, cwd=cwd)


def test_commands_say_each_bad_file_in_one_line_with_status_2(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    text_latency = written(tmp_path, mutated(lambda d: d["rows"][0].update(latency_avg="fast")), "text.json")
    (tmp_path / "bin.json").write_bytes(b"\x00\x01\x02")
    good_file = written(tmp_path, good(), "good.json")
    cases = [
        (("plot", str(fifo), "-o", "f.png"), "pipe.txt: a FIFO (named pipe), not a regular file"),
        (("plot", "/dev/zero", "-o", "f.png"), "/dev/zero: a character device, not a regular file"),
        (("compare", str(good_file), str(text_latency)), "row 0 column 'latency_avg': str 'fast' is not a number"),
        (("compare", str(good_file), str(tmp_path / "bin.json")), "binary data"),
        (("fit", str(text_latency), "--model", "hockney"), "row 0 column 'latency_avg': str 'fast'"),
        (("timeline", str(tmp_path / "bin.json")), "binary data"),
    ]
    for argv, message in cases:
        run = fpgacomm(*argv, cwd=tmp_path)
        assert run.returncode == 2, (argv, run.stderr)
        assert message in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, (
            argv,
            run.stderr,
        )
        assert not (tmp_path / "f.png").exists()


def test_a_campaign_folder_with_a_broken_record_is_one_message(tmp_path):
    for label in "AB":
        folder = tmp_path / label
        folder.mkdir()
        written(folder, good(), "01.json")
        (folder / launch_record.LAUNCHES).write_text('{"command": "x", "launches": 3}')
    run = fpgacomm("compare", "A", "B", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "launches.json: launches: int 3 is not a list of launches" in run.stderr
