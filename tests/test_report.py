import pytest
from fpgacomm.results.report import format_pt2pt, format_table, format_text, formatter, summary_line
from fpgacomm.results.result import Result
from fpgacomm.units import human_bandwidth, human_bytes, human_rate, human_seconds, with_unit

ENV = {"fpgacomm_version": "0.1.0", "hosts": ["n01"]}
LAT_STATS = ("avg", "min", "max", "stdev", "p50", "p90", "p99")
BW_STATS = ("min", "max", "stdev", "p50", "p90", "p99")


def latency_row(size, avg, validation=None):
    row = {"size": size}
    # min/max/... get distinct values so a column mix-up shows in the text
    for i, stat in enumerate(LAT_STATS):
        row[f"latency_{stat}"] = avg * (1 + i / 10)
    row.update(iterations=10000, validation=validation)
    return row


def latency_result(send="H", recv="H", validate=False, benchmark="osu_latency", rows=None):
    rows = rows or [latency_row(1, 3.34e-6), latency_row(8, 1.5e-6), latency_row(4 << 20, 1.23e-3)]
    units = {k: ("B" if k == "size" else "" if k in ("iterations", "validation") else "s") for k in rows[0]}
    params = {"test": "latency", "send_kind": send, "recv_kind": recv, "validate": validate, "window": None}
    return Result(benchmark, params, ENV, rows, units)


def bw_row(size, bw, validation=None, rate=None):
    row = {"size": size, "bandwidth": bw}
    for i, stat in enumerate(BW_STATS):
        row[f"bandwidth_{stat}"] = bw * (1 - i / 100)
    if rate is not None:
        row["message_rate"] = rate
    row.update(iterations=100, validation=validation)
    return row


def bw_result(benchmark="osu_bw", send="D", recv="D", validate=False, rows=None, **params):
    rows = rows or [bw_row(1, 1.5e6), bw_row(1 << 20, 12.3456e9), bw_row(4 << 20, 11e9)]
    special = {"size": "B", "iterations": "", "validation": "", "message_rate": "1/s"}
    units = {k: special.get(k, "B/s") for k in rows[0]}
    params = {"test": benchmark[4:], "send_kind": send, "recv_kind": recv, "validate": validate, "window": 64, **params}
    return Result(benchmark, params, ENV, rows, units)


def test_latency_host_exact_text():
    assert format_text(latency_result()) == "\n".join(
        [
            "# OSU MPI Latency Test v0.1.0 (fpgacomm)",
            "# Datatype: MPI_CHAR.",
            "# Size" + " " * 4 + " " * 5 + "Avg Latency(us)",  # %-10s then %20s
            "1" + " " * 9 + " " * 16 + "3.34",  # %-10d then %20.2f
            "8" + " " * 9 + " " * 16 + "1.50",
            "4194304" + " " * 3 + " " * 13 + "1230.00",
        ]
    )


def test_row_formatting_widths():
    line = format_text(latency_result()).splitlines()[4]
    assert line == "8".ljust(10) + "1.50".rjust(20)
    header = format_text(latency_result()).splitlines()[2]
    assert header == "# Size".ljust(10) + "Avg Latency(us)".rjust(20)


def test_pinned_host_is_still_host():
    text = format_text(latency_result("H!", "H"))
    assert text.splitlines()[0] == "# OSU MPI Latency Test v0.1.0 (fpgacomm)"
    assert "Buffer" not in text


def test_device_buffer_line():
    lines = format_text(latency_result("D", "H")).splitlines()
    assert lines[0] == "# OSU MPI-OpenCL Latency Test v0.1.0 (fpgacomm)"
    assert lines[1] == "# Send Buffer on DEVICE (D) and Receive Buffer on HOST (H)"
    assert lines[2] == "# Datatype: MPI_CHAR."
    lines = format_text(latency_result("H!", "B")).splitlines()
    assert lines[1] == "# Send Buffer on PINNED HOST (H!) and Receive Buffer on HBM (B)"
    lines = format_text(latency_result("P", "D")).splitlines()
    assert lines[1] == "# Send Buffer on PLRAM (P) and Receive Buffer on DEVICE (D)"


def test_unknown_kind_rejected():
    with pytest.raises(ValueError, match="'M'"):
        format_text(latency_result("M", "H"))


def test_validation_column():
    rows = [latency_row(1, 3.34e-6, "pass"), latency_row(2, 3.5e-6, "fail")]
    lines = format_text(latency_result(validate=True, rows=rows)).splitlines()
    assert lines[2] == "# Size" + " " * 4 + "Avg Latency(us)".rjust(20) + "Validation".rjust(20)
    assert lines[3] == "1".ljust(10) + "3.34".rjust(20) + "Pass".rjust(20)
    assert lines[4] == "2".ljust(10) + "3.50".rjust(20) + "Fail".rjust(20)


def test_latency_full_columns_after_validation():
    rows = [latency_row(8, 1e-6, "pass")]
    lines = format_text(latency_result(validate=True, rows=rows), full=True).splitlines()
    headers = [
        "Avg Latency(us)",
        "Validation",
        "Min Latency(us)",
        "Max Latency(us)",
        "Stdev(us)",
        "P50 Tail Lat(us)",
        "P90 Tail Lat(us)",
        "P99 Tail Lat(us)",
    ]
    assert lines[2] == "# Size    " + "".join(h.rjust(20) for h in headers)
    # avg 1.00, then min..p99 = 1.1 .. 1.6 us
    values = ["1.00", "Pass", "1.10", "1.20", "1.30", "1.40", "1.50", "1.60"]
    assert lines[3] == "8         " + "".join(v.rjust(20) for v in values)


def test_bw_exact_text():
    lines = format_text(bw_result()).splitlines()
    assert lines == [
        "# OSU MPI-OpenCL Bandwidth Test v0.1.0 (fpgacomm)",
        "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)",
        "# Datatype: MPI_CHAR.",
        "# Size    " + "    Bandwidth (MB/s)",
        "1         " + "                1.50",
        "1048576   " + "            12345.60",
        "4194304   " + "            11000.00",
    ]


def test_bibw_title_and_full_columns():
    lines = format_text(bw_result("osu_bibw", "H", "H"), full=True).splitlines()
    assert lines[0] == "# OSU MPI Bi-Directional Bandwidth Test v0.1.0 (fpgacomm)"
    headers = [
        "Bandwidth (MB/s)",
        "Min BW(MB/s)",
        "Max BW(MB/s)",
        "Stdev(MB/s)",
        "P50 Tail BW(MB/s)",
        "P90 Tail BW(MB/s)",
        "P99 Tail BW(MB/s)",
    ]
    assert lines[2] == "# Size    " + "".join(h.rjust(20) for h in headers)
    # bandwidth_min..p99 = 1.5 MB/s * (1 - i/100), i = 0..5
    values = ["1.50", "1.50", "1.48", "1.47", "1.45", "1.44", "1.43"]
    assert lines[3] == "1         " + "".join(v.rjust(20) for v in values)


def test_mbw_mr_text():
    rows = [bw_row(1, 4e6, rate=4e6), bw_row(8, 16e6, rate=2e6)]
    r = bw_result("osu_mbw_mr", "H", "H", rows=rows, pairs=4)
    assert format_text(r) == "\n".join(
        [
            "# OSU MPI Multiple Bandwidth / Message Rate Test v0.1.0 (fpgacomm)",
            "# [ pairs: 4 ] [ window size: 64 ]",
            "# Datatype: MPI_CHAR.",
            "# Size    " + "                MB/s" + "          Messages/s",
            "1         " + "                4.00" + "          4000000.00",
            "8         " + "               16.00" + "          2000000.00",
        ]
    )


def test_multi_lat_title():
    r = latency_result(benchmark="osu_multi_lat")
    assert format_text(r).splitlines()[0] == "# OSU MPI Multi Latency Test v0.1.0 (fpgacomm)"


def test_missing_value_is_one_token():
    rows = [latency_row(8, 1e-6)]
    rows[0]["latency_p99"] = None
    line = format_text(latency_result(rows=rows), full=True).splitlines()[-1]
    assert line.split()[-1] == "N/A" and len(line.split()) == 8


def test_benchmark_without_a_format_prints_a_plain_table():
    r = Result(
        "fabric_bw",
        {"fabric": "vcsn"},
        ENV,
        [{"size": 64, "bandwidth": 1.244e10, "note": None}],
        {"size": "B", "bandwidth": "B/s", "note": ""},
    )
    lines = format_text(r).splitlines()
    assert lines[0] == "# fpgacomm fabric_bw: vcsn (simulated)"
    assert lines[1].split() == ["size", "bandwidth", "note"]
    assert lines[2].split() == ["64", "B", "12.4", "GB/s", "N/A"]
    assert formatter("fabric_bw") is format_table
    assert all(formatter(name) is format_pt2pt for name in ("osu_latency", "osu_bw", "osu_bibw", "osu_multi_lat"))


def test_missing_param_or_column_named():
    r = latency_result()
    del r.params["send_kind"]
    with pytest.raises(ValueError, match="send_kind"):
        format_text(r)
    with pytest.raises(ValueError, match="bandwidth"):
        format_text(Result("osu_bw", {"send_kind": "H", "recv_kind": "H"}, ENV, [{"size": 1}], {"size": "B"}))


def test_human_bytes():
    assert human_bytes(512) == "512 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(4 << 20) == "4 MiB"
    assert human_bytes(1) == "1 B"
    assert human_bytes(1 << 30) == "1 GiB"
    assert human_bytes(1000) == "1000 B"


def test_human_seconds():
    assert human_seconds(12.34e-6) == "12.3 us"
    assert human_seconds(1.234e-3) == "1.23 ms"
    assert human_seconds(2) == "2.00 s"
    assert human_seconds(0.9997) == "1.00 s"
    assert human_seconds(450e-9) == "450 ns"
    assert human_seconds(float("nan")) == "n/a"


def test_human_bandwidth_and_rate():
    assert human_bandwidth(12.3456e9) == "12.3 GB/s"
    assert human_bandwidth(999.9e6) == "1.00 GB/s"
    assert human_rate(3.2e6) == "3.20 M msg/s"


def test_summary_latency():
    r = latency_result("D", "D")
    assert summary_line(r) == "osu_latency D D: 1 B .. 4 MiB, 8 B 1.50 us, 4 MiB 1.23 ms"


def test_summary_latency_without_8_bytes_uses_smallest():
    r = latency_result(rows=[latency_row(64, 2e-6), latency_row(16, 1e-6)])
    assert summary_line(r) == "osu_latency H H: 16 B .. 64 B, 16 B 1.00 us, 64 B 2.00 us"


def test_summary_bandwidth_peak():
    assert summary_line(bw_result("osu_bw", "D", "H")) == "osu_bw D H: 1 B .. 4 MiB, peak 12.3 GB/s at 1 MiB"


def test_summary_mbw_mr_has_message_rate():
    rows = [bw_row(1, 4e6, rate=4e6), bw_row(8, 16e6, rate=2e6)]
    line = summary_line(bw_result("osu_mbw_mr", "H", "H", rows=rows, pairs=4))
    assert line == "osu_mbw_mr H H: 1 B .. 8 B, peak 16.0 MB/s at 8 B, peak 4.00 M msg/s at 1 B"


def test_summary_validation_failed():
    rows = [bw_row(1, 1e6, "pass"), bw_row(2, 2e6, "fail"), bw_row(4, 3e6, "fail")]
    line = summary_line(bw_result(validate=True, rows=rows))
    assert "VALIDATION FAILED" in line
    assert line.endswith("VALIDATION FAILED at 2 of 3 sizes (first 2 B)")
    rows = [bw_row(1, 1e6, "pass")]
    assert "VALIDATION" not in summary_line(bw_result(validate=True, rows=rows))


def test_summary_no_rows():
    r = Result("osu_bw", {"send_kind": "H", "recv_kind": "D"}, ENV, [], {"size": "B"})
    assert summary_line(r) == "osu_bw H D: no rows"


def test_values_carry_their_units():
    cases = [
        (8.6e-7, "s", "860 ns"),
        (0, "s", "0 s"),
        (1e-12, "s", "1e-12 s"),
        (1.2e10, "B/s", "12.0 GB/s"),
        (17429.6, "B", "17.02 KiB"),
        (64, "B", "64 B"),
        (3.2e6, "msg/s", "3.20 M msg/s"),
        (1e5, "1/s", "100000 1/s"),
        (32000, "", "32000"),
        (None, "s", "N/A"),
        (-1e-6, "s", "-1.00 us"),
        (4.76837e-07, "B/s", "4.77e-07 B/s"),
    ]
    assert [with_unit(value, unit) for value, unit, _ in cases] == [text for *_, text in cases]


def test_plain_table_columns_never_run_together():
    from fpgacomm.results.report import format_table

    result = Result(
        "osu_overhead",
        {},
        {},
        [{"size": 1, "send_overhead_min": 1.5e-07, "recv_overhead_p99": 2e-07}],
        {"size": "B", "send_overhead_min": "s", "recv_overhead_p99": "s"},
    )
    header, row = format_table(result).splitlines()[1:]
    assert header.split() == ["size", "send_overhead_min", "recv_overhead_p99"]
    assert row.split() == ["1", "B", "150", "ns", "200", "ns"]
    assert len(header) == len(row)


def test_model_figures_carry_four_digits_and_ratios_are_percentages():
    from fpgacomm.units import MODEL_DIGITS

    assert (
        human_bandwidth(12.02e9, MODEL_DIGITS) == "12.02 GB/s"
        and human_bandwidth(12.44e9, MODEL_DIGITS) == "12.44 GB/s"
    )
    assert human_seconds(1.157e-6, MODEL_DIGITS) == "1.157 us" and human_seconds(0.99996, MODEL_DIGITS) == "1.000 s"
    assert with_unit(-0.0236982, "fraction") == "-2.37 %" and with_unit(0.5, "fraction") == "50.0 %"
    assert with_unit(6.83586e-11, "s/B") == "68.4 ps/B (14.6 GB/s)"


def test_an_emulated_devices_text_says_so_in_its_header():
    emulated = {
        **ENV,
        "opencl": {"device": "Intel(R) FPGA Emulation Device", "emulated": True},
        "rank_devices": ["Intel(R) FPGA Emulation Device on 'Intel(R) FPGA Emulation Platform' (emulated)"] * 2,
    }
    for result in (latency_result("D", "D"), bw_result("osu_bw", "D", "D")):
        assert "Emulated" not in format_text(result)
        result.env = emulated
        header = [line for line in format_text(result).splitlines() if line.startswith("#")]
        assert header[2] == (
            "# Emulated device: Intel(R) FPGA Emulation Device; software emulation on the host's "
            "cores, so these timings are the emulator's, not an FPGA's performance"
        )


def test_every_summary_line_has_a_figure():
    gather = Result(
        "gather",
        {"schedule": "tree"},
        ENV,
        [{"size": 65536, "time": 2e-3, "throughput": 1.2e9}, {"size": 1 << 20, "time": 9e-3, "throughput": 2.5e9}],
        {"size": "B", "time": "s", "throughput": "B/s"},
    )
    assert summary_line(gather) == (
        "gather: 64 KiB .. 1 MiB, time 64 KiB 2.00 ms, time 1 MiB 9.00 ms, " "peak throughput 2.50 GB/s at 1 MiB"
    )
    latency = Result(
        "fabric_latency",
        {"fabric": "vcsn"},
        {"simulated": True},
        [{"size": 0, "hops": 1, "latency": 1.157e-6}],
        {"size": "B", "hops": "", "latency": "s"},
    )
    assert summary_line(latency) == "fabric_latency vcsn (simulated): 0 B, latency 0 B 1.157 us"


def test_full_collective_text_says_over_what_each_column_is_taken():
    rows = [latency_row(1, 3e-6)]
    units = {key: ("B" if key == "size" else "" if key in ("iterations", "validation") else "s") for key in rows[0]}
    result = Result("osu_allreduce", {"send_kind": "H", "recv_kind": "H", "validate": False}, ENV, rows, units)
    for key in ("algbw", "busbw", "staging_share"):
        result.rows[0][key] = 1.0
    note = (
        "# Min and Max Latency: the fastest and the slowest rank's average, as OSU Micro-Benchmarks; "
        "Stdev and P50-P99: over the iterations of the ranks' average time"
    )
    assert note in format_text(result, full=True).splitlines()
    assert note not in format_text(result)
