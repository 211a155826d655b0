"""The fpgacomm command: parses arguments and calls the library functions.

Errors: a bad parameter or device problem that every rank agrees on is
printed once (by rank 0) and exits with status 2 on every rank; a failure of
one rank alone is printed by that rank, which then aborts the job so that no
rank waits forever. A watchdog (--timeout) ends any run that hangs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import traceback
import warnings

from .. import _core
from ..benchmarks import registry
from ..params import MEMORY_KINDS
from ..results.result import WriteError
from ..runtime import interrupts, launcher
from ..runtime.files import ResultError
from ..runtime.launched import launch_rank
from . import habits, outputs
from .live import SCREEN, on_a_clean_line, silence_stdout
from .options import EXIT_TIMEOUT, EXIT_USAGE, Parser, apply_memory_limit

DEFAULT_TIMEOUT = 1800.0


def build_parser() -> argparse.ArgumentParser:
    from . import (
        beff,
        calibrate,
        compare,
        devbw,
        devices,
        fabric,
        fit,
        gather,
        model,
        osu,
        overhead,
        plot,
        predict,
        suite,
        timeline,
        tune,
        validate,
    )

    parser = Parser(prog="fpgacomm", description="Measure and model communication between accelerators.")
    parser.add_argument("--version", action="version", version=f"fpgacomm {_core.__version__}")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=os.environ.get("FPGACOMM_TIMEOUT", DEFAULT_TIMEOUT),
        help="abort the whole run after this many seconds (0: never; default %(default)s, "
        "or FPGACOMM_TIMEOUT); before or after the command",
    )
    parser.choices_below = {test: f"osu {test}" for test in registry.osu_tests()}
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for module in (
        devices,
        devbw,
        osu,
        beff,
        suite,
        fabric,
        gather,
        fit,
        model,
        overhead,
        plot,
        timeline,
        compare,
        tune,
        calibrate,
        predict,
        validate,
    ):
        module.register(subparsers)
    return parser


def _seconds(text) -> float:
    """--timeout's value (or FPGACOMM_TIMEOUT's): seconds, 0 for none."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds (FPGACOMM_TIMEOUT or --timeout)"
        ) from None
    if not seconds >= 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give seconds above 0, or 0 for no limit (FPGACOMM_TIMEOUT or " "--timeout)"
        )
    return seconds


def start_watchdog(seconds: float) -> None:
    """At `seconds`, asks rank 0 to stop, save what it measured and end
    every rank, as an interrupt does (interrupts.stop); ends any rank
    outright that is still running interrupts.TIME_LIMIT_GRACE seconds
    after its own limit. mpirun then ends the other ranks (or, where a host
    stopped answering, runtime/launcher.py ends mpirun's wait).

    Rank 0's limit alone stops the run; the other ranks wait for its end.
    Each rank counts from its own start, and one stopped by its own limit
    would end the job (interrupts.PEER_WAIT later, as on a signal) while a
    rank 0 that started later was still saving what it measured."""
    if seconds <= 0:
        return
    interrupts.set_time_limit(seconds)

    def expire():
        if launch_rank() == 0:
            SCREEN.hide()
            print(
                on_a_clean_line(
                    f"fpgacomm: rank 0: time limit of {seconds:g} s exceeded (--timeout); stopping, saving what "
                    "was measured"
                ),
                file=sys.stderr,
                flush=True,
            )
            interrupts.stop()
        time.sleep(interrupts.TIME_LIMIT_GRACE)
        print(
            f"fpgacomm: rank {launch_rank()}: still running {interrupts.TIME_LIMIT_GRACE:g} s after its time "
            "limit; aborting",
            file=sys.stderr,
            flush=True,
        )
        launcher.outlive_launcher()  # mpirun may wait for ever for a host that stopped answering
        os._exit(EXIT_TIMEOUT)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def _abort(status: int) -> None:
    """Ends every rank of the job when MPI is running, else this process
    (from the interrupt watcher's thread too, where sys.exit would end the
    thread alone)."""
    if _ranks() > 1:
        from mpi4py import MPI

        sys.stderr.flush()
        launcher.outlive_launcher()
        MPI.COMM_WORLD.Abort(status)
    if threading.current_thread() is not threading.main_thread():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


# One ending per process: the main thread's (an interrupt it took) or the
# interrupt watcher's (the main thread blocked in MPI), whichever comes first.
_ending = threading.Lock()


def parse_arguments(argv=None) -> argparse.Namespace:
    """Parses the command line. A command that takes trailing positional
    words (osu's memory kinds, set as `trailing`) gets them wherever they
    stand, before or after the options, as OSU Micro-Benchmarks takes them."""
    parser = build_parser()
    words = habits.omb_program_names(_timeout_first(sys.argv[1:] if argv is None else list(argv)))
    args, extra = parser.parse_known_args(words)
    trailing = getattr(args, "trailing", None)
    if trailing:
        unknown = [word for word in extra if word.startswith("-")]
        setattr(args, trailing, getattr(args, trailing) + [word for word in extra if not word.startswith("-")])
    else:
        unknown = extra
    if unknown:
        chosen_parser(parser, args).error(
            habits.misplaced_kinds(args, unknown, MEMORY_KINDS) or f"unrecognized arguments: {' '.join(unknown)}"
        )
    return args


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command the arguments chose ("fabric latency"),
    whose usage an error about them shows rather than the top level's."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None))
            if chosen is not None:
                return chosen_parser(chosen, args)
    return parser


def _timeout_first(argv: list) -> list:
    """--timeout moved before the command, so that it may stand anywhere
    (no command has an option of that name)."""
    for index, word in enumerate(argv):
        if word == "--timeout" and index + 1 < len(argv):
            return [word, argv[index + 1]] + argv[:index] + argv[index + 2 :]
        if word.startswith("--timeout="):
            return [word] + argv[:index] + argv[index + 1 :]
    return argv


def _interrupted(stop: KeyboardInterrupt, args) -> None:
    """Ends the run after SIGINT, SIGTERM or SIGHUP: rank 0 saves what was
    measured (the Result the interrupt carries, marked incomplete) where
    --json or --csv asked and says so; then every rank ends, with 128 + the
    signal. Called on the main thread, or on the interrupt watcher's when
    the main thread is blocked in MPI."""
    with _ending:  # the other caller, if any, waits here until the process ends
        _save_and_end(stop, args)


def _save_and_end(stop: KeyboardInterrupt, args) -> None:
    SCREEN.hide()
    what = str(stop) or "interrupted by SIGINT"
    if launch_rank() == 0:
        saved = [path for path in (getattr(args, "json", None), getattr(args, "csv", None)) if path]
        # The Result is not made here: a sweep's (millions of samples merged over rounds) takes most of the
        # second mpirun leaves between SIGTERM and SIGKILL, and a SIGKILL before the fork below loses it all.
        # The writing child makes it (interrupts.defer_result); its incomplete text is known at once.
        incomplete = interrupts.incomplete(stop) or what
        if stop.__dict__.get("writing") and saved:  # interrupted while the finished run's files were written
            print(
                f"fpgacomm: {what}; every size was measured: process {stop.__dict__['writing']} is still writing "
                f"{' and '.join(saved)}, and finishes by itself",
                file=sys.stderr,
                flush=True,
            )
        elif interrupts.has_result(stop) and saved:
            try:
                # In a process of its own: mpirun, interrupted, kills its ranks a second after asking them to end.
                interrupts.outliving(
                    lambda: [stop.result.write(path) for path in saved],
                    slow=lambda: print(
                        f"fpgacomm: {incomplete}; saving it in {' and '.join(saved)} (a process of its own "
                        "finishes the write if the job is ended first)",
                        file=sys.stderr,
                        flush=True,
                    ),
                )
                print(
                    f"fpgacomm: {incomplete}; saved in {' and '.join(saved)}, marked incomplete",
                    file=sys.stderr,
                    flush=True,
                )
            except interrupts.StillWriting as writing:
                print(
                    f"fpgacomm: {incomplete}; {writing} in {' and '.join(saved)}, marked incomplete",
                    file=sys.stderr,
                    flush=True,
                )
            except OSError as error:  # the job must still end on every rank
                print(f"fpgacomm: {incomplete}; could not save it: {error}", file=sys.stderr, flush=True)
        elif not getattr(stop, "reported", False):  # the suite says where its files are, as its last line
            print(f"fpgacomm: {incomplete}", file=sys.stderr, flush=True)
    elif _ranks() > 1:
        # Rank 0 may have been interrupted too (Slurm signals every rank at once): its turn to save first.
        print(
            on_a_clean_line(
                f"fpgacomm: rank {launch_rank()}: {what}; ending every rank within "
                f"{interrupts.PEER_WAIT:g} s (rank 0 saves what was measured first)"
            ),
            file=sys.stderr,
            flush=True,
        )
        time.sleep(interrupts.PEER_WAIT)
    _abort(interrupts.exit_status(stop))


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of the library as one line of the command's, without Python's source location."""
    print(f"fpgacomm: warning: {message}", file=sys.stderr, flush=True)


def _ranks() -> int:
    """The ranks of MPI's world, 1 where MPI is not running."""
    if "mpi4py.MPI" in sys.modules:
        from mpi4py import MPI

        if MPI.Is_initialized() and not MPI.Is_finalized():
            return MPI.COMM_WORLD.Get_size()
    return 1


def main(argv=None) -> int:
    outputs.check_stdout()
    warnings.showwarning = _show_warning
    args = parse_arguments(argv)
    interrupts.install(on_blocked=lambda stop: _interrupted(stop, args))
    start_watchdog(args.timeout)
    try:
        if getattr(args, "thread_level", None) is not None:
            from ..runtime import mpi

            mpi.init(thread_level=args.thread_level)
        apply_memory_limit(args)
        outputs.check(args)
        # Rank 0's output goes through the one writer that keeps rows and the progress line apart.
        with SCREEN.live() if launch_rank() == 0 else contextlib.nullcontext():
            status = args.run(args)
            sys.stdout.flush()  # a full disk shows here, not at exit
        return status
    except _core.Error as error:
        if getattr(error, "agreed", False):
            if launch_rank() == 0:
                print(f"fpgacomm: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"fpgacomm: error on rank {launch_rank()}: {error}", file=sys.stderr)
        _abort(EXIT_USAGE if isinstance(error, _core.UsageError) else 1)
    except ResultError as error:  # a file read is not what it should be: every rank read the same file
        SCREEN.hide()
        if launch_rank() == 0:
            print(f"fpgacomm: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as stop:  # interrupts.Interrupted, or Python's own before install()
        _interrupted(stop, args)
    except WriteError as error:  # a full disk, a folder removed: the text already printed stands
        SCREEN.hide()
        if error.filename == outputs.STDOUT:
            silence_stdout()  # what is still buffered would fail again at exit
        print(f"fpgacomm: error: {error}", file=sys.stderr, flush=True)
        _abort(EXIT_USAGE)
    except BrokenPipeError:
        # The reader left (`fpgacomm ... | head -1`): end quietly, as a Unix tool does.
        silence_stdout()
        return 0
    except Exception as error:  # a bug of ours: say so, with the traceback only on request
        print(f"fpgacomm: internal error on rank {launch_rank()}: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("FPGACOMM_DEBUG"):
            traceback.print_exc()
        _abort(1)
    return 1
