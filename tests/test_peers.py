"""The peers' text read as Results (results/peers.py), on outputs written
from each tool's documented layout (OMB's own text: tests/test_omb_side.py
builds OMB and reads it), and fpgacomm's own OMB-style and HPCC-style text
read back column for column."""

import pytest

from fpgacomm import Result, report
from fpgacomm.results.compare import compare

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
    assert (last["size"], last["count"], last["type"], last["redop"], last["root"]) == (1048576, 262144, "float",
                                                                                       "sum", -1)
    assert last["time"] == pytest.approx(40.10e-6) and last["busbw"] == pytest.approx(45.76e9)
    assert last["algbw_in_place"] == pytest.approx(26.35e9) and last["wrong_in_place"] is None
    assert result.units["time"] == "s" and result.units["busbw_in_place"] == "B/s"
    # compare reads its most precise column, the time (busbw prints 0.00 GB/s at 8 B): every size has a ratio
    comparison = compare([str(tmp_path / "out.txt"), str(tmp_path / "out.txt")])
    assert comparison.params["column"] == "time" and [row["size"] for row in comparison.rows] == [8, 1048576]


def test_imb_tables_with_their_test_and_process_count(tmp_path):
    result = read(tmp_path, IMB)
    assert result.benchmark == "imb_mpi1" and result.params["tests"] == ["PingPong", "Allreduce"]
    assert [(row["test"], row["processes"], row["size"]) for row in result.rows] == [
        ("PingPong", 2, 0), ("PingPong", 2, 8), ("Allreduce", 2, 4)]
    assert result.rows[1]["latency"] == pytest.approx(0.25e-6) and result.rows[1]["bandwidth"] == pytest.approx(32e6)
    assert result.rows[2]["latency"] == pytest.approx(0.93e-6) and result.rows[2]["latency_max"] == pytest.approx(
        0.95e-6)
    comparison = compare([str(tmp_path / "out.txt"), str(tmp_path / "out.txt")])
    assert [(row["series"], row["size"]) for row in comparison.rows] == [
        ("test=Allreduce processes=2", 4), ("test=PingPong processes=2", 0), ("test=PingPong processes=2", 8)]
    single = read(tmp_path, IMB.split("#----------------------------------------------------------------\n# Bench")[0])
    assert single.benchmark == "imb_pingpong"


def test_fpgacomms_own_b_eff_text_reads_back(tmp_path):
    rows = [{"pattern": pattern, "size": size, "loop_length": 16, "time": 1e-5 * size, "bandwidth": 2e8 * size,
             "validation": "pass", "validation_errors": 0} for pattern in ("ring", "random1") for size in (1, 2)]
    beff = Result("beff", {"comm_type": "cpu", "ranks": 3, "loop_rule": "hpcc", "b_eff_reduction": "mean",
                           "b_eff": 3.5e8, "rings": {"ring": [0, 1, 2], "random1": [0, 2, 1]}}, {}, rows,
                  {"pattern": "", "size": "B", "loop_length": "", "time": "s", "bandwidth": "B/s", "validation": "",
                   "validation_errors": ""})
    back = read(tmp_path, report.format_text(beff))
    assert back.benchmark == "beff" and back.params["b_eff"] == pytest.approx(3.5e8)
    assert [(row["pattern"], row["size"]) for row in back.rows] == [(r["pattern"], r["size"]) for r in rows]
    for row, original in zip(back.rows, rows):
        assert row["bandwidth"] == pytest.approx(original["bandwidth"], rel=1e-5)
        assert row["time"] == pytest.approx(original["time"], rel=1e-5)


def test_fpgacomms_own_omb_text_reads_back_with_full_columns(tmp_path):
    rows = [{"size": size, "latency_avg": 1e-6 * size, "latency_min": 0.9e-6 * size, "latency_max": 1.2e-6 * size,
             "latency_stdev": 1e-8, "latency_p50": 1e-6 * size, "latency_p90": 1.1e-6 * size,
             "latency_p99": 1.2e-6 * size, "validation": "pass"} for size in (1, 2, 4)]
    latency = Result("osu_latency", {"send_kind": "D", "recv_kind": "H", "validate": True, "datatype": "MPI_CHAR"},
                     {}, rows, {key: ("B" if key == "size" else "" if key == "validation" else "s") for key in rows[0]})
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
        read(tmp_path, "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size  Avg Latency(us)\n"
                       "4  1.0\n# Datatype: MPI_INT.\n# Size  Avg Latency(us)\n4  1.0\n")
