"""The cabling of b_eff's IEC type (kernels/beff_iec.cl) on Intel's FPGA emulator.

On a board the ring is the serial cabling between FPGAs. The emulator has
no cables: an io channel is a file that a kernel opens by its name
(kernel_output_ch0 ...) in the process's working directory at its first
launch, and keeps open. So every rank gets a folder of its own in a private
folder of the job, holding its four output channels as named pipes, and
its four input channels as links to its neighbours' output pipes:

    rank r/kernel_input_ch1 -> rank left(r)/kernel_output_ch0   (rightward)
    rank r/kernel_input_ch3 -> rank left(r)/kernel_output_ch2
    rank r/kernel_input_ch0 -> rank right(r)/kernel_output_ch1  (leftward)
    rank r/kernel_input_ch2 -> rank right(r)/kernel_output_ch3

and runs the IEC kernels with that folder as its working directory, so an
N-rank ring of emulated FPGAs exchanges every message through the kernels'
channels (one rank is HPCC FPGA's loopback: output N to input N^1). The
pipes join processes of one host only. Everything is removed afterwards,
also when the run fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

from .. import _core

# Output channel -> the neighbour ("left" or "right") whose input channel
# it feeds, and that input's number (kernels/beff_iec.cl).
CABLES = {0: ("right", 1), 2: ("right", 3), 1: ("left", 0), 3: ("left", 2)}


def check_iec_device(comm, device, hosts: list[str]) -> None:
    """Collective: an emulated ring stays on one host (named pipes cannot
    cross hosts). Whether the device has Intel channels at all, the core
    checks (src/bench/beff.cpp)."""
    info = device.info
    failure = ""
    if info.emulated and len(set(hosts)) > 1:
        failure = (
            f"b_eff --comm-type iec on Intel's FPGA emulator joins the ranks' channels with named pipes, "
            f"which cannot cross hosts, and these ranks run on {len(set(hosts))} hosts "
            f"({', '.join(sorted(set(hosts)))}); run every rank on one host, or use FPGA boards whose "
            f"ring is cabled"
        )
    _core.agree(comm, failure, True)


def wire(rank_folder: str, ring_order: list[int], rank: int) -> None:
    """This rank's output pipes and the links of its inputs to its
    neighbours' outputs, in the job's folder (rank folders rank0, rank1, ...)."""
    left, right = _core.ring_neighbours(ring_order, rank)
    neighbour = {"left": left, "right": right}
    os.mkdir(rank_folder, 0o700)
    for output, (side, input_channel) in CABLES.items():
        os.mkfifo(os.path.join(rank_folder, f"kernel_output_ch{output}"), 0o600)
        # The input fed by this rank's output N is the neighbour's; this rank's
        # own input of that number is fed by the neighbour on the other side.
        source = neighbour["left" if side == "right" else "right"]
        os.symlink(
            os.path.join("..", f"rank{source}", f"kernel_output_ch{output}"),
            os.path.join(rank_folder, f"kernel_input_ch{input_channel}"),
        )


@contextlib.contextmanager
def emulated_channels(comm, ring_order: list[int]):
    """Collective: wires the ring and runs the body in this rank's channel
    folder; restores the working directory and removes the folders after,
    also on failure."""
    rank = comm.Get_rank()
    base, failure = None, ""
    if rank == 0:
        try:
            base = tempfile.mkdtemp(prefix=f"fpgacomm-iec-{os.getuid()}-")
        except OSError as error:
            failure = f"cannot create the folder of the emulated IEC channels: {error}"
    _core.agree(comm, failure, False)
    base = comm.bcast(base, root=0)
    here = os.getcwd()
    folder = os.path.join(base, f"rank{rank}")
    try:
        failure = ""
        try:
            wire(folder, ring_order, rank)
        except OSError as error:
            failure = f"cannot create the emulated IEC channels in {folder}: {error}"
        _core.agree(comm, failure, False)  # every pipe exists before any kernel opens one
        os.chdir(folder)
        yield folder
    finally:
        os.chdir(here)
        shutil.rmtree(folder, ignore_errors=True)
        if rank == 0:
            shutil.rmtree(base, ignore_errors=True)
