"""The one checked boundary through which fpgacomm reads every file it is
given or keeps: Result JSON and CSV, a peer's text, launches.json,
timelines, the calibration cache, platform files.

A file the product reads is a regular file (a FIFO would block the reader
forever, /dev/zero would fill memory), no larger than a bound, readable,
and text in UTF-8 or JSON as the format says. Each way it can fail is a
ResultError naming the path and what is wrong, which the CLI reports as a
usage error (status 2) in one line. Readers then check the shape and type
of every cell they take (result.py, peers.py, launches.py) and raise the
same error. This module sits in runtime/, the lowest floor that reads
files (the calibration cache), so that every layer above can use it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat

#: The largest file read (bytes): above any Result fpgacomm writes, far
#: below the memory of a host. Samples are kept per timed iteration: the
#: issue's `osu latency -m 1:1K -i 150000 --rounds 10` writes 16.5 million
#: of them, about 400 MB of JSON (an interrupted one past 256 MiB was written
#: and then refused), so the bound leaves room for five such runs.
MAX_BYTES = 2 << 30
# Whole numbers in cells are 64-bit, as NumPy and the C++ core hold them.
_INT64 = 1 << 63
# JSON nested deeper than this is no file fpgacomm writes (a Result is 4 deep).
_MAX_DEPTH = 64


class ResultError(ValueError):
    """A file that cannot be read as what it should be: its path and what
    is wrong with it ("runs/a.json: row 3: size 'x' is not a number")."""

    def __init__(self, path, problem: str):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def read_bytes(path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once instead of
        # waiting for one; the file's type is refused just below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        raise ResultError(path, _why(error)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ResultError(path, "a folder, not a file; give the file in it (or its glob)")
        if not stat.S_ISREG(mode):
            raise ResultError(
                path,
                f"a {_kind(mode)}, not a regular file; fpgacomm reads files only " "(copy the output to a file first)",
            )
        chunks, size = [], 0
        while True:  # read to the end, not to st_size: a file may still be growing, /proc's say 0
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > limit:
                raise ResultError(
                    path,
                    f"larger than {limit >> 20} MiB, more than any file fpgacomm writes or "
                    "reads; is it the right file?",
                )
            chunks.append(chunk)
    except OSError as error:
        raise ResultError(path, _why(error)) from None
    finally:
        os.close(fd)


def read_text(path, limit: int = MAX_BYTES) -> str:
    """A regular file's text, which must be UTF-8 without NUL bytes."""
    data = read_bytes(path, limit)
    nul = data.find(b"\0")
    if nul >= 0:
        raise ResultError(path, f"binary data (a NUL byte at offset {nul}), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResultError(
            path,
            f"not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
            "a binary file, or text in another encoding (convert it with iconv)",
        ) from None


def read_json(path, limit: int = MAX_BYTES, what: str | None = None):
    """A regular file's JSON value. NaN and Infinity are accepted as the
    json module writes them (a Result's missing spread); whether a cell may
    hold one is its reader's question. `what` names what the file should
    be ("an fpgacomm Result"), for the message where it is no JSON."""
    text = read_text(path, limit)
    expected = f"not {what}: " if what else ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultError(
            path, f"{expected}not valid JSON: {error.msg} at line {error.lineno} column " f"{error.colno}"
        ) from None
    except RecursionError:
        raise ResultError(path, f"{expected}JSON nested too deeply to be a file fpgacomm writes") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise ResultError(path, f"{expected}{error}") from None
    if _depth(value) > _MAX_DEPTH:
        raise ResultError(
            path, f"{expected}JSON nested deeper than {_MAX_DEPTH} levels, which no file fpgacomm " "writes is"
        )
    return value


def number(
    where: str, value, *, integer: bool = False, minimum: float | None = None, finite: bool = True, none: bool = False
):
    """A cell that must be a number (an int where `integer`), finite unless
    not `finite`, at least `minimum` where given; None passes where `none`.
    Returns the value; a ValueError names the cell (`where`) otherwise, which
    the file's reader raises again as a ResultError with its path."""
    if value is None and none:
        return value
    wanted = "a whole number" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise ValueError(f"{where}: {_shown(value)} is not {wanted}")
    if finite and isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: {value!r} is not a finite number")
    if isinstance(value, int) and not -_INT64 <= value < _INT64:
        raise ValueError(f"{where}: {_shown(value)} is out of the range of a 64-bit integer")
    if minimum is not None and not value >= minimum:
        raise ValueError(f"{where}: {value!r} is below {minimum:g}")
    return value


def of_type(where: str, value, types: tuple, wanted: str):
    """A cell that must be of one of `types` (bool is never an int here);
    a ValueError naming the cell otherwise, as number()."""
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise ValueError(f"{where}: {_shown(value)} is not {wanted}")
    return value


def _shown(value) -> str:
    """A cell as a message shows it: its type and at most 40 characters of it."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _depth(value, level: int = 1) -> int:
    """How deeply a JSON value nests (iteratively: no recursion limit to hit)."""
    deepest, stack = level, [(value, level)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > _MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def _why(error: OSError) -> str:
    """An OSError's message for a reader, with what to do about it."""
    if error.errno == errno.ENOENT:
        return "no such file"
    if error.errno == errno.EACCES:
        return "permission denied: the file is not readable by this user (see ls -l; chmod u+r or copy it)"
    if error.errno == errno.EISDIR:
        return "a folder, not a file; give the file in it (or its glob)"
    return f"cannot read it: {error.strerror or error}"
