"""What users type out of habit, met with what fpgacomm takes: OSU
Micro-Benchmarks' program names (`osu_latency` for `osu latency`), a
misspelt command or test ("did you mean"), and memory kinds given as words to
a test that takes them with --mem."""

from __future__ import annotations

import difflib
import re

OMB_PREFIX = "osu_"
# argparse's message for a word that is none of a subcommand's choices.
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)$")


def omb_program_names(argv: list) -> list:
    """`fpgacomm osu_latency ...` and `fpgacomm osu osu_latency ...` read as
    `fpgacomm osu latency ...`: OMB names its programs osu_TEST. The command
    is the first word that is no option (after --timeout and its value,
    which parse_arguments puts first)."""
    words = list(argv)
    index = _command_index(words)
    if index is None:
        return words
    if words[index].startswith(OMB_PREFIX):
        words[index : index + 1] = ["osu", words[index][len(OMB_PREFIX) :]]
    elif words[index] == "osu" and index + 1 < len(words) and words[index + 1].startswith(OMB_PREFIX):
        words[index + 1] = words[index + 1][len(OMB_PREFIX) :]
    return words


def _command_index(words: list) -> int | None:
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--timeout":
            index += 2
        elif word.startswith("-"):
            index += 1
        else:
            return index
    return None


def did_you_mean(message: str, elsewhere: dict | None = None) -> str:
    """argparse's invalid-choice message with the closest choices, if any
    is close: "invalid choice: 'latncy' ... (did you mean 'latency'?)".
    elsewhere: words that are choices one level down, with what to type
    for them ({"latency": "osu latency"} at the top level)."""
    match = _INVALID_CHOICE.search(message)
    if match is None:
        return message
    elsewhere = elsewhere or {}
    choices = re.findall(r"'([^']*)'", match["choices"])
    close = difflib.get_close_matches(match["word"], choices + list(elsewhere), n=2, cutoff=0.6)
    if not close:
        return message
    close = [elsewhere.get(word, word) for word in close]
    return f"{message} (did you mean {' or '.join(repr(word) for word in close)}?)"


def misplaced_kinds(args, words: list, kinds: tuple) -> str | None:
    """The message for memory kinds given as words to an osu test that takes
    one kind with --mem (collectives, one-sided): None where `words` are
    not all memory kinds or the test takes kinds as words."""
    if getattr(args, "command", None) != "osu" or not words or not hasattr(args, "mem"):
        return None
    if not all(word in kinds for word in words):
        return None
    return (
        f"osu {args.test} takes its buffers' memory kind with --mem, not as words: "
        f"fpgacomm osu {args.test} --mem {words[0]} (one kind for every buffer)"
    )
