"""bench/heldout_noise_floor.py: the largest error a perfect model shows from launch-to-launch noise alone."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import heldout_noise_floor  # noqa: E402

BEFF = ("beff", "ring")
RING = ("gather", "ring")


def test_no_spread_between_launches_leaves_no_error():
    largest = heldout_noise_floor.largest_errors({BEFF: 0.0}, {BEFF: (42, 3)}, 3, np.random.default_rng(0))
    assert np.all(largest == 0.0)


def test_one_point_one_launch_a_side_lies_as_far_as_two_draws_of_the_noise():
    """log(calibrated / measured) ~ N(0, sd * sqrt(2)) =: X, so the median m
    of |expm1(X)| solves P(log(1 - m) <= X <= log(1 + m)) = 1/2."""
    sd = 0.1 * math.sqrt(2)
    cdf = lambda x: 0.5 * (1 + math.erf(x / (sd * math.sqrt(2))))  # noqa: E731
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(math.log1p(middle)) - cdf(math.log1p(-middle)) < 0.5 else (low, middle)
    largest = heldout_noise_floor.largest_errors({BEFF: 0.1}, {BEFF: (1, 1)}, 1, np.random.default_rng(1))
    assert np.median(largest) == pytest.approx(low, rel=0.05)


def test_more_points_and_fewer_launches_raise_the_floor():
    generator = np.random.default_rng(2)
    few = np.median(heldout_noise_floor.largest_errors({RING: 0.1}, {RING: (9, 3)}, 3, generator))
    many = np.median(heldout_noise_floor.largest_errors({RING: 0.1}, {RING: (114, 3)}, 3, generator))
    single = np.median(heldout_noise_floor.largest_errors({RING: 0.1}, {RING: (114, 1)}, 1, generator))
    assert few < many < single
    # 114 points, three launches a side at sd 0.1: the archived campaigns' median floor (27.7 %) is this order
    assert 0.2 < many < 0.35
