"""The core's bindings in one process: sizes, mapping, devices, buffers."""

import numpy as np
import pytest
from fpgacomm import _core, params
from fpgacomm.runtime.devices import DeviceOptions, describe, device_for, kernel_dir


def test_sizes_follow_omb():
    assert params.resolve_sizes(None)[0] == 1 and params.resolve_sizes(None)[-1] == 4 << 20
    assert params.resolve_sizes("4K:64K") == [4096, 8192, 16384, 32768, 65536]
    assert params.resolve_sizes("16") == [1, 2, 4, 8, 16]
    assert params.resolve_sizes([3, 5]) == [3, 5]
    with pytest.raises(_core.UsageError, match="unknown suffix"):
        params.resolve_sizes("4X")
    with pytest.raises(_core.UsageError, match="above MAX"):
        params.resolve_sizes("64K:4K")
    with pytest.raises(_core.UsageError, match="at least 1 byte"):
        params.resolve_sizes([0])


@pytest.mark.parametrize(
    "hosts,expected",
    [
        # one node: node-local rank modulo the device count (3 devices)
        (["a"] * 5, [0, 1, 2, 0, 1]),
        # two nodes, block placement: each node counts its own ranks
        (["a", "a", "b", "b"], [0, 1, 0, 1]),
        # three nodes, round-robin placement
        (["a", "b", "c", "a", "b", "c"], [0, 0, 0, 1, 1, 1]),
    ],
)
def test_ranks_map_by_node_local_rank(hosts, expected, monkeypatch):
    monkeypatch.delenv("FPGA_MAPPING", raising=False)
    assert [device_for(hosts, rank, 3, DeviceOptions()) for rank in range(len(hosts))] == expected


def test_fpga_mapping_indexes_node_local_ranks(monkeypatch):
    monkeypatch.setenv("FPGA_MAPPING", "2:0:3")
    hosts = ["n0", "n1", "n0", "n1", "n0"]
    assert [device_for(hosts, rank, 4, DeviceOptions()) for rank in range(5)] == [2, 2, 0, 0, 3]
    # --device-map wins over the environment
    assert device_for(hosts, 0, 4, DeviceOptions(device_map="1")) == 1


@pytest.mark.parametrize(
    "spec,message",
    [
        ("2:x", "non-numeric entry 'x'"),
        ("", "FPGA_MAPPING is empty"),
        ("0::1", "empty or oversized entry"),
    ],
)
def test_malformed_fpga_mapping_is_named(spec, message, monkeypatch):
    monkeypatch.setenv("FPGA_MAPPING", spec)
    with pytest.raises(_core.UsageError, match=message):
        device_for(["a"], 0, 1, DeviceOptions())


def test_mapping_too_short_or_naming_missing_device(monkeypatch):
    monkeypatch.setenv("FPGA_MAPPING", "0")
    with pytest.raises(_core.UsageError, match="node-local rank 1 needs one"):
        device_for(["a", "a"], 1, 1, DeviceOptions())
    monkeypatch.setenv("FPGA_MAPPING", "4")
    with pytest.raises(_core.UsageError, match="to device 4, but only 1 device"):
        device_for(["a"], 0, 1, DeviceOptions())


@pytest.fixture(scope="module")
def device():
    return _core.Device(_core.select_devices()[0], kernel_dir())


def test_pocl_gives_host_and_device_memory_but_no_hbm_or_plram():
    pocl = [row for row in describe() if "Portable Computing Language" in row["platform"]]
    if not pocl:
        pytest.skip("no PoCL platform here (OCL_ICD_FILENAMES or the ICD registry leaves it out)")
    assert pocl[0]["kinds"] == ["H", "H!", "D"]
    assert "has neither" in pocl[0]["unavailable"]["B"] and "PLRAM (P)" in pocl[0]["unavailable"]["P"]
    assert pocl[0]["max_alloc_bytes"] > 0 and pocl[0]["global_mem_bytes"] >= pocl[0]["max_alloc_bytes"]


def test_selection_by_name_type_and_index():
    first = _core.all_devices()[0]
    word = first.platform_name.split()[0].lower()  # a name substring, case-insensitive
    assert any(info.name == first.name for info in _core.select_devices(platform=word, type=first.type))
    assert _core.select_devices(platform="0", device="0")[0].name == first.name
    if not any(info.type == "fpga" for info in _core.all_devices()):
        with pytest.raises(_core.UsageError, match="no OpenCL device matches .*type=fpga"):
            _core.select_devices(type="fpga")
    with pytest.raises(_core.UsageError, match="unknown device type 'tpu'"):
        _core.select_devices(type="tpu")


def test_auto_takes_the_real_accelerators_when_there_are_any_and_never_an_emulator_first():
    """A GPU driver beside PoCL: auto (the default) must not hand node-local
    rank 0 the GPU and rank 1 the CPU device; and Intel's FPGA emulator beside
    PoCL must not become the default (it is an accelerator by type)."""
    every = _core.select_devices(type="all")
    real = [d for d in every if not d.emulated]
    accelerators = [d for d in real if d.type in ("fpga", "gpu")]
    expected = accelerators or real or every
    assert [(d.platform_index, d.device_index) for d in _core.select_devices()] == [
        (d.platform_index, d.device_index) for d in expected
    ]
    assert _core.select_devices(type="auto")[0].name == expected[0].name


def test_the_fpga_type_takes_the_emulator_where_no_real_fpga_is():
    fpgas = [d for d in _core.all_devices() if d.type == "fpga"]
    if not any(d.emulated for d in fpgas):
        pytest.skip("Intel's FPGA emulator is not registered here (scripts/setup.sh registers it)")
    expected = [d for d in fpgas if not d.emulated] or fpgas
    assert [d.name for d in _core.select_devices(type="fpga")] == [d.name for d in expected]
    emulator = next(d for d in fpgas if d.emulated)
    assert "Emulation" in emulator.platform_name
    # Named by platform, the emulator is chosen even beside a real FPGA.
    assert _core.select_devices(platform="emulation", type="fpga")[0].emulated


def test_pocl_is_no_emulator():
    assert not any(d.emulated for d in _core.all_devices() if "Portable Computing Language" in d.platform_name)


def test_host_buffer_is_a_numpy_view_without_copy(device):
    for kind in ("H", "H!"):
        buffer = _core.Buffer(device, kind, 4096)
        view = buffer.array()
        view[:4] = [1, 2, 3, 4]
        assert list(buffer.read(4)) == [1, 2, 3, 4]
        buffer.write(np.full(8, 9, np.uint8), offset=100)
        assert list(view[100:108]) == [9] * 8


def test_device_buffer_round_trip_and_no_view(device):
    buffer = _core.Buffer(device, "D", 1 << 20)
    assert not buffer.read(1 << 20).any()  # starts zeroed
    data = np.arange(1 << 18, dtype=np.uint32)
    buffer.write(data)
    assert np.array_equal(buffer.read(1 << 20).view(np.uint32), data)
    with pytest.raises(_core.UsageError, match="has no array view"):
        buffer.array()
    with pytest.raises(_core.UsageError, match="outside a buffer"):
        buffer.read(16, offset=(1 << 20) - 8)


def test_bad_kinds_and_sizes_are_named(device):
    with pytest.raises(_core.UsageError, match="unknown memory kind 'Q'"):
        _core.Buffer(device, "Q", 16)
    with pytest.raises(_core.UsageError, match="HBM \\(B\\) needs"):
        _core.Buffer(device, "B", 16)
    too_big = device.info.max_alloc_bytes + 1
    with pytest.raises(_core.UsageError, match="largest allocation is .*use smaller messages"):
        _core.Buffer(device, "D", too_big)
    with pytest.raises(_core.UsageError, match="needs an OpenCL device"):
        _core.Buffer(None, "D", 16)


def test_touch_runs_the_placeholder_kernel(device):
    buffer = _core.Buffer(device, "D", 64)
    buffer.write(np.arange(64, dtype=np.uint8))
    device.touch(buffer)
    assert list(buffer.read(64)) == list(range(64))  # the empty kernel changes nothing


def test_validation_pattern_depends_on_everything():
    base = [_core.testing.pattern_byte(i, 4096, 3, 0) for i in range(4096)]
    assert len(set(base)) > 200
    assert base != [_core.testing.pattern_byte(i, 4096, 4, 0) for i in range(4096)]
    assert base != [_core.testing.pattern_byte(i, 4096, 3, 1) for i in range(4096)]
    # a chunk at the wrong offset must not match (a linear pattern would repeat)
    assert base[:256] != [_core.testing.pattern_byte(i, 4096, 3, 0) for i in range(256, 512)]
