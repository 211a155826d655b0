"""The performance models: every number of the papers exactly, and fits that recover
known parameters from synthetic noisy data within their reported error."""

import numpy as np
import pytest
from fpgacomm import _core, fabric
from fpgacomm.models.base import Model
from fpgacomm.models.beff import ChannelModel
from fpgacomm.results.result import Result

SIZES = np.array([1 << m for m in range(21)], dtype=float)


def within(fit, truth: dict, sigmas: float = 4.0):
    """Every fitted parameter within `sigmas` standard errors of the truth,
    and every standard error a real, small but non-zero number."""
    for name, value in truth.items():
        error = fit.stderr[name]
        assert 0 < error < 0.2 * abs(value), (name, error, value)
        assert abs(fit.params[name] - value) < sigmas * error, (name, fit.params[name], value, error)


# --- b_eff channel model (HPCC FPGA, the b_eff paper) ---------------------------------


def test_bittware_520n_gives_7_77_gb_s_per_fpga():
    model = ChannelModel.bittware_520n()
    assert model.fpga_beff() == pytest.approx(7.77e9, abs=0.005e9)
    assert model.fpga_beff() == pytest.approx(2 * model.pair_beff())
    assert model.network_beff(8) == pytest.approx(8 * model.fpga_beff())
    assert model.peak_bandwidth == 2 * 32 * 156.25e6


def test_channel_model_formula_counts_whole_words():
    # ceil(L / 64) cycles at 156.25 MHz plus 520 ns.
    model = ChannelModel(2, 32, 156.25e6, 520e-9)
    assert model.bandwidth(64) == pytest.approx(64 / (6.4e-9 + 520e-9))
    assert model.bandwidth(65) == pytest.approx(65 / (12.8e-9 + 520e-9))
    assert model.time(1024, iterations=3) == pytest.approx(3 * (16 / 156.25e6 + 520e-9))
    np.testing.assert_allclose(model.predict(SIZES), [model.bandwidth(s) for s in SIZES])


def test_the_simulator_compares_with_the_same_model():
    result = fabric.beff_ring(fabric.beff_520n(3), sizes=[1, 64, 4096])
    model = ChannelModel.bittware_520n()
    assert [row["model_pair_bandwidth"] for row in result.rows] == [float(model.bandwidth(s)) for s in (1, 64, 4096)]


def test_channel_fit_recovers_frequency_and_latency_from_noisy_b_of_l():
    truth = ChannelModel(2, 32, 120e6, 800e-9)
    noise = 1 + 0.02 * np.random.default_rng(3).standard_normal(len(SIZES))
    fit = ChannelModel.fit((SIZES, truth.bandwidth(SIZES) * noise))
    within(fit, {"frequency_hz": 120e6, "latency_s": 800e-9})
    assert fit.fixed == ("channels", "width_bytes") and fit.stderr["channels"] == 0
    assert fit.extra["peak_bandwidth"] == pytest.approx(64 * fit.params["frequency_hz"])
    assert abs(fit.extra["peak_bandwidth"] - truth.peak_bandwidth) < 4 * fit.extra["peak_bandwidth_stderr"]
    assert fit.weighted and len(fit.residuals) == len(SIZES)


def test_channel_fit_reads_a_beff_result_and_skips_failed_sizes():
    truth = ChannelModel.bittware_520n()
    rows = [
        {
            "pattern": "ring",
            "size": int(s),
            "pair_bandwidth": float(truth.bandwidth(s)) * (1 + 0.01 * (-1) ** i),
            "validation": "fail" if i == 5 else "pass",
        }
        for i, s in enumerate(SIZES)
    ]
    rows[5]["pair_bandwidth"] = 1.0  # a failed size's figure must not pull the fit
    result = Result("beff", {}, {}, rows, {"pattern": "", "size": "B", "pair_bandwidth": "B/s", "validation": ""})
    fit = ChannelModel.fit(result)
    assert len(fit.x) == 20 and 32.0 not in fit.x
    within(fit, {"frequency_hz": 156.25e6, "latency_s": 520e-9})


def test_channel_fit_names_the_columns_it_needs():
    result = Result("osu_latency", {}, {}, [{"size": 1, "latency_avg": 1e-6}], {"size": "B", "latency_avg": "s"})
    with pytest.raises(_core.UsageError, match="needs columns 'size' and 'pair_bandwidth'"):
        ChannelModel.fit(result)


# --- Hockney and its protocol switches (OMB-FPGA) --------------------------------

from fpgacomm.models.hockney import Hockney, PiecewiseHockney  # noqa: E402

LATENCY_SIZES = np.array([1 << m for m in range(27)], dtype=float)  # 1 B .. 64 MiB


def noisy(values, scale=0.01, seed=0):
    return values * (1 + scale * np.random.default_rng(seed).standard_normal(len(values)))


def test_hockney_fit_recovers_alpha_and_beta():
    truth = Hockney(alpha=2e-6, beta=5e9)
    fit = Hockney.fit((LATENCY_SIZES, noisy(truth.predict(LATENCY_SIZES))))
    within(fit, {"alpha": 2e-6, "beta": 5e9})
    assert fit.weighted and fit.r_squared > 0.99
    assert truth.half_bandwidth_size == pytest.approx(1e4)
    assert truth.bandwidth(truth.half_bandwidth_size) == pytest.approx(2.5e9)


def test_hockney_holds_a_fixed_parameter():
    truth = Hockney(alpha=2e-6, beta=5e9)
    fit = Hockney.fit((LATENCY_SIZES, noisy(truth.predict(LATENCY_SIZES))), fixed={"alpha": 2e-6})
    assert fit.params["alpha"] == 2e-6 and fit.stderr["alpha"] == 0 and fit.fixed == ("alpha",)
    within(fit, {"beta": 5e9})


def test_piecewise_hockney_finds_a_switch_between_4_and_8_mb():
    # OMB-FPGA: the latency dips at 8 MB, a new protocol between 4 and 8 MB.
    eager, rendezvous = Hockney(alpha=3e-6, beta=4e9), Hockney(alpha=-4e-4, beta=8e9)
    truth = np.where(LATENCY_SIZES < 8 << 20, eager.predict(LATENCY_SIZES), rendezvous.predict(LATENCY_SIZES))
    fit = PiecewiseHockney.fit((LATENCY_SIZES, noisy(truth, 0.005)))
    assert fit.extra["ranges"] == 2
    assert fit.params["switch_1"] == 8 << 20
    assert fit.extra["switch_1_between"] == "4194304 and 8388608 B"
    switch = next(row for row in fit.to_result().rows if row["parameter"] == "switch_1")
    assert switch == {
        "parameter": "switch_1",
        "value": 8388608.0,
        "stderr": None,
        "unit": "B",
        "note": "searched: the first size of range 2, chosen among the measured sizes by the criterion; "
        "switch_1_between brackets it",
    }
    within(fit, {"alpha_1": 3e-6, "beta_1": 4e9, "beta_2": 8e9})
    predicted = fit.model.predict(np.array([4 << 20, 8 << 20]))
    assert predicted == pytest.approx([eager.predict(4 << 20), rendezvous.predict(8 << 20)], rel=0.02)


def test_piecewise_hockney_keeps_one_range_without_a_switch():
    truth = Hockney(alpha=2e-6, beta=5e9)
    fit = PiecewiseHockney.fit((LATENCY_SIZES, noisy(truth.predict(LATENCY_SIZES))))
    assert fit.extra["ranges"] == 1 and fit.model.parameters == ("alpha", "beta")
    within(fit, {"alpha": 2e-6, "beta": 5e9})


def test_hockney_reads_osu_latency_and_names_missing_columns():
    rows = [{"size": int(s), "latency_avg": float(1e-6 + s / 1e9)} for s in LATENCY_SIZES[:10]]
    fit = Hockney.fit(Result("osu_latency", {}, {}, rows, {"size": "B", "latency_avg": "s"}))
    assert fit.params["alpha"] == pytest.approx(1e-6) and fit.params["beta"] == pytest.approx(1e9)
    bw = Result("osu_bw", {}, {}, [{"size": 1, "bandwidth": 1.0}], {"size": "B", "bandwidth": "B/s"})
    with pytest.raises(_core.UsageError, match="needs columns 'size' and one of latency_avg, latency, time"):
        Hockney.fit(bw)


# --- packet efficiency (the FSHMEM paper) ------------------------------------------------

from fpgacomm.models.packet import PacketModel, fshmem_peaks  # noqa: E402


def test_packet_model_reproduces_fshmem_peaks_and_infers_header_and_line_rate():
    fit = PacketModel.fit(fshmem_peaks())
    # Exactly determined below the ceiling: 2621 (128 + h) / 128 = 3419 (256 + h) / 256.
    header = (2 * 2621 * 128 - 3419 * 256) / (3419 - 2 * 2621)
    assert fit.params["header"] == pytest.approx(header, rel=1e-9)
    assert fit.params["line_rate"] == pytest.approx(2621e6 * (128 + header) / 128, rel=1e-9)
    assert fit.params["ceiling"] == pytest.approx(3813e6, rel=1e-12)
    np.testing.assert_allclose(fit.model.predict([128, 256, 512, 1024]), [2621e6, 3419e6, 3813e6, 3813e6], rtol=1e-9)
    assert np.max(np.abs(fit.residuals)) < 1e-3  # B/s
    assert fit.model.half_bandwidth_size(512, latency=0.35e-6) == pytest.approx(0.35e-6 * 3813e6)
    assert fit.model.saturation_size(512, 0.95, latency=0.35e-6) == pytest.approx(19 * 0.35e-6 * 3813e6)


def test_packet_fit_recovers_known_parameters_from_noisy_peaks():
    truth = PacketModel(header=64, line_rate=5e9, ceiling=4e9)
    packets = np.array([16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048], dtype=float)
    fit = PacketModel.fit((packets, noisy(truth.predict(packets), 0.005, seed=4)))
    within(fit, {"header": 64, "line_rate": 5e9, "ceiling": 4e9})


def test_packet_fit_needs_two_sizes_below_the_ceiling():
    with pytest.raises(_core.UsageError, match="two packet sizes whose peak stays under the ceiling"):
        PacketModel.fit((np.array([128.0, 512, 1024, 2048]), np.array([2e9, 4e9, 4e9, 4e9])))


# --- CusComNet (the CusComNet paper) --------------------------------------------------------

from fpgacomm.models.cuscomnet import CusComNet, torus_shape  # noqa: E402


def test_cuscomnet_eq1_is_1_157_us_for_a_64_byte_packet_between_neighbours():
    model = CusComNet.from_paper()
    # The CusComNet paper: T = (2 - 1) x (0 + 0.57 + 512/1565) + 2 x 0.13 = 1.16 us.
    assert model.time(2) == pytest.approx(0.57e-6 + 512 / 1565e6 + 0.26e-6, rel=1e-12)
    assert round(float(model.time(2)) * 1e6, 3) == 1.157
    assert CusComNet.from_paper(packet_bytes=0).time(2) == pytest.approx(0.83e-6)  # the measured empty packet
    np.testing.assert_allclose(model.predict(np.array([1, 2])), model.time(np.array([2, 3])))


def test_cuscomnet_queue_is_eq_2_to_6_and_eq_7_adds_it_per_hub():
    model = CusComNet.from_paper()
    rate = 2e6
    q = model.queue(rate)
    dq = 1565e6 / 512
    rho = (rate / 4) / dq
    assert q["enqueue"] == rate / 4 and q["dequeue"] == pytest.approx(dq)
    assert q["rho"] == pytest.approx(rho) and q["queued"] == pytest.approx(rho**2 / (1 - rho))
    assert q["wait"] == pytest.approx(rho / (dq - rate / 4))
    assert q["hub_time"] == pytest.approx(q["wait"] + 512 / 1565e6)
    assert model.average_time(3, rate) == pytest.approx(2 * (0.57e-6 + q["hub_time"]) + 0.26e-6)
    assert model.average_time(3, 1e-9) == pytest.approx(float(model.time(3)))
    with pytest.raises(_core.UsageError, match="unstable"):
        model.queue(4 * dq)


def test_cuscomnet_longest_paths_of_2d_tori_up_to_1024_nodes():
    projection = CusComNet.from_paper().torus_projection()
    rows = {row["nodes"]: row for row in projection.rows}
    assert sorted(rows) == [4, 16, 64, 256, 1024]
    big = rows[1024]
    assert (big["rows"], big["cols"], big["links"]) == (32, 32, 33)
    assert big["latency"] == pytest.approx(32 * 0.57e-6 + 0.26e-6)
    assert big["packet_time"] == pytest.approx(32 * (0.57e-6 + 512 / 1565e6) + 0.26e-6)
    assert big["packet_cycles"] == pytest.approx(big["packet_time"] * 100e6)
    assert torus_shape(32) == (4, 8) and torus_shape(7) == (1, 7)


def test_cuscomnet_fit_recovers_tr_and_ta_from_noisy_latencies():
    truth = CusComNet.from_paper()
    hops = np.repeat(np.arange(1, 9), 3).astype(float)
    fit = CusComNet.fit((hops, noisy(truth.predict(hops), 0.01, seed=5)), packet_bytes=64)
    within(fit, {"routing_latency": 0.57e-6, "app_latency": 0.13e-6})


def test_cuscomnet_fit_of_the_store_and_forward_simulator_gives_the_cuscomnet_papers_parameters():
    runs = [fabric.latency(fabric.cuscomnet_torus(forwarding="store_and_forward"), hops=h, size=64) for h in (1, 2, 3)]
    from fpgacomm.models.fit import combine

    fit = CusComNet.fit(combine(runs))
    assert fit.params["routing_latency"] == pytest.approx(0.57e-6, rel=2e-3)
    assert fit.params["app_latency"] == pytest.approx(0.13e-6, rel=5e-3)


# --- LogGP -----------------------------------------------------------------------

from fpgacomm.models.loggp import LogGP  # noqa: E402


def loggp_result(truth, seed=6, scale=0.01):
    sizes = LATENCY_SIZES[:21]
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        jitter = 1 + scale * rng.standard_normal(4)
        rows.append(
            {
                "size": int(n),
                "latency_avg": float(truth.predict(n) * jitter[0]),
                "bandwidth": float(truth.bandwidth(n) * jitter[1]),
                "send_overhead": truth.o_s * jitter[2],
                "recv_overhead": truth.o_r * jitter[3],
            }
        )
    return Result(
        "osu_latency+osu_bw+osu_overhead",
        {},
        {},
        rows,
        {"size": "B", "latency_avg": "s", "bandwidth": "B/s", "send_overhead": "s", "recv_overhead": "s"},
    )


def test_loggp_fit_separates_latency_from_the_measured_overheads():
    truth = LogGP(L=1.5e-6, o_s=0.4e-6, o_r=0.6e-6, g=0.9e-6, G=1 / 8e9)
    fit = LogGP.fit(loggp_result(truth))
    within(fit, {"L": 1.5e-6, "o_s": 0.4e-6, "o_r": 0.6e-6, "g": 0.9e-6, "G": 1 / 8e9})
    assert truth.predict(1) == pytest.approx(2.5e-6)
    assert truth.bandwidth(1 << 20) == pytest.approx((1 << 20) / (0.9e-6 + ((1 << 20) - 1) / 8e9))


def test_loggp_names_the_missing_overhead_columns():
    rows = [{"size": 1, "latency_avg": 1e-6, "bandwidth": 1e6}]
    result = Result("osu_latency+osu_bw", {}, {}, rows, {"size": "B", "latency_avg": "s", "bandwidth": "B/s"})
    with pytest.raises(_core.UsageError, match="needs columns send_overhead, recv_overhead .*fpgacomm overhead"):
        LogGP.fit(result)


# --- the interface ---------------------------------------------------------------


def test_against_gives_the_relative_error_per_point():
    model = Hockney(alpha=1e-6, beta=1e9)
    compared = model.against((np.array([0.0, 1000.0]), np.array([1e-6, 1e-6])))
    assert [row["relative_error"] for row in compared.rows] == pytest.approx([0.0, 1.0])


def test_fit_refuses_unknown_fixed_parameters_and_too_few_points():
    with pytest.raises(_core.UsageError, match="cannot fix \\['gamma'\\]"):
        Hockney.fit((LATENCY_SIZES, LATENCY_SIZES), fixed={"gamma": 1})
    with pytest.raises(_core.UsageError, match="need at least 3 points, got 2"):
        Hockney.fit((np.array([1.0, 2.0]), np.array([1.0, 2.0])))


@pytest.mark.parametrize("cls", [ChannelModel, Hockney, PiecewiseHockney, PacketModel, CusComNet, LogGP])
def test_every_model_class_derives_from_model(cls):
    assert issubclass(cls, Model)


def shaped_models():
    piecewise = PiecewiseHockney([Hockney(alpha=1e-6, beta=1e9), Hockney(alpha=5e-6, beta=4e9)], [4096])
    return [
        ChannelModel.bittware_520n(),
        Hockney(alpha=1e-6, beta=1e9),
        piecewise,
        PacketModel(header=64, line_rate=5e9, ceiling=4e9),
        CusComNet.from_paper(),
        LogGP(L=1e-6, o_s=2e-7, o_r=3e-7, g=4e-7, G=1e-10),
    ]


@pytest.mark.parametrize("model", shaped_models(), ids=lambda m: type(m).__name__)
def test_predict_is_vectorised_over_arrays_of_any_shape(model):
    # The plots overlay models on measured columns: one call per curve.
    x = np.array([[1.0, 64.0, 4096.0], [8192.0, 1e6, 3.0]])
    predicted = np.asarray(model.predict(x))
    assert predicted.shape == x.shape
    np.testing.assert_allclose(predicted, [[float(model.predict(v)) for v in row] for row in x], rtol=1e-12)
