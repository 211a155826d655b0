#!/usr/bin/env bash
# Intel's FPGA emulation platform for OpenCL ("Intel(R) FPGA Emulation
# Platform for OpenCL(TM)"), from its PyPI wheels, registered with the ICD
# loader beside the platforms already there (PoCL). scripts/setup.sh runs
# this; it is idempotent and downloads nothing once the cache is complete.
#
# What it does:
# - downloads four pinned wheels (about 290 MB) with pip, checks each against
#   its SHA-256 below, and unpacks from their data/lib folders only the
#   libraries the emulator loads (about 420 MB; Intel's own libOpenCL.so is
#   left out so that Debian's ocl-icd stays the loader; libintelocl_emu.so
#   finds its libraries in its own folder, so no LD_LIBRARY_PATH);
# - keeps them in a user cache folder, $FPGACOMM_CACHE or
#   ${XDG_CACHE_HOME:-~/.cache}/fpgacomm, with a SHA-256 manifest that is
#   checked every run, so a fresh clone finds them again without downloading;
#   the wheels are deleted once unpacked;
# - writes fpgacomm-intel-fpga-emu.icd, the full path of libintelocl_emu.so,
#   into the vendors folder: $FPGACOMM_ICD_VENDORS when set; else, as root,
#   /etc/OpenCL/vendors, where Debian registers PoCL, so every program and
#   every new shell sees both; else ${XDG_DATA_HOME:-~/.local/share}/fpgacomm/
#   OpenCL/vendors, which also gets a copy of every .icd of /etc/OpenCL/vendors:
#   fpgacomm uses that folder by itself when OCL_ICD_VENDORS is unset, and
#   other programs (clinfo) see it with OCL_ICD_VENDORS set to it.
#
# FPGACOMM_FPGA_EMULATOR=no skips all of it.
set -euo pipefail
source "$(dirname "$0")/pinned_wheels.sh"

if [ "${FPGACOMM_FPGA_EMULATOR:-yes}" = "no" ]; then
  echo "fpga emulator: skipped (FPGACOMM_FPGA_EMULATOR=no)"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "fpga emulator: skipped: Intel publishes it for Linux on x86_64 only, this is $(uname -s)-$(uname -m)"
  exit 0
fi

release=2025.0.5
# package==version and the SHA-256 of its manylinux_2_28_x86_64 wheel.
wheels=(
  "intel-opencl-fpga-emu-rt==$release 4b823db6a4508c92626d1aba0aac81bfebe264a4330634501fe8145655242d96"
  "intel-opencl-rt==$release c2966550e4ad9078e401dbff486d31e3b86645e91a9832a04889226bbf57e9d0"
  "intel-cmplr-lib-rt==$release c6dbc09545927d334a0c5c1d4cbbfe940ea6ff12ae956479f68605489119783b"
  "tbb==2022.0.0 15a15a4e3ea4c3f3198bdb3c55fac75c589e15ed2ad0bbb080900d355c5b017e"
)
# What libintelocl_emu.so opens (strace of a build, a run and io channels):
# its dependencies, its configuration, and the built-in function libraries
# of every CPU generation it may pick (e9, h8, l9, z0, z1), so that the cache
# works on any x86_64 machine it is copied to.
needed=(libintelocl_emu.so cl.fpga_emu.cfg libcommon_clang.so.2024.18.12.0 libonnxruntime.1.12.22.721.so
        libimf.so libsvml.so libirng.so libintlc.so.5 libtbb.so.12 libtbbmalloc.so.2
        clbltfnshared.rtl cllibrary.rtl)
for arch in e9 h8 l9 z0 z1; do
  needed+=("clbltfn$arch.rtl" "cllibrary$arch.o" "libocl_svml_$arch.so")
done

cache="${FPGACOMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fpgacomm}/intel-fpga-emulator-$release"
lib="$cache/lib"
manifest="$cache/SHA256SUMS"

complete() {
  [ -f "$manifest" ] && (cd "$lib" && sha256sum --check --quiet --status "$manifest")
}

if complete; then
  echo "fpga emulator: $release found in $cache"
else
  echo "fpga emulator: downloading Intel's FPGA emulation platform $release (about 290 MB) into $cache"
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/download.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  download_pinned_wheels "$work/wheels" "${wheels[@]}" \
    || { echo "fpga emulator: the pinned wheels could not be downloaded; not installed" >&2; exit 1; }
  /usr/bin/python3 - "$work/wheels" "$work/lib" "${needed[@]}" <<'EOF'
import pathlib, sys, zipfile
wheels, out, needed = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), set(sys.argv[3:])
out.mkdir(parents=True)
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            folder, _, name = member.filename.rpartition("/")
            if folder.endswith(".data/data/lib") and name in needed:
                (out / name).write_bytes(archive.read(member))
                (out / name).chmod(0o755 if ".so" in name else 0o644)
                needed.discard(name)
if needed:
    sys.exit("fpga emulator: the wheels lack " + ", ".join(sorted(needed)))
EOF
  (cd "$work/lib" && sha256sum "${needed[@]}") > "$work/SHA256SUMS"
  rm -rf "$lib" "$manifest"
  mv "$work/lib" "$lib"
  mv "$work/SHA256SUMS" "$manifest"
fi

system=/etc/OpenCL/vendors
if [ -n "${FPGACOMM_ICD_VENDORS:-}" ]; then
  vendors="$FPGACOMM_ICD_VENDORS"
elif [ "$(id -u)" -eq 0 ]; then
  vendors=$system
else
  vendors="${XDG_DATA_HOME:-$HOME/.local/share}/fpgacomm/OpenCL/vendors"
fi
mkdir -p "$vendors"
# A folder of our own replaces the system's for the loader: the system's
# platforms (PoCL) must be in it too.
if [ "$(realpath "$vendors")" != "$(realpath -m "$system")" ]; then
  for registered in "$system"/*.icd; do
    if [ -e "$registered" ]; then cp "$registered" "$vendors/"; fi
  done
fi
icd="$vendors/fpgacomm-intel-fpga-emu.icd"
printf '%s\n' "$lib/libintelocl_emu.so" > "$icd.tmp"
mv "$icd.tmp" "$icd"
echo "fpga emulator: registered in $icd"
