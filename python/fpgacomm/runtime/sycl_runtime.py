"""Intel's SYCL runtime, checked before fpgacomm._sycl loads it.

A damaged runtime cannot be caught once it is loading: a truncated libsycl
ends the process with a bus error inside the dynamic loader, before any
Python code can answer, and a missing Unified Runtime adapter leaves SYCL
without devices, so a run would blame the device. So before the module is
imported, every library of the runtime's folder is checked against the
SHA-256 manifest (SHA256SUMS) that scripts/sycl_runtime.sh wrote when it
cached the runtime; only a runtime that matches is loaded, and it is loaded
from the folder that was checked.

The folder: $FPGACOMM_SYCL_ROOT, else $FPGACOMM_CACHE/intel-sycl-RELEASE
(as the set-up and the build look for it), else the folder the module was
built against (sycl_runtime_root.txt beside it, written by the build).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
BUILT_ROOT = PACKAGE / "sycl_runtime_root.txt"  # written by CMakeLists.txt next to the module
MANIFEST = "SHA256SUMS"
LIBSYCL = "lib/libsycl.so.8"
MEND = (
    "run scripts/sycl_runtime.sh (scripts/setup.sh runs it), which downloads the runtime again where its "
    "checksums do not match, or use -d opencl"
)


def root() -> Path | None:
    """The runtime folder the module will load, or None where nothing says (no SYCL build)."""
    if os.environ.get("FPGACOMM_SYCL_ROOT"):
        return Path(os.environ["FPGACOMM_SYCL_ROOT"])
    if os.environ.get("FPGACOMM_CACHE") and BUILT_ROOT.exists():
        # The release is the one the module was built for: the last part of its folder's name.
        return Path(os.environ["FPGACOMM_CACHE"]) / Path(BUILT_ROOT.read_text().strip()).name
    return Path(BUILT_ROOT.read_text().strip()) if BUILT_ROOT.exists() else None


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def damage(folder: Path | None = None) -> str:
    """What is wrong with the runtime's libraries ("" when nothing is),
    found without loading them: each library the manifest lists, missing
    or not matching its checksum."""
    folder = root() if folder is None else folder
    if folder is None:
        return ""
    manifest = folder / MANIFEST
    try:
        lines = manifest.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        return (
            f"Intel's SYCL runtime in {folder} has no readable manifest of its checksums ({manifest}: "
            f"{getattr(error, 'strerror', None) or error}), so it cannot be checked before loading; {MEND}"
        )
    expected = {}
    for line in lines:
        checksum, _, name = line.partition("  ")
        if name.startswith("lib/"):
            expected[name] = checksum
    if LIBSYCL not in expected:
        return f"the manifest {manifest} lists no {LIBSYCL}, so the runtime cannot be checked before loading; {MEND}"
    problems = []
    for name, checksum in sorted(expected.items()):
        try:
            if _digest(folder / name) != checksum:
                problems.append(f"{name} does not match its checksum (damaged or truncated)")
        except FileNotFoundError:
            problems.append(f"{name} is missing")
        except OSError as error:
            problems.append(f"{name} cannot be read ({error.strerror or error})")
    if not problems:
        return ""
    return f"Intel's SYCL runtime in {folder} cannot be loaded: {'; '.join(problems)}; {MEND}"


def load(folder: Path | None = None) -> None:
    """Loads libsycl from the checked folder, so that the module, which
    needs a library of that name, takes this one (its neighbours come from
    the same folder by their own RUNPATH)."""
    folder = root() if folder is None else folder
    if folder is not None:
        ctypes.CDLL(str(folder / LIBSYCL), mode=ctypes.RTLD_GLOBAL)
