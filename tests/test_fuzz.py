"""Seeded mutations of every format fpgacomm reads (Result JSON and CSV,
each peer's text of tests/data/peers, launches.json, timelines): a few
thousand each, each read as the commands read it and then used (its table,
its NumPy array, its series, its JSON), allowing no exception but the
ResultError of runtime/files.py, which the commands report as status 2.
The seed is fixed, so a failure here reproduces; FPGACOMM_FUZZ_SEED picks
another."""

import json
import math
import os
import random
import time
from pathlib import Path

import pytest
from fpgacomm import Result
from fpgacomm.results import launch_record, series, timeline
from fpgacomm.runtime.files import ResultError

SEED = int(os.environ.get("FPGACOMM_FUZZ_SEED", "37"))
PEERS = sorted((Path(__file__).parent / "data" / "peers").glob("*.txt"))
# The whole module's budget on a loaded machine (CI's runners are faster).
SECONDS = 60

# Text put where a mutation inserts or replaces: numbers at the edges,
# words the readers look for, bytes no text holds.
TOKENS = [
    "0",
    "-1",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e999",
    "N/A",
    "-",
    "",
    "#",
    "x",
    "float",
    "sum",
    "99999999999999999999999",
    "1_0",
    "\x00",
    "\udcff",
    "\u00e9",
    "\t",
    "[1,0]<stdout>:",
    "# OSU MPI Latency Test v7.4",
    "# Size  Avg Latency(us)",
    "# Benchmarking PingPong",
    "#bytes",
    "# ( 3 groups of 2 processes each running simultaneous )",
    "#    MODE: AGGREGATE",
    "# Collective test starting: all_reduce_perf",
    "#  size  count  type  redop  root  time  algbw  busbw",
    "MSize looplength time B/s",
    "b_eff = nan B/s",
    "Intel(R) MPI Benchmarks 2.0",
    '"',
    ",",
    "{",
    "]",
]
VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    math.nan,
    math.inf,
    -math.inf,
    10**30,
    "",
    "x",
    "s",
    [],
    {},
    [1, "a"],
    {"a": [None]},
    [[[]]],
    1e308,
]


def mutate_text(text: str, rng: random.Random) -> str:
    """One to three edits of the text: a span cut, a line doubled or
    dropped, lines swapped, a token replaced or inserted, the end cut."""
    for _ in range(rng.randint(1, 3)):
        lines = text.split("\n")
        kind = rng.randrange(7)
        if kind == 0 and text:
            start = rng.randrange(len(text))
            text = text[:start] + text[start + rng.randint(1, 40) :]
        elif kind == 1:
            index = rng.randrange(len(lines))
            lines.insert(index, lines[index])
            text = "\n".join(lines)
        elif kind == 2 and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif kind == 3 and len(lines) > 1:
            first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[first], lines[second] = lines[second], lines[first]
            text = "\n".join(lines)
        elif kind == 4:
            words = text.split(" ")
            words[rng.randrange(len(words))] = rng.choice(TOKENS)
            text = " ".join(words)
        elif kind == 5:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        else:
            text = text[: rng.randrange(len(text) + 1)]
    return text


def mutate_json(data, rng: random.Random):
    """The value with one place in its tree replaced by an odd value, or a
    key dropped."""
    data = json.loads(json.dumps(data))
    parent, key = None, None
    node = data
    for _ in range(rng.randint(1, 6)):
        children = (
            list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        )
        if not children:
            break
        key, child = rng.choice(children)
        parent, node = node, child
    if parent is None:
        return rng.choice(VALUES)
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[key]
    else:
        parent[key] = rng.choice(VALUES)
    return data


def write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", "surrogateescape"))


def use(result: Result) -> None:
    """What the commands do with a Result read: its table, array, series
    and JSON."""
    result.to_numpy()
    result.table()
    for row in result.rows:
        series.label(series.identity(row))
    json.dumps(result.to_dict())


def check(read, path: Path, failures: list, what: str) -> None:
    try:
        value = read(path)
    except ResultError:
        return
    except Exception as error:  # noqa: BLE001 - the test's very point: any other exception is a defect
        failures.append(f"{what}: reading: {type(error).__name__}: {error}")
        return
    try:
        if isinstance(value, Result):
            use(value)
    except Exception as error:  # noqa: BLE001
        failures.append(f"{what}: using what was read: {type(error).__name__}: {error}")


def result_with_rounds() -> Result:
    rows = [
        {
            "size": size,
            "latency_avg": 1e-6 * size,
            "latency_p99": 2e-6 * size,
            "validation": "pass",
            "rounds": {"latency_avg": [1e-6 * size, 1.2e-6 * size], "latency_p99": [2e-6 * size, 2e-6 * size]},
        }
        for size in (1, 8, 64)
    ]
    return Result(
        "osu_latency",
        {"send_kind": "D", "sizes": [1, 8, 64]},
        {"hosts": ["n1"]},
        rows,
        {"size": "B", "latency_avg": "s", "latency_p99": "s", "validation": ""},
        {"1": [1e-6, 1.1e-6], "8": [8e-6], "64": [6.4e-5]},
    )


def timeline_result() -> Result:
    row = {
        "rank": 0,
        "size": 1 << 20,
        "chunk": 0,
        "direction": "send",
        "bytes": 1 << 18,
        "copy_enqueued": 0.0,
        "copy_done": 1e-5,
        "mpi_posted": 1e-5,
        "mpi_done": 3e-5,
        "queued_to_submit": 1e-6,
        "submit_to_start": 1e-6,
        "start_to_end": 8e-6,
    }
    rows = [dict(row, chunk=index, copy_enqueued=index * 1e-5, copy_done=(index + 1) * 1e-5) for index in range(3)]
    units = {
        key: "s" if isinstance(value, float) else "B" if key in ("size", "bytes") else "" for key, value in row.items()
    }
    return Result("osu_bw_timeline", {}, {}, rows, units)


def read_timeline(path):
    result = Result.read(path)
    timeline.summarize(timeline.chunks(result, str(path)))
    return result


LAUNCH_RECORD = {
    "command": "fpgacomm osu latency",
    "fpgacomm": True,
    "rounds": 2,
    "launches": [
        {"launch": number, "output": f"0{number}.json", "status": 0, "seconds": 1.5, "load_before": 0.4, "cores": 16}
        for number in (1, 2)
    ],
}


def read_record(path: Path):
    record = launch_record.record(path.parent)
    for launch in record["launches"]:  # as compare uses it
        assert isinstance(launch["output"], str) and launch["cores"] >= 1
    return record


# Each format: (name, the file's name, how it is read, its good text, text or JSON mutations).
def formats(tmp_path) -> list:
    found = [
        ("Result JSON (text)", "r.json", Result.read, json.dumps(result_with_rounds().to_dict()), "text"),
        ("Result JSON (cells)", "r.json", Result.read, result_with_rounds().to_dict(), "json"),
    ]
    result_with_rounds().write_csv(tmp_path / "good.csv")
    found.append(("Result CSV", "r.csv", Result.read, (tmp_path / "good.csv").read_text(), "text"))
    found += [(f"peer text {path.name}", "out.txt", Result.read, path.read_text(), "text") for path in PEERS]
    found.append(("launches.json (text)", "launches.json", read_record, json.dumps(LAUNCH_RECORD), "text"))
    found.append(("launches.json (cells)", "launches.json", read_record, LAUNCH_RECORD, "json"))
    found.append(("timeline (cells)", "tl.json", read_timeline, timeline_result().to_dict(), "json"))
    return found


@pytest.mark.slow
def test_mutations_of_every_format_raise_only_result_error(tmp_path):
    cases = formats(tmp_path)
    assert len(PEERS) >= 10
    budget = SECONDS * 0.6 / len(cases)
    failures, counts = [], {}
    for name, file_name, read, good, how in cases:
        rng = random.Random(f"{SEED}:{name}")
        path = tmp_path / file_name
        check(read, (write(path, good if how == "text" else json.dumps(good)), path)[1], failures, f"{name} as is")
        started, count = time.monotonic(), 0
        while count < 2000 and (count < 300 or time.monotonic() - started < budget):
            mutant = mutate_text(good, rng) if how == "text" else json.dumps(mutate_json(good, rng))
            write(path, mutant)
            check(read, path, failures, f"{name} mutation {count} {mutant[:200]!r}")
            count += 1
        counts[name] = count
    assert not failures, f"{len(failures)} of {sum(counts.values())} mutations: " + "\n".join(failures[:10])
    assert sum(counts.values()) >= 300 * len(cases)


@pytest.mark.parametrize("path", PEERS, ids=[path.name for path in PEERS])
def test_every_posted_output_reads_unmutated(path):
    use(Result.read(path))
