"""b_eff's rules without ranks: loop lengths, sizes, the ring, the message
stamps, the table, and clear errors; and the command under mpirun with the
channel model beside the measurement."""

import os
import subprocess
import sys

import pytest
from fpgacomm import _core, beff, cli
from fpgacomm.models.beff import ChannelModel
from fpgacomm.results.report import format_text
from fpgacomm.results.result import Result


def test_hpcc_loop_length_matches_hand_computed_values():
    # step = floor((65536 - 256) / 7) = 9325; LL = max(256, 65536 - max(m - 11, 0) * step)
    expected = {0: 65536, 11: 65536, 12: 56211, 13: 46886, 17: 9586, 18: 261, 19: 256, 20: 256, 30: 256}
    assert {m: beff.hpcc_loop_length(m) for m in expected} == expected


def test_documented_loop_length_is_hpcc_fpgas_formula():
    # max(u / ceil(L / (2 * 32)), l): 64 B fills both channels once, 128 B twice.
    assert beff.documented_loop_length(0) == 65536
    assert beff.documented_loop_length(6) == 65536
    assert beff.documented_loop_length(7) == 32768
    assert beff.documented_loop_length(16) == 256  # 65536 / 1024 = 64, raised to l
    assert beff.documented_loop_length(10, upper=1000, lower=1, channel_width=16) == 1000 // 32


def test_default_sizes_are_21_powers_of_two():
    assert beff.message_sizes() == [1 << m for m in range(21)]
    assert beff.message_sizes(3, 9, 3) == [8, 64, 512]


@pytest.mark.parametrize(
    "arguments,message",
    [
        ((0, 31, 1), "0 <= --min-size <= -m <= 30, got --min-size 0 -m 31"),
        ((5, 4, 1), "got --min-size 5 -m 4"),
        ((0, 4, 0), "--step-size must be at least 1"),
    ],
)
def test_sizes_out_of_range_are_clear_errors(arguments, message):
    with pytest.raises(_core.UsageError, match=message):
        beff.message_sizes(*arguments)


def test_loop_bounds_are_checked():
    with pytest.raises(_core.UsageError, match="1 <= -l"):
        beff.hpcc_loop_length(3, upper=10, lower=20)


def test_random_ring_is_a_reproducible_permutation():
    for n in (1, 2, 3, 7, 64):
        order = beff.ring(n, "random", seed=11)
        assert sorted(order) == list(range(n))
        assert beff.ring(n, "random", seed=11) == order
    assert beff.ring(64, "random", 1) != beff.ring(64, "random", 2)
    assert beff.ring(64, "random", 1) != list(range(64))
    assert beff.ring(5, "natural") == [0, 1, 2, 3, 4]
    # Fixed across platforms: our own generator, not the C++ library's shuffle.
    assert beff.ring(8, "random", 0) == _core.ring_order(8, True, 0)


def test_every_rank_has_both_neighbours_for_odd_even_and_single_rings():
    assert _core.ring_neighbours([0], 0) == (0, 0)
    assert _core.ring_neighbours([0, 1], 0) == (1, 1)
    order = [2, 0, 1]
    assert [_core.ring_neighbours(order, r) for r in range(3)] == [(2, 1), (0, 2), (1, 0)]
    with pytest.raises(_core.UsageError, match="rank 3 is not in the ring"):
        _core.ring_neighbours(order, 3)


def test_messages_carry_the_seed_fill_and_a_stamp_at_both_ends():
    stamp = _core.testing.beff_stamp(3, 0, 17)
    size = 1 << 10
    body = [_core.testing.beff_message_byte(i, size, stamp) for i in range(size)]
    assert set(body[8:-8]) == {10}  # log2(1024) mod 256
    assert body[:8] != [10] * 8 and body[-8:] != [10] * 8
    # Sender, direction and sequence each change the stamp.
    stamps = {_core.testing.beff_stamp(s, d, q) for s in range(4) for d in (0, 1) for q in range(50)}
    assert len(stamps) == 400
    # A 1-byte message differs from every one of the 255 before it, so a
    # stale or duplicated one is always seen.
    first = [_core.testing.beff_message_byte(0, 1, _core.testing.beff_stamp(2, 1, q)) for q in range(1000)]
    assert all(len(set(first[q : q + 256])) == 256 for q in range(0, 744))


def test_table_is_the_seeds_layout_with_the_b_eff_line():
    rows = [
        {
            "pattern": "ring",
            "size": 1 << m,
            "loop_length": 10,
            "time": 1e-3,
            "bandwidth": 4e4 * (1 << m),
            "pair_bandwidth": 1e4 * (1 << m),
            "validation": "pass",
            "validation_errors": 0,
        }
        for m in range(3)
    ]
    params = {
        "comm_type": "cpu",
        "ranks": 2,
        "loop_rule": "hpcc",
        "b_eff": 9.33333e4,
        "b_eff_reduction": "arithmetic mean of B(m) over the 3 sizes run",
        "rings": {"ring": [1, 0]},
    }
    result = Result("beff", params, {}, rows, {k: "" for k in rows[0]})
    lines = format_text(result).splitlines()
    assert lines[1].split() == ["MSize", "looplength", "time", "[s]", "B/s"]
    assert lines[2].split() == ["1", "10", "1.00000e-03", "4.00000e+04"]
    # HPCC FPGA's printResults: setw(20) columns three spaces apart.
    assert lines[2] == "   ".join(f"{cell:>20}" for cell in ("1", "10", "1.00000e-03", "4.00000e+04"))
    assert lines[-1] == "b_eff = 9.33333e+04 B/s"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["beff", "-m", "40"], "-m <= 30"),
        (["beff", "--loop-rule", "adaptive", "-n", "0"], "repetitions -n must be at least 1"),
        (["beff", "--comm-type", "cpu", "-l", "0"], "1 <= -l"),
    ],
)
def test_cli_errors_name_the_problem(capsys, argv, message):
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_table_shows_the_model_beside_each_row():
    rows = [
        {
            "pattern": "ring",
            "size": 64,
            "loop_length": 10,
            "time": 1e-3,
            "bandwidth": 4e6,
            "pair_bandwidth": 1e6,
            "validation": "pass",
            "validation_errors": 0,
        }
    ]
    params = {
        "comm_type": "cpu",
        "ranks": 2,
        "loop_rule": "hpcc",
        "b_eff": 4e6,
        "b_eff_reduction": "arithmetic mean of B(m) over the 1 sizes run",
        "rings": {"ring": [0, 1]},
    }
    result = beff._with_model(Result("beff", params, {}, rows, {k: "" for k in rows[0]}), "520n")
    lines = format_text(result).splitlines()
    assert lines[1].split() == ["MSize", "looplength", "time", "[s]", "B/s", "model", "B/s"]
    assert float(lines[2].split()[4]) == pytest.approx(2 * 2 * 64 / (6.4e-9 + 520e-9), rel=1e-5)


@pytest.mark.mpi
def test_mpirun_beff_prints_the_520n_model_beside_each_measured_row():
    # -m 8 with short loops (-u 64 -l 4 -n 2) keeps the run to a second.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = subprocess.run(
        [
            "mpirun",
            "-np",
            "2",
            sys.executable,
            "-m",
            "fpgacomm",
            "beff",
            "-m",
            "8",
            "-u",
            "64",
            "-l",
            "4",
            "-o",
            "4",
            "-d",
            "3",
            "-n",
            "2",
            "--model",
            "520n",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["MSize"])
    assert lines[header].split() == ["MSize", "looplength", "time", "[s]", "B/s", "model", "B/s"]
    table = [line.split() for line in lines[header + 1 : header + 10]]
    assert [int(cells[0]) for cells in table] == [1 << m for m in range(9)]
    model = ChannelModel.bittware_520n()
    for cells in table:
        # N R b(L): 2 ranks, 2 exchanges per iteration.
        assert float(cells[4]) == pytest.approx(2 * 2 * float(model.bandwidth(int(cells[0]))), rel=1e-5)
        assert float(cells[3]) > 0
    assert lines[header + 10].startswith("b_eff = ")


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["beff", "--comm-type", "cpu", "--nodes", "50"],
            "--nodes sets the FPGAs of the simulated ring (--comm-type sim)",
        ),
        (["beff", "--comm-type", "sim", "--random-rings", "0"], "--random-rings must be at least 1, got 0"),
        (["beff", "--comm-type", "cpu", "--max-events", "1e6"], "beff: --max-events limits the simulated ring"),
        (["gather", "--fabric", "vcsn", "--root", "3"], "gather: --root applies to real runs"),
    ],
)
def test_options_that_cannot_apply_are_refused_not_ignored(argv, message, capsys):
    assert cli.main(argv) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert message in err and out == ""
