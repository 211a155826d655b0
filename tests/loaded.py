"""The one line fpgacomm adds to stderr on a loaded machine
(runtime.environment.loaded_warning): tests that read stderr or a screen
take it out, since whether it appears depends on the machine's load, not on
what is tested (tests/test_rounds.py tests the line itself)."""

PREFIX = "fpgacomm: warning: load average "


def without_load_warning(stderr: str) -> str:
    """stderr less the load warning line."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(PREFIX))
