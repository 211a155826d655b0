"""What users type out of habit from OSU Micro-Benchmarks and other tools:
program names, misspelt commands, kinds given to a test that takes --mem,
device options on a run that opens no device."""

import os
import subprocess
import sys

import pytest
from loaded import without_load_warning

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def fpgacomm(*args, ranks=None):
    command = [sys.executable, "-m", "fpgacomm", *args]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=ENV)


def error_line(run) -> str:
    """The one error line a usage error prints after argparse's usage."""
    return [line for line in run.stderr.splitlines() if ": error: " in line][-1]


def test_a_misspelt_test_is_met_with_the_closest_names():
    run = fpgacomm("osu", "latncy")
    assert run.returncode == 2
    assert error_line(run).endswith("(did you mean 'latency' or 'put_latency'?)")


def test_a_test_name_given_as_a_command_points_at_osu():
    run = fpgacomm("latncy")
    assert run.returncode == 2
    assert "(did you mean 'osu latency'" in error_line(run)


def test_a_word_close_to_nothing_gets_no_guess():
    run = fpgacomm("osu", "qqqqqq")
    assert run.returncode == 2 and "did you mean" not in run.stderr


@pytest.mark.mpi
def test_omb_program_names_run_as_the_osu_tests():
    for words in (["osu_latency"], ["osu", "osu_latency"]):
        run = fpgacomm(*words, "-m", "1:4", "-i", "20", "-x", "2", ranks=2)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("# OSU MPI Latency Test")
        sizes = [int(line.split()[0]) for line in run.stdout.splitlines() if line and not line.startswith("#")]
        assert sizes == [1, 2, 4]


def test_a_misspelt_omb_program_name_is_met_with_the_test():
    run = fpgacomm("osu_latncy")
    assert run.returncode == 2
    assert "invalid choice: 'latncy'" in error_line(run) and "did you mean 'latency'" in error_line(run)


def test_kinds_given_to_a_collective_point_at_mem():
    run = fpgacomm("osu", "allreduce", "D", "D")
    assert run.returncode == 2
    assert error_line(run) == (
        "fpgacomm osu: error: osu allreduce takes its buffers' memory kind with --mem, not as "
        "words: fpgacomm osu allreduce --mem D (one kind for every buffer)"
    )


def test_other_stray_words_stay_unrecognized():
    run = fpgacomm("osu", "allreduce", "D", "banana")
    assert run.returncode == 2 and error_line(run).endswith("unrecognized arguments: D banana")


@pytest.mark.mpi
def test_device_options_on_host_buffers_say_they_change_nothing():
    run = fpgacomm("osu", "latency", "H", "H", "-m", "8:8", "-i", "10", "--device-type", "gpu", "--bank", "1", ranks=2)
    assert run.returncode == 0, run.stderr
    warnings = [line for line in without_load_warning(run.stderr).splitlines() if line.startswith("fpgacomm: warning")]
    assert warnings == [
        "fpgacomm: warning: this run opens no device (its buffers are host memory, or it moves no "
        "data), so --device-type gpu, --bank 1 changes nothing; give a device kind (D, B or P) to use "
        "a device"
    ]


@pytest.mark.mpi
def test_host_buffers_without_device_options_warn_of_nothing():
    run = fpgacomm("osu", "latency", "-m", "8:8", "-i", "10", ranks=2)
    assert run.returncode == 0, run.stderr
    assert "opens no device" not in run.stderr


def test_every_help_text_prints():
    """argparse formats each option's and subcommand's help with %: a bare
    "95 % interval" in one of them broke `fpgacomm --help` once."""
    import contextlib
    import io

    import pytest
    from fpgacomm.cli.command import build_parser

    parser = build_parser()
    commands = [[]]
    for action in parser._subparsers._group_actions:
        for name, sub in action.choices.items():
            commands.append([name])
            commands += [
                [name, test]
                for group in (sub._subparsers._group_actions if sub._subparsers else [])
                for test in group.choices
            ]
    assert len(commands) > 30
    for words in commands:
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit) as ended:
            build_parser().parse_args([*words, "--help"])
        assert ended.value.code == 0 and text.getvalue().startswith("usage: fpgacomm"), words
