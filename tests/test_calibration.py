"""The staged engine's sizes chosen from calibration figures, and the cache of
calibrations: what is trusted, and what is measured again (no MPI here; the
collective calibration and `fpgacomm tune` run under mpirun in
tests/mpi/test_pt2pt.py and tests/test_cli.py)."""

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fpgacomm import _core
from fpgacomm.runtime import calibration
from fpgacomm.runtime.calibration import KiB, MiB, Sizing

US = 1e-6
KEY = {
    "host": "node1",
    "platform": "NVIDIA CUDA",
    "platform_version": "OpenCL 3.0",
    "device": "H200",
    "driver": "580.159.04",
    "ranks_sharing_device": 2,
    "method": calibration.METHOD,
}


def rows(to_device, to_host):
    return [
        {"bytes": size, "to_device": d * US, "to_host": h * US}
        for size, d, h in zip(calibration.SMALL_SIZES, to_device, to_host)
    ]


def test_the_smallest_fast_copy_is_where_the_wait_ends():
    # Two processes sharing a GPU: writes below 32 KiB wait ~140 us; reads never do (bench/RESULTS.md).
    shared = rows([150, 150, 150, 151, 151, 152, 155, 16, 17, 18, 21], [15, 16, 15, 15, 15, 16, 16, 15, 16, 17, 20])
    assert calibration.fastest_small(shared, "to_device") == 32 * KiB
    assert calibration.fastest_small(shared, "to_host") == 1
    # A copy that only grows with its size has nothing to widen.
    flat = rows([14, 14, 14, 14, 15, 15, 15, 15, 16, 17, 19], [14] * 11)
    assert calibration.fastest_small(flat, "to_device") == 1


def test_chunk_is_the_fastest_pipeline_and_slots_the_fewest_near_the_fastest():
    chunk, why = calibration.choose_chunk({MiB: 0.020, 2 * MiB: 0.014, 4 * MiB: 0.016})
    assert chunk == 2 * MiB
    assert sum("<- fastest" in line for line in why) == 1 and "chunk 2 MiB" in next(
        line for line in why if "<-" in line
    )
    slots, why = calibration.choose_slots({2: 0.0150, 3: 0.0141, 4: 0.0140, 8: 0.0139}, 2 * MiB)
    assert slots == 3  # within 98 % of the fastest (8 slots), with less pinned memory
    sizing = calibration.choose(
        rows([150] * 7 + [16] * 4, [15] * 11), {MiB: 0.02, 2 * MiB: 0.014}, {2: 0.015, 4: 0.014}, 2 * MiB
    )
    assert (sizing.chunk_bytes, sizing.slots, sizing.fast_to_device, sizing.fast_to_host) == (2 * MiB, 4, 32 * KiB, 1)
    assert sizing.source == "measured" and any("smallest fast copy" in line for line in sizing.why)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(calibration.CACHE_ENV, str(tmp_path))
    return tmp_path


def stored(**changes) -> Sizing:
    sizing = Sizing(
        chunk_bytes=2 * MiB,
        slots=4,
        fast_to_device=32 * KiB,
        fast_to_host=1,
        source="measured",
        why=["figures"],
        measured_at="2026-11-27T08:30:28Z",
    )
    path = calibration.store(KEY, sizing, {"small": []})
    entry = json.loads(path.read_text())
    entry.update(changes)
    path.write_text(json.dumps(entry))
    return sizing


def test_a_fresh_entry_is_trusted_with_how_and_when_it_was_measured(cache):
    assert calibration.load(KEY) == (None, "no entry")
    stored()
    sizing, why = calibration.load(KEY)
    assert why.startswith("cached ") and sizing.source == "cache"
    assert (sizing.chunk_bytes, sizing.slots, sizing.fast_to_device) == (2 * MiB, 4, 32 * KiB)
    entry = json.loads(calibration.cache_path(KEY).read_text())
    assert entry["key"] == KEY and entry["how"]["method"] == calibration.METHOD
    assert abs(entry["measured_at_epoch"] - time.time()) < 60 and entry["sizing"]["measured_at"]
    assert str(cache) in str(calibration.cache_path(KEY))


GOOD = Sizing(chunk_bytes=MiB, slots=4, measured_at="2026-11-27T08:30:28Z").params()


@pytest.mark.parametrize(
    "entry,problem",
    [
        ("{not json", "bad entry"),
        ({"key": {**KEY, "driver": "older"}}, "measured for another device, driver or method"),
        ({"sizing": {**GOOD, "chunk_bytes": 0}}, "chunk_bytes 0 is not"),
        ({"sizing": {**GOOD, "slots": 999}}, "slots 999"),
        ({"measured_at_epoch": "yesterday"}, "measured_at_epoch 'yesterday' is not a finite number"),
        ({"measured_at_epoch": time.time() - (calibration.MAX_AGE_DAYS + 1) * 86400}, "stale entry"),
        ({"measured_at_epoch": time.time() + 86400}, "measured in the future"),
    ],
)
def test_a_bad_or_stale_entry_is_never_trusted(cache, entry, problem):
    stored()
    path = calibration.cache_path(KEY)
    if isinstance(entry, str):
        path.write_text(entry)
    else:
        data = json.loads(path.read_text())
        data.update(entry)
        path.write_text(json.dumps(data))
    sizing, why = calibration.load(KEY)
    assert sizing is None and problem in why, why


def malformed(entry: dict, where: str, value) -> dict:
    if where == "entry":
        return value
    if where == "sizing":
        entry["sizing"] = value
    elif where in entry["sizing"]:
        entry["sizing"][where] = value
    else:
        entry[where] = value
    return entry


# Each field with a value of the wrong shape: type, finiteness, range, string.
@pytest.mark.parametrize(
    "where,value,problem",
    [
        ("entry", [1, 2, 3], "a JSON object was expected, found list"),
        ("entry", "a string", "a JSON object was expected, found str"),
        ("sizing", [1, 2, 3], "'sizing' [1, 2, 3] is not an object"),
        ("sizing", {"chunk_bytes": MiB}, "'sizing' lacks fast_to_device"),
        ("chunk_bytes", True, "chunk_bytes True is not a size"),
        ("chunk_bytes", 1.5, "chunk_bytes 1.5 is not a size"),
        ("chunk_bytes", "1M", "chunk_bytes '1M' is not a size"),
        ("fast_to_device", False, "fast_to_device False is not a size"),
        ("fast_to_host", 1 << 31, "fast_to_host 2147483648 is not a size"),
        ("slots", True, "slots True is not from 1 to 64"),
        ("slots", 4.0, "slots 4.0 is not from 1 to 64"),
        ("source", 3, "source 3 is not a string"),
        ("why", {"a": 1}, "why {'a': 1} is not a list of strings"),
        ("why", ["fine", 2], "why ['fine', 2] is not a list of strings"),
        ("measured_at", float("nan"), "measured_at nan is not a UTC time"),
        ("measured_at", "yesterday", "measured_at 'yesterday' is not a UTC time"),
        ("measured_at_epoch", float("nan"), "measured_at_epoch nan is not a finite number"),
        ("measured_at_epoch", float("inf"), "measured_at_epoch inf is not a finite number"),
        ("measured_at_epoch", True, "measured_at_epoch True is not a finite number"),
        ("measured_at_epoch", None, "measured_at_epoch None is not a finite number"),
    ],
)
def test_every_field_of_an_entry_is_checked(cache, where, value, problem):
    stored()
    path = calibration.cache_path(KEY)
    path.write_text(json.dumps(malformed(json.loads(path.read_text()), where, value)))  # NaN as JSON's NaN
    sizing, why = calibration.load(KEY)
    assert sizing is None and why.startswith(f"bad entry {path}: ") and problem in why, why


def test_an_entry_with_an_unknown_field_or_unreadable_bytes_is_not_trusted(cache):
    stored()
    path = calibration.cache_path(KEY)
    entry = json.loads(path.read_text())
    entry["sizing"]["extra"] = 1
    path.write_text(json.dumps(entry))
    assert "'sizing' has unknown extra" in calibration.load(KEY)[1]
    path.write_bytes(b"\xff\xfe\x00")
    sizing, why = calibration.load(KEY)
    assert sizing is None and why.startswith(f"bad entry {path}: ")


class Measured:
    """calibrate's measurement, counted: what a bad entry must lead to."""

    def __init__(self, monkeypatch):
        self.calls = 0
        monkeypatch.setattr(calibration, "measure", self)
        monkeypatch.setattr(calibration, "key_of", lambda device, sharing, host=None: KEY)
        monkeypatch.setattr(calibration, "sharing", lambda comm, device, hosts, copies=True: [0])

    def __call__(self, comm, device, copies=True):
        self.calls += 1
        return Sizing(
            chunk_bytes=4 * MiB, slots=3, source="measured", why=["measured"], measured_at="2026-11-27T22:00:00Z"
        ), {"small": []}


def self_comm():
    from fpgacomm import mpi

    return mpi.MPI().COMM_SELF


def test_a_malformed_entry_is_measured_again_and_replaced(cache, monkeypatch):
    measured = Measured(monkeypatch)
    stored()
    path = calibration.cache_path(KEY)
    entry = json.loads(path.read_text())
    entry["sizing"]["slots"] = True
    path.write_text(json.dumps(entry))
    sizing, why = calibration.calibrate(self_comm(), None, ["node1"])
    assert measured.calls == 1 and why.startswith("measured (bad entry ") and sizing.chunk_bytes == 4 * MiB
    assert calibration.load(KEY)[0].slots == 3  # replaced by the new measurement
    sizing, why = calibration.calibrate(self_comm(), None, ["node1"])
    assert measured.calls == 1 and why.startswith("cached ")
    assert not list(path.parent.glob(".tmp*"))


def unusable(tmp_path, how: str):
    """A cache base whose calibration folder cannot be written, as `how` says."""
    if how == "a file":
        (tmp_path / "fpgacomm").write_text("not a folder")
    elif how == "read-only":
        (tmp_path / "fpgacomm" / "calibration").mkdir(parents=True)
        (tmp_path / "fpgacomm" / "calibration").chmod(0o500)
    return tmp_path


UNUSABLE = ["a file", "read-only"]


def root_writes_anywhere(how: str) -> bool:
    return how == "read-only" and os.geteuid() == 0


@pytest.mark.parametrize("how", UNUSABLE)
def test_an_unusable_folder_is_found_before_measuring(tmp_path, monkeypatch, capsys, how):
    monkeypatch.setenv(calibration.CACHE_ENV, str(unusable(tmp_path, how)))
    if root_writes_anywhere(how):
        # root ignores permission bits; a read-only mount is what stops it (test_tune_with_an_unusable_cache...).
        assert calibration.folder_problem() == ""
        return
    measured = Measured(monkeypatch)
    with pytest.raises(_core.UsageError) as error:  # fpgacomm tune: its figures are for the cache
        calibration.calibrate(self_comm(), None, ["node1"], force=True)
    assert measured.calls == 0
    assert str(error.value).startswith(f"the calibration cache folder {calibration.cache_folder()} cannot be written")
    assert "nothing was measured; set XDG_CACHE_HOME to a folder that can be written" in str(error.value)
    sizing, why = calibration.calibrate(self_comm(), None, ["node1"])  # a benchmark run: measured, not cached
    assert measured.calls == 1 and sizing.chunk_bytes == 4 * MiB
    warning = capsys.readouterr().err.splitlines()
    assert len(warning) == 1 and warning[0].startswith("fpgacomm: warning: the calibration cache folder ")
    assert "measuring, and not cached" in warning[0]


def test_a_failed_write_leaves_no_temporary_file(cache, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(calibration.json, "dump", full_disk)
    with pytest.raises(OSError):
        calibration.store(KEY, Sizing(chunk_bytes=MiB, slots=4), {})
    assert not list(calibration.cache_folder().glob("*"))
    Measured(monkeypatch)
    with pytest.raises(
        _core.UsageError,
        match="cannot write the calibration entry .*No space left on device.*" "the figures measured were not cached",
    ):
        calibration.calibrate(self_comm(), None, ["node1"], force=True)
    assert not list(calibration.cache_folder().glob("*"))


@contextlib.contextmanager
def mounted(folder: Path, options: str):
    """A tmpfs at `folder` (read-only, or tiny: a full disk), as only root may mount."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only or full file system needs root")
    run = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs: {run.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.mpi
@pytest.mark.parametrize("how", ["a file", "read-only", "full"])
def test_tune_with_an_unusable_cache_folder_exits_2_before_measuring(tmp_path, how):
    folder = tmp_path / "fpgacomm" / "calibration"
    with contextlib.ExitStack() as stack:
        if how == "a file":
            (tmp_path / "fpgacomm").write_text("not a folder")
        elif how == "read-only":
            stack.enter_context(mounted(folder, "ro,size=1m"))
        else:
            stack.enter_context(mounted(folder, "size=16k"))
            (folder / "filler").write_bytes(b"x" * 12288)  # what is left is less than an entry
        env = dict(
            os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", XDG_CACHE_HOME=str(tmp_path)
        )
        started = time.monotonic()
        run = subprocess.run(
            ["mpirun", "-np", "2", sys.executable, "-m", "fpgacomm", "tune", "--platform", "Portable"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        seconds = time.monotonic() - started
        assert run.returncode == 2, run.stderr
        assert run.stderr.count(f"the calibration cache folder {folder} cannot be written") == 1, run.stderr
        assert "nothing was measured; set XDG_CACHE_HOME to a folder that can be written" in run.stderr
        assert "Traceback" not in run.stderr and "MPI_ABORT" not in run.stderr and run.stdout == ""
        if how != "a file":
            assert [p.name for p in folder.iterdir()] == ([] if how == "read-only" else ["filler"])
    assert seconds < 120
