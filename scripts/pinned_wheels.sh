# Sourced by scripts/fpga_emulator.sh and scripts/sycl_runtime.sh:
# download_pinned_wheels DEST "package==version sha256" ... downloads each
# manylinux_2_28_x86_64 wheel with pip into DEST and checks it against its
# pinned SHA-256; returns non-zero (after one message on stderr) when a
# download fails or a wheel differs from its pin.
download_pinned_wheels() {
  local dest="$1" entry requirement sha wheel
  shift
  for entry in "$@"; do
    read -r requirement sha <<<"$entry"
    /usr/bin/python3 -m pip download --quiet --no-deps --only-binary=:all: \
      --platform manylinux_2_28_x86_64 --dest "$dest" "$requirement" || return 1
    wheel=$(ls "$dest"/"$(echo "${requirement%%==*}" | tr - _)"-*.whl)
    echo "$sha  $wheel" | sha256sum --check --quiet \
      || { echo "$wheel does not have the pinned SHA-256 $sha" >&2; return 1; }
  done
}
