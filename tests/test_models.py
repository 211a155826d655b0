"""The performance models: every seed number exactly, and fits that recover
known parameters from synthetic noisy data within their reported error."""

import math

import numpy as np
import pytest

from fpgacomm import _core, fabric
from fpgacomm.models.base import Model
from fpgacomm.models.beff import ChannelModel
from fpgacomm.result import Result

SIZES = np.array([1 << m for m in range(21)], dtype=float)


def within(fit, truth: dict, sigmas: float = 4.0):
    """Every fitted parameter within `sigmas` standard errors of the truth,
    and every standard error a real, small but non-zero number."""
    for name, value in truth.items():
        error = fit.stderr[name]
        assert 0 < error < 0.2 * abs(value), (name, error, value)
        assert abs(fit.params[name] - value) < sigmas * error, (name, fit.params[name], value, error)


# --- b_eff channel model (seed 000, DESIGN.md) ---------------------------------

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
    rows = [{"pattern": "ring", "size": int(s), "pair_bandwidth": float(truth.bandwidth(s)) * (1 + 0.01 * (-1) ** i),
             "validation": "fail" if i == 5 else "pass"} for i, s in enumerate(SIZES)]
    rows[5]["pair_bandwidth"] = 1.0  # a failed size's figure must not pull the fit
    result = Result("beff", {}, {}, rows, {"pattern": "", "size": "B", "pair_bandwidth": "B/s", "validation": ""})
    fit = ChannelModel.fit(result)
    assert len(fit.x) == 20 and 32.0 not in fit.x
    within(fit, {"frequency_hz": 156.25e6, "latency_s": 520e-9})


def test_channel_fit_names_the_columns_it_needs():
    result = Result("osu_latency", {}, {}, [{"size": 1, "latency_avg": 1e-6}], {"size": "B", "latency_avg": "s"})
    with pytest.raises(_core.UsageError, match="needs columns 'size' and 'pair_bandwidth'"):
        ChannelModel.fit(result)


def test_every_model_derives_from_model():
    assert issubclass(ChannelModel, Model)
