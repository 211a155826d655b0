"""Processes seen through /proc, for the tests that signal or kill ranks."""


def running(pid: int) -> bool:
    """Whether process pid still runs (a zombie has ended; only its exit status waits to be read)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
