"""OSU point-to-point tests under mpirun -np 2 and -np 4, validation on."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_all, receive_fault
from fpgacomm import Result, _core, osu
from fpgacomm.results import timeline
from fpgacomm.runtime import calibration
from fpgacomm.runtime.devices import DeviceOptions, open_device

KINDS = ("H", "H!", "D")
PAIRS = list(itertools.product(KINDS, KINDS))
# Sizes that cross the 8 KiB iteration switch and, with a 64 KiB chunk, the
# pipelining (several chunks, a short last one).
SIZES = [1, 8, 8192, 65536 + 4096, 300000]
FAST = dict(sizes=SIZES, iterations=4, warmup=1, validate=True, chunk_bytes=65536, window=8)


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
@pytest.mark.parametrize("path", ["staged", "mapped"])
@pytest.mark.parametrize("send_kind,recv_kind", PAIRS)
def test_two_rank_tests_deliver_intact_data(comm, test, path, send_kind, recv_kind):
    result = osu.run(test, comm, mem=(send_kind, recv_kind), path=path, **FAST)
    assert [row["size"] for row in result.rows] == SIZES
    assert all(row["validation"] == "pass" and row["validation_errors"] == 0 for row in result.rows)
    value = "latency_avg" if test == "latency" else "bandwidth"
    assert all(row[value] > 0 for row in result.rows)
    routes = {"H": "direct", "H!": "direct", "D": path}
    assert result.params["send_route"] == routes[send_kind]
    assert result.params["recv_route"] == routes[recv_kind]
    assert result.env["ranks"] == 2


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", ["latency", "bw"])
def test_multiple_buffers_and_touch(comm, test):
    result = osu.run(test, comm, mem=("D", "D"), buffers="multiple", touch=True, path="staged", **FAST)
    assert all(row["validation"] == "pass" for row in result.rows)


@pytest.mark.ranks(2)
def test_latency_statistics_come_from_the_samples(comm):
    result = osu.latency(comm, sizes=[8], iterations=50, warmup=5)
    row, samples = result.rows[0], np.array(result.samples["8"])
    assert len(samples) == 50
    assert row["latency_avg"] == pytest.approx(samples.mean(), rel=1e-9)
    assert row["latency_min"] == samples.min() and row["latency_max"] == samples.max()
    assert row["latency_min"] <= row["latency_p50"] <= row["latency_p99"] <= row["latency_max"]


@pytest.mark.ranks(2)
def test_bandwidth_is_bytes_over_time(comm):
    result = osu.bw(comm, sizes=[65536], iterations=5, warmup=1, window=4)
    row, samples = result.rows[0], np.array(result.samples["65536"])
    # OMB: size * window * iterations / total time; the samples are per-window bandwidths.
    total_time = (65536 * 4 / samples).sum()
    assert row["bandwidth"] == pytest.approx(65536 * 4 * 5 / total_time, rel=1e-9)


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
def test_corruption_after_transfer_fails_validation(comm, test):
    """A fault changes one byte of rank 1's destination after each
    iteration; the validation code knows nothing of it and must see it."""

    def corrupt(buffer, offset, nbytes):
        byte = buffer.read(1, offset + nbytes // 2)
        buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)

    with receive_fault(comm, corrupt if comm.Get_rank() == 1 else None) as faulty:
        result = osu.run(test, faulty, mem=("D", "D"), path="staged", **FAST)
    assert result.rows[0]["validation"] == "fail"
    assert osu.failed_sizes(result) == [SIZES[0]]
    assert len(result.rows) == 1  # the sweep stops at the first failing size


def check_timeline(test: str, rows: list, sizes: list, chunk: int, window: int, file) -> None:
    """One row per staged chunk of the last window, per rank and direction,
    in order, with monotone host times and non-negative device durations;
    the analysis reads the file."""
    ways = {(0, "send"), (1, "recv")} if test == "bw" else {(r, w) for r in (0, 1) for w in ("send", "recv")}
    assert {(row["rank"], row["direction"]) for row in rows} == ways
    for rank, way in ways:
        for size in sizes:
            mine = [row for row in rows if (row["rank"], row["direction"], row["size"]) == (rank, way, size)]
            per_message = -(-size // chunk)
            assert [row["chunk"] for row in mine] == list(range(window * per_message))
            for row in mine:
                offset = (row["chunk"] % per_message) * chunk
                assert (row["offset"], row["bytes"]) == (offset, min(chunk, size - offset))
                order = ["copy_enqueued", "copy_done", "mpi_posted", "mpi_done"]
                if way == "recv":
                    order = order[2:] + order[:2]
                times = [row[key] for key in order]
                assert 0 <= times[0] and times == sorted(times), row
                assert min(row["queued_to_submit"], row["submit_to_start"], row["start_to_end"]) >= 0, row
    summaries = timeline.summarize(timeline.chunks(Result.read_json(file), str(file)))
    assert {(s["rank"], s["size"]) for s in summaries} == {(rank, size) for rank, _ in ways for size in sizes}
    assert all(timeline.report(s).count("limit: ") == 1 for s in summaries)


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", ["bw", "bibw"])
def test_timeline_records_every_staged_chunk_of_the_last_window(comm, test, tmp_path):
    chunk, window, sizes = 65536, 3, [1, 65536 + 4096, 300000]
    result = osu.run(
        test,
        comm,
        mem=("D", "D"),
        path="staged",
        sizes=sizes,
        iterations=3,
        warmup=1,
        validate=True,
        chunk_bytes=chunk,
        window=window,
        timeline=True,
    )
    problem = "" if all(row["validation"] == "pass" for row in result.rows) else "data failed validation"
    if comm.Get_rank() == 0:
        try:
            result.timeline.write_json(tmp_path / "timeline.json")
            check_timeline(test, result.timeline.rows, sizes, chunk, window, tmp_path / "timeline.json")
        except AssertionError as error:
            problem += f" timeline: {error!r}"
    elif result.timeline is not None:
        problem += " a timeline off rank 0"
    assert_all(comm, not problem, problem)


@pytest.mark.ranks(4)
@pytest.mark.parametrize("test", ["multi_lat", "mbw_mr"])
@pytest.mark.parametrize("send_kind,recv_kind", PAIRS)
def test_multi_pair_tests_deliver_intact_data(comm, test, send_kind, recv_kind):
    result = osu.run(test, comm, mem=(send_kind, recv_kind), **FAST)
    assert result.params["pairs"] == 2
    assert all(row["validation"] == "pass" for row in result.rows)
    if test == "mbw_mr":
        assert all(row["message_rate"] == pytest.approx(row["bandwidth"] / row["size"]) for row in result.rows)


@pytest.mark.ranks(2, 4)
def test_mbw_mr_varied_windows_with_multiple_buffers_validate(comm):
    """OMB's -V: each size at every window of 1 .. 128, in that order; with
    -b multiple the buffers are the largest window's, and a row checks those
    its window wrote."""
    result = osu.run(
        "mbw_mr",
        comm,
        vary_window=True,
        buffers="multiple",
        sizes=[4, 8],
        iterations=2,
        warmup=1,
        validate=True,
        validation_warmup=0,
    )
    windows = list(osu.VARIED_WINDOWS)
    ok = [(row["size"], row["window"]) for row in result.rows] == [(s, w) for s in (4, 8) for w in windows]
    ok = ok and all(row["validation"] == "pass" for row in result.rows)
    ok = ok and all(len(result.samples[osu.sample_key(row["size"], row["window"])]) == 2 for row in result.rows)
    assert_all(comm, ok, str(result.rows))


@pytest.mark.ranks(4)
def test_mbw_mr_pairs_leave_the_ranks_above_them_out(comm):
    """OMB's -p: with one pair of four ranks, rank 0 streams to rank 1 and
    ranks 2 and 3 move nothing, so a fault on rank 3's receive buffers cannot
    fail validation; with every rank taking part (N/2 pairs) it must."""

    def corrupt(buffer, offset, nbytes):
        byte = buffer.read(1, offset + nbytes // 2)
        buffer.write((byte + 1).astype(np.uint8), offset + nbytes // 2)

    for pairs, fails in ((1, False), (None, True)):
        with receive_fault(comm, corrupt if comm.Get_rank() == 3 else None) as faulty:
            result = osu.run(
                "mbw_mr",
                faulty,
                pairs=pairs,
                sizes=[8, 64],
                iterations=2,
                warmup=0,
                window=4,
                validate=True,
                validation_warmup=1,
            )
        assert_all(comm, result.params["pairs"] == (pairs or 2), f"pairs {result.params['pairs']}")
        assert_all(comm, (result.rows[0]["validation"] == "fail") == fails, f"-p {pairs}: {result.rows}")


@pytest.mark.ranks(4)
@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
def test_two_rank_tests_refuse_four_ranks(comm, test):
    with pytest.raises(_core.UsageError, match="needs exactly 2 ranks, and this run has 4") as caught:
        osu.run(test, comm, sizes=[8])
    assert caught.value.agreed


@pytest.mark.parametrize("chunk", [1000, 65536])
@pytest.mark.parametrize("path", ["staged", "mapped"])
def test_transfers_move_every_kind_pair_intact(comm, chunk, path):
    """Rank r sends to rank r^1 (pairs), every kind to every kind, sizes that
    are not multiples of the chunk."""
    rank = comm.Get_rank()
    peer = rank ^ 1
    if peer >= comm.Get_size():
        pytest.skip("odd rank count")
    device = open_device(comm, DeviceOptions())
    transfers = _core.Transfers(comm, device, path=path, chunk_bytes=chunk)
    rng = np.random.default_rng(7)
    ok = True
    for send_kind, recv_kind in PAIRS:
        for size in (1, 4099, 3 * chunk + 17):
            data = rng.integers(0, 256, size, dtype=np.uint8)
            if rank % 2 == 0:
                buffer = _core.Buffer(device, send_kind, size)
                buffer.write(data)
                transfers.send(buffer, peer, tag=3)
            else:
                buffer = _core.Buffer(device, recv_kind, size)
                transfers.recv(buffer, peer, tag=3)
                ok &= bool(np.array_equal(buffer.read(size), data))
    assert_all(comm, ok, "received data differs from what was sent")


def test_device_map_names_missing_device_on_every_rank(comm):
    missing = len(_core.select_devices())  # one past the last device, on any machine
    with pytest.raises(_core.UsageError, match=f"maps node-local rank 0 to device {missing}") as caught:
        open_device(comm, DeviceOptions(device_map=":".join([str(missing)] * 4)))
    assert caught.value.agreed


@pytest.mark.ranks(2)
def test_rows_reach_on_row_as_each_size_ends(comm):
    """on_row runs on rank 0 after each size, with the Result so far: one
    call per size, the rows growing one by one, the first before the next
    size is measured (it arrives at least the timed time of that size
    earlier), and the last Result's rows those of the finished run."""
    import time

    arrivals = []

    def on_row(result):
        arrivals.append((time.perf_counter(), result))

    sizes = [8, 1 << 20]
    result = osu.latency(comm, sizes=sizes, iterations=100, warmup=2, on_row=on_row)
    if comm.Get_rank() != 0:
        assert_all(comm, arrivals == [], "on_row ran on a rank other than 0")
        return
    counts = [len(partial.rows) for _, partial in arrivals]
    partials_marked = all(partial.incomplete == f"{n} of 2 sizes measured" for n, (_, partial) in zip(counts, arrivals))
    # The last size's timed iterations: 100 round trips, each twice its half-round-trip sample.
    last_size_time = 2 * sum(result.samples[str(1 << 20)])
    ok = (
        counts == [1, 2]
        and partials_marked
        and arrivals[-1][1].rows == result.rows
        and result.incomplete is None
        and arrivals[1][0] - arrivals[0][0] >= last_size_time
    )
    assert_all(
        comm, ok, f"counts {counts}, gap {arrivals[1][0] - arrivals[0][0]:.4f} s, last size " f"{last_size_time:.4f} s"
    )


@pytest.mark.ranks(2)
@pytest.mark.parametrize("room", [0, 8192])
def test_widened_copies_stay_inside_the_room_they_are_given(comm, room):
    """Staged copies shorter than the smallest fast copy are widened: reads
    anywhere in the buffer, writes past the message only inside `room`. The
    bytes past a message received without room stay as they were."""
    device = open_device(comm, DeviceOptions())
    transfers = _core.Transfers(comm, device, path="staged", chunk_bytes=1000, fast_to_device=4096, fast_to_host=4096)
    rng = np.random.default_rng(11)
    ok = True
    for size in (1, 100, 2500):
        data = rng.integers(0, 256, size, dtype=np.uint8)
        if comm.Get_rank() == 0:
            buffer = _core.Buffer(device, "D", 8192)
            buffer.write(data)
            transfers.send(buffer, 1, tag=5, nbytes=size)
        else:
            buffer = _core.Buffer(device, "D", 8192)
            buffer.write(np.full(8192, 0xEE, dtype=np.uint8))
            transfers.recv(buffer, 0, tag=5, nbytes=size, room=room)
            received = buffer.read(8192)
            ok &= bool(np.array_equal(received[:size], data))
            if room == 0:
                ok &= bool((received[size:] == 0xEE).all())
    assert_all(comm, ok, "a widened copy changed the message or bytes outside its room")


@pytest.mark.ranks(2)
@pytest.mark.parametrize("test", ["latency", "bw", "bibw"])
@pytest.mark.parametrize("multiple", [False, True])
def test_widened_staged_copies_deliver_intact_data(comm, test, multiple):
    """The point-to-point tests with copies widened to 16 KiB in both
    directions (as a GPU shared by two processes asks for writes): every
    size validates, whole chunks and short last ones alike."""
    options = _core.Pt2ptOptions(
        test=test,
        send_kind="D",
        recv_kind="D",
        multiple_buffers=multiple,
        window=4,
        sizes=SIZES,
        validation=True,
        transfer=_core.TransferOptions(
            path="staged", chunk_bytes=65536, slots=3, fast_to_device=16384, fast_to_host=16384
        ),
    )
    options.counts.iterations, options.counts.warmup = 3, 1
    options.counts.iterations_large, options.counts.warmup_large = 3, 1
    device = open_device(comm, DeviceOptions())
    raw = _core.run_pt2pt(comm, device, options)
    assert [timing["errors"] for timing in raw["sizes"]] == [0] * len(SIZES)
    assert (raw["fast_to_device"], raw["fast_to_host"], raw["slots"]) == (16384, 16384, 3)


@pytest.fixture
def shared_cache(comm, monkeypatch):
    """One empty calibration cache for every rank of the run."""
    import tempfile

    folder = comm.bcast(tempfile.mkdtemp(prefix="fpgacomm-cache-") if comm.Get_rank() == 0 else None, root=0)
    monkeypatch.setenv(calibration.CACHE_ENV, folder)
    return folder


@pytest.mark.ranks(2)
def test_auto_sizes_on_a_cpu_device_are_the_defaults_without_calibration(comm, shared_cache):
    result = osu.latency(comm, mem=("D", "D"), sizes=[1, 300000], iterations=3, warmup=1, validate=True)
    staging = result.params["staging"]
    assert [
        (row["source"], row["chunk_bytes"], row["slots"], row["fast_to_device"], row["fast_to_host"]) for row in staging
    ] == [("default", 1 << 20, 4, 1, 1)] * 2
    assert result.params["chunk_bytes"] == 1 << 20 and result.params["slots"] == 4
    assert all(row["validation"] == "pass" for row in result.rows)
    assert not (Path(shared_cache) / "fpgacomm").exists()


@pytest.mark.ranks(2)
def test_a_bad_or_stale_cache_entry_is_measured_again(comm, shared_cache):
    """The collective calibration on a real device: a corrupt entry and then
    a stale one are measured again and replaced; a fresh one is used."""
    hosts = _core.host_names(comm)
    device = open_device(comm, DeviceOptions())
    key = calibration.key_of(device, len(calibration.sharing(comm, device, hosts)), hosts[comm.Get_rank()])
    path = calibration.cache_path(key)
    if comm.Get_rank() == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{corrupt")
    comm.Barrier()
    sizing, why = calibration.calibrate(comm, device, hosts)
    ok = why.startswith("measured (bad entry") and sizing.source == "measured"
    comm.Barrier()
    fresh, cached_why = calibration.load(key)
    ok &= fresh is not None and fresh.chunk_bytes == sizing.chunk_bytes and fresh.slots == sizing.slots
    comm.Barrier()
    if comm.Get_rank() == 0:
        entry = json.loads(path.read_text())
        entry["measured_at_epoch"] -= (calibration.MAX_AGE_DAYS + 1) * 86400
        path.write_text(json.dumps(entry))
    comm.Barrier()
    _, why = calibration.calibrate(comm, device, hosts)
    ok &= why.startswith("measured (stale entry")
    comm.Barrier()
    _, why = calibration.calibrate(comm, device, hosts)
    ok &= why.startswith("cached ")
    assert_all(comm, ok, why)
