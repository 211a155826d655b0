"""b_eff's IEC type on Intel's FPGA emulator, under mpirun with 1, 2 and 3
ranks (tests/test_fpga_emulator.py starts them): the ring of emulated FPGAs
exchanges every message through the kernels' channels, the channel folders
go away after a run and after a failure, a miswired ring fails validation
on every rank, and what cannot work is refused with the reason."""

import glob
import os
import tempfile

import pytest
from conftest import assert_all
from fpgacomm import _core, beff
from fpgacomm.benchmarks import beff_iec
from fpgacomm.runtime.devices import DeviceOptions, open_device

FPGA = DeviceOptions(type="fpga")
FAST = dict(comm_type="iec", device=FPGA, max_size=8, repetitions=2, target_time=0.01)


def leftovers():
    return glob.glob(os.path.join(tempfile.gettempdir(), f"fpgacomm-iec-{os.getuid()}-*"))


def test_every_message_crosses_the_emulated_channels_intact(comm):
    before = os.getcwd()
    result = beff.run(comm, **FAST)
    assert [row["size"] for row in result.rows] == [1 << m for m in range(9)]
    assert all(row["validation"] == "pass" and row["validation_errors"] == 0 for row in result.rows)
    assert result.params["route"] == "io channels" and result.params["loop_rule"] == "adaptive"
    assert all(row["loop_length"] >= 1 for row in result.rows)
    assert result.env["opencl"]["emulated"] is True
    assert os.getcwd() == before
    comm.Barrier()
    assert_all(comm, not leftovers(), f"channel folders left behind: {leftovers()}")


def test_a_second_run_on_another_ring_is_wired_anew(comm):
    """The emulator keeps a program's channel files open: each run builds the
    IEC program again, so a different ring's messages reach their own receivers."""
    for seed in (1, 2):
        result = beff.run(comm, seed=seed, **{**FAST, "max_size": 2})
        assert_all(comm, all(row["validation"] == "pass" for row in result.rows), f"seed {seed}")


@pytest.mark.ranks(3)
def test_a_miswired_ring_fails_validation_on_every_rank(comm, monkeypatch):
    """Each rank's inputs joined to the opposite neighbours' outputs: every
    message then comes from the wrong sender, and the receive kernels count it."""
    wire = beff_iec.wire
    monkeypatch.setattr(beff_iec, "wire", lambda folder, order, rank: wire(folder, order[::-1], rank))
    result = beff.run(comm, **{**FAST, "max_size": 3})
    assert_all(
        comm, all(row["validation"] == "fail" and row["validation_errors"] > 0 for row in result.rows), str(result.rows)
    )
    assert beff.failed_sizes(result) == [1, 2, 4, 8]


def test_the_channel_folders_go_away_when_the_run_fails(comm, monkeypatch):
    def failing(*args, **kwargs):
        assert os.path.basename(os.getcwd()) == f"rank{comm.Get_rank()}"
        assert os.path.islink("kernel_input_ch1") and os.path.exists("kernel_output_ch0")
        raise _core.Error("injected failure")

    before = os.getcwd()
    monkeypatch.setattr(_core, "run_beff", failing)
    with pytest.raises(_core.Error, match="injected failure"):
        beff.run(comm, **FAST)
    assert os.getcwd() == before
    comm.Barrier()
    assert_all(comm, not leftovers(), f"channel folders left behind: {leftovers()}")


def test_a_device_without_intel_channels_is_refused(comm):
    pocl = DeviceOptions(platform="Portable Computing Language")
    with pytest.raises(_core.UsageError, match=r"needs Intel external channels \(cl_intel_channels\)") as caught:
        beff.run(comm, **{**FAST, "device": pocl})
    assert caught.value.agreed and "--comm-type kernel" in str(caught.value)


def test_an_emulated_ring_across_hosts_is_refused(comm):
    device = open_device(comm, FPGA)
    hosts = [f"node{rank % 2}" for rank in range(max(2, comm.Get_size()))]
    with pytest.raises(_core.UsageError, match="named pipes, which cannot cross hosts") as caught:
        beff_iec.check_iec_device(comm, device, hosts)
    assert "node0, node1" in str(caught.value)
