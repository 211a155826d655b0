"""The staged engine's sizes chosen from calibration figures, and the cache of
calibrations: what is trusted, and what is measured again (no MPI here; the
collective calibration and `fpgacomm tune` run under mpirun in
tests/mpi/test_pt2pt.py and tests/test_cli.py)."""

import json
import time

import pytest

from fpgacomm.runtime import calibration
from fpgacomm.runtime.calibration import KiB, MiB, Sizing

US = 1e-6
KEY = {"host": "node1", "platform": "NVIDIA CUDA", "platform_version": "OpenCL 3.0", "device": "H200",
       "driver": "580.159.04", "ranks_sharing_device": 2, "method": calibration.METHOD}


def rows(to_device, to_host):
    return [{"bytes": size, "to_device": d * US, "to_host": h * US}
            for size, d, h in zip(calibration.SMALL_SIZES, to_device, to_host)]


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
    assert sum("<- fastest" in line for line in why) == 1 and "chunk 2 MiB" in next(l for l in why if "<-" in l)
    slots, why = calibration.choose_slots({2: 0.0150, 3: 0.0141, 4: 0.0140, 8: 0.0139}, 2 * MiB)
    assert slots == 3  # within 98 % of the fastest (8 slots), with less pinned memory
    sizing = calibration.choose(rows([150] * 7 + [16] * 4, [15] * 11), {MiB: 0.02, 2 * MiB: 0.014},
                                {2: 0.015, 4: 0.014}, 2 * MiB)
    assert (sizing.chunk_bytes, sizing.slots, sizing.fast_to_device, sizing.fast_to_host) == (2 * MiB, 4, 32 * KiB, 1)
    assert sizing.source == "measured" and any("smallest fast copy" in line for line in sizing.why)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(calibration.CACHE_ENV, str(tmp_path))
    return tmp_path


def stored(**changes) -> Sizing:
    sizing = Sizing(chunk_bytes=2 * MiB, slots=4, fast_to_device=32 * KiB, fast_to_host=1, source="measured",
                    why=["figures"], measured_at="2026-11-27T08:30:28Z")
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


@pytest.mark.parametrize("entry,problem", [
    ("{not json", "bad entry"),
    ({"key": {**KEY, "driver": "older"}}, "measured for another device, driver or method"),
    ({"sizing": {"chunk_bytes": 0, "slots": 4, "fast_to_device": 1, "fast_to_host": 1}}, "chunk_bytes 0 is not"),
    ({"sizing": {"chunk_bytes": MiB, "slots": 999, "fast_to_device": 1, "fast_to_host": 1}}, "slots 999"),
    ({"sizing": {"chunk_bytes": MiB, "slots": 4}, "measured_at_epoch": "yesterday"}, "bad entry"),
    ({"measured_at_epoch": time.time() - (calibration.MAX_AGE_DAYS + 1) * 86400}, "stale entry"),
    ({"measured_at_epoch": time.time() + 86400}, "measured in the future"),
])
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

