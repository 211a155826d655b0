"""The peers' text read as Results (results/peers.py): outputs users posted
publicly (tests/data/peers/, its README says where each came from), read
with their values and units checked; outputs written from each tool's
documented layout where no post was found (said at each test; OMB's own
text: tests/test_omb_side.py builds OMB and reads it); and fpgacomm's own
OMB-style and HPCC-style text read back column for column."""

import subprocess
import sys
from pathlib import Path

import pytest
from fpgacomm import Result, report
from fpgacomm.results import peers, series

NCCL = """# nccl-tests version 2.19.6 nccl-headers=22305 nccl-library=22305
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4242 on      host device  0 [0000:07:00] NVIDIA H100
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    12.90    0.00    0.00      0    12.87    0.00    0.00      0
     1048576        262144     float     sum      -1    40.10   26.15   45.76      0    39.80   26.35   46.11    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 11.4700
#
# Collective test concluded: all_reduce_perf
"""

IMB = """#----------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.7, MPI-1 part
#----------------------------------------------------------------
# Date                  : Thu Nov 26 10:00:00 2026
# MPI_Datatype                   :   MPI_BYTE
# MPI_Datatype for reductions    :   MPI_FLOAT

#---------------------------------------------------
# Benchmarking PingPong
# #processes = 2
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0         1000         0.21         0.00
            8         1000         0.25        32.00

#----------------------------------------------------------------
# Benchmarking Allreduce
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            4         1000         0.91         0.95         0.93

# All processes entering MPI_Finalize
"""


def read(tmp_path, text, name="out.txt"):
    path = tmp_path / name
    path.write_text(text)
    return Result.read(path)


def test_nccl_tests_out_of_place_and_in_place_columns(tmp_path):
    result = read(tmp_path, NCCL)
    assert result.benchmark == "nccl_all_reduce" and result.params["iters"] == 20
    assert result.params["warmup_iters"] == 1 and result.params["maxBytes"] == 134217728
    last = result.rows[-1]
    assert (last["size"], last["count"], last["type"], last["redop"], last["root"]) == (
        1048576,
        262144,
        "float",
        "sum",
        -1,
    )
    assert last["time"] == pytest.approx(40.10e-6) and last["busbw"] == pytest.approx(45.76e9)
    assert last["algbw_in_place"] == pytest.approx(26.35e9) and last["wrong_in_place"] is None
    assert result.units["time"] == "s" and result.units["busbw_in_place"] == "B/s"
    # 0.00 GB/s is kept as 0, below the printed step of 0.01 GB/s
    assert result.rows[0]["busbw"] == 0.0 and result.params["resolution"]["busbw"] == pytest.approx(1e7)


def test_imb_tables_with_their_test_and_process_count(tmp_path):
    result = read(tmp_path, IMB)
    assert result.benchmark == "imb" and result.params["tests"] == ["PingPong", "Allreduce"]
    assert [(row["test"], row["processes"], row["size"]) for row in result.rows] == [
        ("PingPong", 2, 0),
        ("PingPong", 2, 8),
        ("Allreduce", 2, 4),
    ]
    assert result.rows[1]["latency"] == pytest.approx(0.25e-6) and result.rows[1]["bandwidth"] == pytest.approx(32e6)
    assert result.rows[2]["latency"] == pytest.approx(0.93e-6) and result.rows[2]["latency_max"] == pytest.approx(
        0.95e-6
    )
    assert [series.label(series.identity(row)) for row in result.rows] == [
        "test=PingPong processes=2",
        "test=PingPong processes=2",
        "test=Allreduce processes=2",
    ]
    single = read(tmp_path, IMB.split("#----------------------------------------------------------------\n# Bench")[0])
    assert single.benchmark == "imb_pingpong"


def test_fpgacomms_own_b_eff_text_reads_back(tmp_path):
    rows = [
        {
            "pattern": pattern,
            "size": size,
            "loop_length": 16,
            "time": 1e-5 * size,
            "bandwidth": 2e8 * size,
            "validation": "pass",
            "validation_errors": 0,
        }
        for pattern in ("ring", "random1")
        for size in (1, 2)
    ]
    beff = Result(
        "beff",
        {
            "comm_type": "cpu",
            "ranks": 3,
            "loop_rule": "hpcc",
            "b_eff_reduction": "mean",
            "b_eff": 3.5e8,
            "rings": {"ring": [0, 1, 2], "random1": [0, 2, 1]},
        },
        {},
        rows,
        {
            "pattern": "",
            "size": "B",
            "loop_length": "",
            "time": "s",
            "bandwidth": "B/s",
            "validation": "",
            "validation_errors": "",
        },
    )
    back = read(tmp_path, report.format_text(beff))
    assert back.benchmark == "beff" and back.params["b_eff"] == pytest.approx(3.5e8)
    assert [(row["pattern"], row["size"]) for row in back.rows] == [(r["pattern"], r["size"]) for r in rows]
    for row, original in zip(back.rows, rows):
        assert row["bandwidth"] == pytest.approx(original["bandwidth"], rel=1e-5)
        assert row["time"] == pytest.approx(original["time"], rel=1e-5)


def test_fpgacomms_own_omb_text_reads_back_with_full_columns(tmp_path):
    rows = [
        {
            "size": size,
            "latency_avg": 1e-6 * size,
            "latency_min": 0.9e-6 * size,
            "latency_max": 1.2e-6 * size,
            "latency_stdev": 1e-8,
            "latency_p50": 1e-6 * size,
            "latency_p90": 1.1e-6 * size,
            "latency_p99": 1.2e-6 * size,
            "validation": "pass",
        }
        for size in (1, 2, 4)
    ]
    latency = Result(
        "osu_latency",
        {"send_kind": "D", "recv_kind": "H", "validate": True, "datatype": "MPI_CHAR"},
        {},
        rows,
        {key: ("B" if key == "size" else "" if key == "validation" else "s") for key in rows[0]},
    )
    back = read(tmp_path, report.format_text(latency, full=True))
    assert back.benchmark == "osu_latency" and (back.params["send_kind"], back.params["recv_kind"]) == ("D", "H")
    assert sorted(back.columns) == sorted(rows[0])  # Validation stands where OMB prints it
    for row, original in zip(back.rows, rows):
        for key, value in original.items():
            assert row[key] == (value if isinstance(value, str) else pytest.approx(value, rel=1e-2)), key


def test_a_barrier_without_sizes_and_a_failed_program(tmp_path):
    barrier = read(tmp_path, "# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n             1.25\n")
    assert barrier.benchmark == "osu_barrier" and barrier.rows == [{"size": 0, "latency_avg": 1.25e-6}]
    with pytest.raises(ValueError, match="an OSU Micro-Benchmarks title but no table rows"):
        read(tmp_path, "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\nmpirun noticed ...\n")
    with pytest.raises(ValueError, match=r"several datatypes \(MPI_CHAR, MPI_INT"):
        read(
            tmp_path,
            "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size  Avg Latency(us)\n"
            "4  1.0\n# Datatype: MPI_INT.\n# Size  Avg Latency(us)\n4  1.0\n",
        )


DATA = Path(__file__).parent / "data" / "peers"


def posted(name: str) -> Result:
    """A posted output of tests/data/peers read as fpgacomm reads any file."""
    return Result.read(DATA / name)


def by_size(result: Result, **identity) -> dict:
    """{size: row} of the rows of one series."""
    return {row["size"]: row for row in result.rows if all(row[key] == value for key, value in identity.items())}


def test_nccl_tests_before_the_start_line_tagged_by_mpirun_with_error_columns():
    result = posted("nccl_tests_tagged_error_column.txt")
    assert result.benchmark == "nccl_tests" and len(result.rows) == 28  # every row, none of the NCCL INFO lines
    assert result.columns == [
        "test",
        "size",
        "count",
        "type",
        "redop",
        "time",
        "algbw",
        "busbw",
        "error",
        "time_in_place",
        "algbw_in_place",
        "busbw_in_place",
        "error_in_place",
    ]
    last = by_size(result)[1073741824]
    assert last["time"] == pytest.approx(61556e-6) and last["busbw"] == pytest.approx(32.71e9)
    assert last["algbw_in_place"] == pytest.approx(17.52e9) and last["error"] == pytest.approx(5e-7)
    first = by_size(result)[8]
    assert (first["count"], first["type"], first["redop"]) == (2, "float", "sum")
    assert first["busbw"] == 0.0 and first["time"] == pytest.approx(167.5e-6)  # kept, below 0.01 GB/s
    assert result.units["time"] == "s" and result.units["busbw"] == "B/s" and result.units["error"] == ""
    assert result.params["resolution"]["busbw"] == pytest.approx(1e7)
    assert result.params["resolution"]["time"] == pytest.approx(1e-6)  # 16865 us: whole microseconds


def test_nccl_tests_broadcast_with_root_and_no_redop_warnings_among_the_lines():
    result = posted("nccl_tests_broadcast_root_warn.txt")
    assert result.benchmark == "nccl_broadcast" and result.params["test"] == "broadcast"
    assert result.params["iters"] == 100 and result.params["warmup_iters"] == 10 and result.params["validation"] == 0
    (row,) = result.rows
    assert (row["size"], row["root"], row["error"], row["error_in_place"]) == (8, 0, None, None)  # N/A is None
    assert row["time"] == pytest.approx(45.82e-6) and row["time_in_place"] == pytest.approx(38.17e-6)
    assert "redop" not in result.columns


def test_nccl_tests_with_wrong_counts_and_rccl_tests():
    wrong = posted("nccl_tests_reduce_scatter_wrong.txt")
    assert [row["size"] for row in wrong.rows] == [0, 0, 0, 0, 0, 128, 256]
    assert all(row["wrong"] == 0 and row["wrong_in_place"] == 0 for row in wrong.rows)
    assert wrong.rows[5]["time"] == pytest.approx(32.31e-6) and wrong.rows[5]["algbw_in_place"] == pytest.approx(1e7)
    rccl = posted("rccl_tests_all_reduce.txt")
    assert rccl.benchmark == "nccl_all_reduce" and len(rccl.rows) == 25 and rccl.params["nGpus"] == 1
    row = by_size(rccl)[134217728]
    assert row["time"] == pytest.approx(12463e-6) and row["busbw"] == pytest.approx(10.77e9) and row["wrong"] == 0


def test_nccl_tests_blank_redop_cell_reads_as_none():
    # Written from nccl-tests's layout: versions printing no redop for a
    # collective leave the cell blank, so the row has one field less.
    text = (
        "# Collective test starting: alltoall_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
        "   busbw #wrong\n"
        "     1048576        262144     float             -1    40.10   26.15   45.76      0    39.80   26.35"
        "   46.11      0\n"
    )
    (row,) = Result.from_dict({"schema": "fpgacomm.result/1", **peers.read_nccl(text)}).rows
    assert (row["redop"], row["root"], row["size"]) == (None, -1, 1048576)
    assert row["busbw"] == pytest.approx(45.76e9) and row["wrong_in_place"] == 0


def test_imb_megabytes_by_version():
    old = by_size(posted("imb_4.1_pingpong.txt"))[4194304]  # IMB 4.1: MB = 2^20
    assert old["bandwidth"] == pytest.approx(9426.16 * 2**20) and old["latency"] == pytest.approx(424.35e-6)
    assert old["bandwidth"] == pytest.approx(4194304 / 424.35e-6, rel=1e-4)  # the same as bytes over time
    new = by_size(posted("imb_2021.3_pingpong.txt"))[4194304]  # IMB 2021.3: MB = 10^6
    assert new["bandwidth"] == pytest.approx(10526.36e6) and new["bandwidth"] == pytest.approx(
        4194304 / 398.46e-6, rel=1e-4
    )
    assert posted("imb_4.1_pingpong.txt").params["megabyte"] == 2**20
    assert posted("imb_2021.3_pingpong.txt").params["megabyte"] == 10**6
    assert [peers.imb_megabyte(version) for version in ("3.2.4", "4.0 Update 1", "4.1", "2017", "2019 Update 6")] == [
        2**20
    ] * 3 + [10**6] * 2


def test_imb_tables_of_several_process_counts_are_series():
    result = posted("imb_2019u6_uniband_npmin.txt")
    assert result.benchmark == "imb_uniband" and result.params["imb_version"] == "2019 Update 6"
    assert sorted({series.identity(row) for row in result.rows}) == [
        (("test", "Uniband"), ("processes", 2)),
        (("test", "Uniband"), ("processes", 4)),
    ]
    two = by_size(result, processes=2)[1]
    assert two["bandwidth"] == pytest.approx(4.04e6) and two["message_rate"] == 4041717
    assert result.units["message_rate"] == "1/s" and result.units["bandwidth"] == "B/s"


def test_imb_multi_groups_and_each_groups_rows():
    result = posted("pmb_multi_pingpong_groups.txt")
    assert {(row["groups"], row["processes"]) for row in result.rows} == {(2, 2)}
    rows = [(row["group"], row["size"]) for row in result.rows]
    assert rows[:4] == [(0, 0), (1, 0), (0, 1), (1, 1)] and len(rows) == 18
    last = result.rows[-1]
    assert last["latency"] == pytest.approx(5693.45e-6) and last["bandwidth"] == pytest.approx(702.56 * 2**20)
    assert len({series.identity(row) for row in result.rows}) == 2  # a series per group, never pooled
    # IMB's own -multi title is "Multi-PingPong": the test stays PingPong, the groups say -multi
    text = (
        "#    Intel(R) MPI Benchmarks 2019 Update 6, MPI-1 part\n# Benchmarking Multi-PingPong\n"
        "# ( 60 groups of 2 processes each running simultaneous )\n# Group  0:     0    1\n"
        "       #bytes #repetitions      t[usec]   Mbytes/sec\n            8         1000         1.00"
        "         8.00\n"
    )
    (row,) = Result.from_dict({"schema": "fpgacomm.result/1", **peers.read_imb(text)}).rows
    assert (row["test"], row["groups"], row["processes"], row["bandwidth"]) == ("PingPong", 60, 2, 8e6)


def test_imb_ext_modes_are_separate_series():
    aggregate = posted("imb_ext_unidir_put_aggregate.txt")
    assert {row["mode"] for row in aggregate.rows} == {"aggregate"}
    assert by_size(aggregate)[4194304]["bandwidth"] == pytest.approx(6345.08e6)
    # Both modes as IMB-EXT prints them (its source's layout; no post with both was found)
    table = "       #bytes #repetitions      t[usec]   Mbytes/sec\n         1024         1000         {}         {}\n"
    text = "".join(
        f"# Benchmarking Unidir_Put\n# #processes = 2\n#\n#    MODE: {mode} \n#\n" + table.format(time, rate)
        for mode, time, rate in (("AGGREGATE", "2.42", "422.86"), ("NON-AGGREGATE", "4.84", "211.43"))
    )
    result = Result.from_dict({"schema": "fpgacomm.result/1", **peers.read_imb(text)})
    assert [(row["mode"], row["latency"]) for row in result.rows] == [
        ("aggregate", pytest.approx(2.42e-6)),
        ("non-aggregate", pytest.approx(4.84e-6)),
    ]
    assert len({series.identity(row) for row in result.rows}) == 2


def test_omb_several_tables_each_with_its_own_header():
    result = posted("omb_7.2_bw_then_7.3_reduce.txt")
    assert result.benchmark == "omb" and result.params["tests"] == ["osu_bw", "osu_reduce"]
    bandwidth = by_size(result, test="osu_bw")
    latency = by_size(result, test="osu_reduce")
    assert len(bandwidth) == 26 and len(latency) == 11
    assert bandwidth[33554432]["bandwidth"] == pytest.approx(93130.52e6) and bandwidth[1]["latency_avg"] is None
    assert (bandwidth[1]["send_kind"], bandwidth[1]["processes"]) == ("D", 2)
    assert latency[1024]["latency_avg"] == pytest.approx(55.48e-6) and latency[1024]["bandwidth"] is None
    assert latency[1024]["latency_max"] == pytest.approx(134.61e-6) and latency[1024]["iterations"] == 1000
    assert latency[1024]["processes"] == 192 and result.units["latency_avg"] == "s"


def test_omb_non_blocking_collectives_with_units_and_runs_told_apart():
    result = posted("omb_5.3.2_iallgather_runs.txt")
    assert [(row["processes"], row["size"]) for row in result.rows] == [(16, 1), (24, 1), (28, 1)]
    first = result.rows[0]
    assert first["overall"] == pytest.approx(216.50e-6) and first["compute"] == pytest.approx(140.95e-6)
    assert first["pure_comm"] == pytest.approx(135.61e-6) and first["overlap"] == pytest.approx(0.4429)
    assert [result.units[key] for key in ("overall", "compute", "pure_comm", "overlap")] == ["s", "s", "s", "fraction"]
    stamped = posted("omb_5.3.2_igather_timestamped.txt")  # time stamps and tags, the header glued to row 1
    assert [row["size"] for row in stamped.rows] == [1, 2, 4, 8, 16, 32, 64]
    assert stamped.rows[0]["overall"] == pytest.approx(1.93e-6) and stamped.rows[-1]["pure_comm"] == pytest.approx(
        0.85e-6
    )


def test_omb_rows_with_a_note_and_a_header_one_column_longer_than_its_rows(tmp_path):
    # Written from OMB's layout: a note after a row's numbers is kept, and a
    # row one cell short of its header keeps its size (no post found of either).
    noted = read(
        tmp_path,
        "# OSU MPI Latency Test v5.9\n# Size          Latency (us)\n1                       1.50\n"
        "2                       9.75  (retried)\n",
    )
    assert [(row["size"], row["latency_avg"], row["note"]) for row in noted.rows] == [
        (1, pytest.approx(1.5e-6), None),
        (2, pytest.approx(9.75e-6), "(retried)"),
    ]
    short = read(
        tmp_path,
        "# OSU MPI Allreduce Latency Test v7.1\n# Size       Avg Latency(us)   Min Latency(us)\n"
        "4                       3.10\n8                       3.20\n",
    )
    assert [(row["size"], row["latency_avg"], row["latency_min"]) for row in short.rows] == [
        (4, pytest.approx(3.1e-6), None),
        (8, pytest.approx(3.2e-6), None),
    ]


def test_b_eff_headers_time_transfer_and_time_in_seconds(tmp_path):
    transfer = posted("beff_hpcc_fpga_transfer.txt")
    assert transfer.params["b_eff"] == pytest.approx(3.13237e10) and len(transfer.rows) == 21
    assert by_size(transfer)[2097152]["time"] == pytest.approx(6.94855) and by_size(transfer)[2097152][
        "bandwidth"
    ] == pytest.approx(7.91180e10)
    time = posted("beff_hpcc_fpga_time.txt")
    assert [(row["size"], row["loop_length"]) for row in time.rows][:3] == [(1, 16384), (2, 8192), (4, 4096)]
    assert time.units == {"pattern": "", "size": "B", "loop_length": "", "time": "s", "bandwidth": "B/s"}
    # "time [s]", as HPCC FPGA's later versions head the column (written from its layout)
    seconds = read(tmp_path, "   MSize   looplength   time [s]   B/s\n   1   16384   5.46779e-02   5.99292e+05\n")
    assert seconds.rows == [
        {"pattern": "ring", "size": 1, "loop_length": 16384, "time": 5.46779e-2, "bandwidth": 5.99292e5}
    ]


def test_plot_draws_imb_and_nccl_tests_a_line_per_series(tmp_path):
    from fpgacomm import plot

    imb = [posted("imb_2019u6_uniband_npmin.txt"), posted("imb_ext_unidir_put_aggregate.txt")]
    left, right = plot.figure_for(imb).axes
    assert [line.get_label() for line in right.get_lines()] == [
        "imb_2019u6_uniband_npmin.txt test=Uniband processes=2",
        "imb_2019u6_uniband_npmin.txt test=Uniband " "processes=4",
        "imb_ext_unidir_put_aggregate.txt test=Unidir_Put processes=2 mode=aggregate",
    ]
    sizes, gigabytes = right.get_lines()[1].get_data()
    assert sizes[-1] == 4194304 and gigabytes[-1] == pytest.approx(
        by_size(imb[0], processes=4)[4194304]["bandwidth"] / 1e9
    )
    assert [line.get_label() for line in left.get_lines()] == [  # Uniband prints no time
        "imb_ext_unidir_put_aggregate.txt test=Unidir_Put processes=2 mode=aggregate"
    ]
    nccl = plot.figure_for([posted("rccl_tests_all_reduce.txt")])
    times = nccl.axes[0].get_lines()[0].get_data()[1]
    assert times[-1] == pytest.approx(12463)  # us on the axis
    assert nccl.axes[1].get_lines()[0].get_data()[1][-1] == pytest.approx(10.77)  # busbw, GB/s
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "fpgacomm",
            "plot",
            str(DATA / "nccl_tests_tagged_error_column.txt"),
            str(DATA / "rccl_tests_all_reduce.txt"),
            "-o",
            str(tmp_path / "nccl.png"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "nccl.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nccl_tests_datatypes_and_reductions_are_series_not_repeats():
    # Rows as https://github.com/NVIDIA/nccl-tests/issues/167 posted them (-o all: max, then min, at
    # the same sizes), under the header of that version (cut from the excerpt).
    text = (
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
        "   busbw #wrong\n"
        "      199680         49920     float     max      -1    125.8    1.59    2.98      0    125.1    1.60"
        "    2.99      0\n"
        "      199680         49920     float     min      -1    125.4    1.59    2.98      0    125.2    1.59"
        "    2.99      0\n"
    )
    result = Result.from_dict({"schema": "fpgacomm.result/1", **peers.read_nccl(text)})
    assert [series.label(series.identity(row)) for row in result.rows] == [
        "test=all_reduce type=float redop=max",
        "test=all_reduce type=float redop=min",
    ]
    assert [row["time"] for row in result.rows] == [pytest.approx(125.8e-6), pytest.approx(125.4e-6)]
