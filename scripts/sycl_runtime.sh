#!/usr/bin/env bash
# Intel's SYCL runtime (DPC++'s libsycl, its Unified Runtime loader and
# OpenCL adapter, and UMF) from its PyPI wheels, for fpgacomm's SYCL module
# (fpgacomm._sycl). scripts/setup.sh runs this before the build; it is
# idempotent and downloads nothing once the cache is complete.
#
# - downloads four pinned wheels (about 60 MB) with pip and checks each
#   against its SHA-256 below; keeps the SYCL headers (include/) and the
#   libraries libsycl loads (lib/, about 65 MB: the OpenCL adapter only, so
#   SYCL reaches devices through the OpenCL ICD loader, PoCL and Intel's FPGA
#   emulator among them), with a SHA-256 manifest checked every run, in
#   ${FPGACOMM_CACHE:-${XDG_CACHE_HOME:-~/.cache}/fpgacomm}/intel-sycl-RELEASE,
#   beside the FPGA emulator; the wheels are deleted once unpacked;
# - the libraries find each other by their own RUNPATH ($ORIGIN/../lib), and
#   CMake links fpgacomm._sycl with an RPATH to lib/, so nothing needs
#   LD_LIBRARY_PATH.
#
# It never fails the set-up: where the wheels cannot be had (no network, not
# Linux on x86_64) or FPGACOMM_SYCL=no, it prints one line and fpgacomm is
# built without SYCL (`-d sycl` then says how to get it).
set -uo pipefail
source "$(dirname "$0")/pinned_wheels.sh"

release=2025.0.5
cache="${FPGACOMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fpgacomm}/intel-sycl-$release"
if [ "${FPGACOMM_SYCL:-yes}" = "no" ]; then
  echo "sycl: skipped (FPGACOMM_SYCL=no): fpgacomm is built without -d sycl"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "sycl: skipped: Intel publishes its SYCL runtime for Linux on x86_64 only; fpgacomm is built without -d sycl"
  exit 0
fi

# package==version and the SHA-256 of its manylinux_2_28_x86_64 wheel.
wheels=(
  "intel-sycl-rt==$release a259ad62a3a93b27d85f8cd034f9953be75f904a44e6b516811c09c0a3535012"
  "intel-cmplr-lib-ur==$release d64eceba9dc77890672625cb4994ff42b6b6de907ea54dfcad77748239652cb1"
  "umf==0.9.1 2f7b8eb45e182b24823be420063799ea89b4f1cad6b9510b1fc6e04b809c7ec2"
  "intel-cmplr-lib-rt==$release c6dbc09545927d334a0c5c1d4cbbfe940ea6ff12ae956479f68605489119783b"
)
# What a SYCL program on the OpenCL backend loads (libsycl, the UR loader
# and its OpenCL adapter, UMF, and the Intel math libraries they link).
libraries=(libsycl.so.8 libur_loader.so.0 libur_adapter_opencl.so.0 libumf.so.0
           libimf.so libsvml.so libirng.so libintlc.so.5)
manifest="$cache/SHA256SUMS"

complete() {
  [ -f "$manifest" ] && (cd "$cache" && sha256sum --check --quiet --status SHA256SUMS)
}

if complete; then
  echo "sycl: runtime $release found in $cache"
  exit 0
fi
mkdir -p "$cache" || { echo "sycl: cannot create $cache; fpgacomm is built without -d sycl"; exit 0; }
work=$(mktemp -d "$cache/download.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "sycl: downloading Intel's SYCL runtime $release (about 60 MB) into $cache"
if ! download_pinned_wheels "$work/wheels" "${wheels[@]}" 2>"$work/errors"; then
  echo "sycl: the runtime's wheels could not be downloaded ($(tail -n 1 "$work/errors")); fpgacomm is built without -d sycl"
  exit 0
fi
/usr/bin/python3 - "$work/wheels" "$work/tree" "${libraries[@]}" <<'PYTHON' || { echo "sycl: the wheels lack files the runtime needs; fpgacomm is built without -d sycl"; exit 0; }
import pathlib, sys, zipfile
wheels, out, needed = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), set(sys.argv[3:])
headers = 0
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            _, _, inside = member.filename.partition(".data/data/")
            name = inside.rpartition("/")[2]
            keep_header = wheel.name.startswith("intel_sycl_rt") and inside.startswith("include/") and name
            if not (keep_header or (inside == "lib/" + name and name in needed)):
                continue
            target = out / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))
            target.chmod(0o755 if ".so" in name else 0o644)
            headers += bool(keep_header)
            needed.discard(name)
if needed or not (out / "include" / "sycl" / "sycl.hpp").exists():
    sys.exit("missing " + ", ".join(sorted(needed) or ["include/sycl/sycl.hpp"]))
PYTHON
(cd "$work/tree" && find lib include -type f | sort | xargs sha256sum) > "$work/SHA256SUMS"
rm -rf "$cache/lib" "$cache/include" "$manifest"
mv "$work/tree/lib" "$work/tree/include" "$cache/"
mv "$work/SHA256SUMS" "$manifest"
echo "sycl: runtime $release cached in $cache"
