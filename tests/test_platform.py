"""Platform files (Fabric.to_json / from_json, schema fpgacomm.platform/1) and
the cluster preset: every preset written and read back simulates the same
times to the bit; the cluster's host costs follow their formulas, with the
numbers worked out by hand; bad platforms and counts are refused with one
message and status 2."""

import json
import math
import os
import subprocess
import sys
import time

import pytest
from fpgacomm import _core, cli, fabric, gather_sim
from fpgacomm.simulation import patterns

UsageError = _core.UsageError
KiB, MiB = 1 << 10, 1 << 20
# Hand-picked costs whose sums are easy to check: o_s = 1 us, o_r = 2 us,
# g = 0.5 us; inside a host L = 0.5 us at 5 GB/s per rank (20 GB/s bus);
# between hosts L = 3 us at 10 GB/s; rendezvous past 4 KiB costs 7 us.
COSTS = dict(
    send_overhead=1e-6,
    recv_overhead=2e-6,
    gap=0.5e-6,
    intra_latency=0.5e-6,
    intra_bandwidth=5e9,
    host_bandwidth=20e9,
    inter_latency=3e-6,
    inter_bandwidth=10e9,
    eager_threshold=4096,
    rendezvous_latency=7e-6,
)


def small(name):
    """Every preset of the registry at a size that simulates in milliseconds."""
    if not fabric.PRESETS[name].node_arguments:
        return fabric.preset(name)
    return fabric.preset(name, 64 if name == "vcsn_fat_tree" else 8)


def times(fab):
    """A few experiments' simulated times: ping-pong to the nearest and the
    farthest node at three sizes, and a staged run of two contending streams."""
    far = max(range(fab.nodes), key=lambda node: (fabric._sim.distances(fab.spec, 0)[node], -node))
    rows = [fabric._sim.ping_pong(fab.spec, 0, dst, size, 2) for dst in sorted({1, far}) for size in (0, 64 * KiB, MiB)]
    staged = fabric.run_schedule(fab, [[(0, far, MiB), (far, 0, 3 * MiB + 5)], [(far, 0, 256 * KiB)]])
    return rows, staged.rows, staged.samples


@pytest.mark.parametrize("name", sorted(fabric.PRESETS))
def test_every_preset_written_and_read_back_simulates_the_same_to_the_bit(name):
    fab = small(name)
    text = fab.to_json()
    back = fabric.Fabric.from_json(text)
    assert json.loads(text)["schema"] == "fpgacomm.platform/1"
    assert back.to_json() == text
    assert back.params() == fab.params()
    assert times(back) == times(fab)


@pytest.mark.parametrize(
    "fab",
    [
        fabric.dcn_ring(6, ports=4),
        fabric.vcsn(8, ports=1, virtual_ports_per_port=3),
        fabric.vcsn_fat_tree(40, switch_ports=8, ports=1, virtual_ports_per_port=1),
        fabric.cuscomnet_torus(3, 3, link="nominal", forwarding="store_and_forward", priorities=2),
        fabric.beff_520n(5),
        fabric.fshmem_pair(256),
        fabric.host_path(6, pcie="theoretical"),
        fabric.cluster(6, ranks_per_host=2, **COSTS),
    ],
    ids=lambda fab: fab.name,
)
def test_arguments_other_than_the_defaults_come_back(fab):
    back = fabric.Fabric.from_json(fab.to_json())
    assert back.arguments == fab.arguments and back.params() == fab.params()
    assert times(back) == times(fab)


def test_a_spec_changed_by_hand_is_not_written_as_if_it_were_the_presets():
    fab = fabric.vcsn(4)
    fab.spec.hub.forwarding = "store_and_forward"
    with pytest.raises(UsageError, match=r"vcsn's spec was changed outside its preset's arguments \(hub\)"):
        fab.to_json()


@pytest.mark.parametrize("name", sorted(gather_sim.OWN_SCHEDULE))
def test_a_platform_file_gathers_as_its_preset_does(name, tmp_path):
    path = tmp_path / "platform.json"
    path.write_text(small(name).to_json())
    by_name = gather_sim.run(fabric=name, nodes=[5, 8], sizes=[64 * KiB, MiB])
    by_file = gather_sim.run(fabric=str(path), nodes=[5, 8], sizes=[64 * KiB, MiB])
    assert by_file.rows == by_name.rows


def test_virtual_links_and_slowed_links_travel_with_the_platform():
    fab = fabric._vcsn_two_virtual_links()
    fab.spec.scale_link(1, 0, 0.37)
    back = fabric.Fabric.from_json(fab.to_json())
    transfers = [(0, 0, 0, 4 * MiB), (0, 0, 1, 4 * MiB)]
    assert fabric.virtual_streams(back, transfers).rows == fabric.virtual_streams(fab, transfers).rows
    assert back.spec.link_scales == [(1, 0, 0.37)]


def test_every_parameter_has_its_unit_and_provenance_and_draws_come_back():
    fab = fabric.cluster(4, ranks_per_host=2, **COSTS)
    fab.provenance = {"send_overhead": {"source": "fit", "calibration": "calib"}}
    fab.draws = [{"send_overhead": 1.1e-6, "inter_bandwidth": 9.5e9}, {"send_overhead": 0.9e-6}]
    document = json.loads(fab.to_json())
    parameters = document["parameters"]
    assert set(parameters) == set(fabric.PRESETS["cluster"].units)
    assert parameters["inter_bandwidth"] == {
        "value": 10e9,
        "unit": "B/s",
        "provenance": {"source": "preset", "preset": "cluster", "reference": fabric.LOGGP},
    }
    assert parameters["send_overhead"]["provenance"] == {"source": "fit", "calibration": "calib"}
    assert parameters["eager_threshold"]["unit"] == "B" and parameters["gap"]["unit"] == "s"
    back = fabric.Fabric.from_json(fab.to_json())
    assert back.draws == fab.draws and back.provenance == fab.provenance


# --- the cluster's host costs, worked out by hand ---------------------------------


def one_way(fab, src, dst, size):
    return fabric._sim.ping_pong(fab.spec, src, dst, size, 1)["one_way"]


def test_ping_pong_is_overheads_latency_and_size_over_bandwidth_on_each_path():
    fab = fabric.cluster(4, ranks_per_host=2, **COSTS)  # ranks 0, 1 on host 0; 2, 3 on host 1
    # Inside a host: 1 + 0.5 + 4096 B / 5 GB/s (0.8192) + 2 us; one byte more goes by rendezvous (+ 7 us).
    assert one_way(fab, 0, 1, 4096) == pytest.approx(4.3192e-6, rel=1e-12)
    assert one_way(fab, 0, 1, 4097) == pytest.approx(11.3194e-6, rel=1e-12)
    # Between hosts: 1 + 3 + 2 us empty; 1 MiB adds 7 us and 104.8576 us at 10 GB/s.
    assert one_way(fab, 0, 2, 0) == pytest.approx(6e-6, rel=1e-12)
    assert one_way(fab, 0, 2, MiB) == pytest.approx(117.8576e-6, rel=1e-12)
    assert fabric.latency(fab, hops=4, size=MiB).rows[0]["half_round_trip"] == pytest.approx(117.8576e-6, rel=1e-12)


def test_the_bus_bounds_a_host_when_one_rank_copies_faster_than_it():
    fab = fabric.cluster(4, ranks_per_host=2, **{**COSTS, "host_bandwidth": 4e9})
    # min(5, 4) GB/s: 1 + 0.5 + 4096 B / 4 GB/s (1.024) + 2 us.
    assert one_way(fab, 0, 1, 4096) == pytest.approx(4.524e-6, rel=1e-12)


def test_k_senders_inside_a_host_share_the_receivers_copy_rate():
    # The receiving rank copies (single-copy shared memory): k blocks into rank 0 at once take
    # o_s + rendezvous + L + k MiB / 5 GB/s + o_r = 10.5 us + k * 209.7152 us, though the bus carries 20 GB/s.
    fab = fabric.cluster(4, ranks_per_host=4, **COSTS)
    for row in patterns.incast(fab, senders=[1, 2, 3], size=MiB).rows:
        assert row["time"] == pytest.approx(10.5e-6 + row["senders"] * 209.7152e-6, rel=1e-12)


def test_k_senders_into_one_host_share_its_nic():
    fab = fabric.cluster(5, ranks_per_host=1, **COSTS)
    rows = patterns.incast(fab, senders=[1, 2, 4], size=MiB).rows
    # o_s + rendezvous + L + k MiB / 10 GB/s + o_r = 13 us + k * 104.8576 us.
    for row in rows:
        assert row["time"] == pytest.approx(13e-6 + row["senders"] * 104.8576e-6, rel=1e-12)
    assert rows[-1]["bandwidth"] == pytest.approx(4 * MiB / 432.4304e-6, rel=1e-12)


def test_mbw_mr_pairs_share_the_nic_and_the_gap_spaces_one_ranks_messages():
    # Senders 0..k-1 on host 0, receivers on host 1: the NIC carries k * window messages.
    fab = fabric.cluster(4, ranks_per_host=2, **COSTS)
    rows = patterns.mbw_mr(fab, pairs=[1, 2], size=MiB, window=4).rows
    for row in rows:
        assert row["time"] == pytest.approx(13e-6 + 4 * row["pairs"] * 104.8576e-6, rel=1e-12)
    # Empty messages: the sender starts one per max(o_s, g) = 1 us, the first arrives at 1 + 3 us; the
    # receiver takes one per max(o_r, g) = 2 us, each o_r = 2 us: the 8th done at 4 + 7 x 2 + 2 us.
    empty = patterns.mbw_mr(fab, pairs=1, size=0, window=8).rows[0]
    assert empty["time"] == pytest.approx(20e-6, rel=1e-12)
    assert empty["message_rate"] == pytest.approx(8 / 20e-6, rel=1e-12)


def test_the_barrier_simulated_matches_its_closed_form():
    template = fabric.cluster(4, ranks_per_host=2, **COSTS)
    rows = patterns.barrier(template, nodes=[2, 4, 8, 13]).rows
    # On one host (2 ranks): one round of 1 + 0.5 + 2 us; otherwise ceil(log2 n) rounds of 1 + 3 + 2 us.
    assert rows[0]["time"] == pytest.approx(3.5e-6, rel=1e-12)
    for row in rows[1:]:
        assert row["time"] == pytest.approx(math.ceil(math.log2(row["nodes"])) * 6e-6, rel=1e-12)
        fab = fabric.resized(template, row["nodes"])
        assert fab.spec.host_costs.barrier(row["nodes"], 0.0) == pytest.approx(row["time"], rel=1e-12)


def test_every_gather_schedule_runs_on_a_cluster_and_its_barriers_cost():
    fab = fabric.cluster(16, ranks_per_host=4, **COSTS)
    for schedule in ("ring", "tree", "vlink", "mpi"):
        result = gather_sim.run(schedule, fab, nodes=[16], sizes=[MiB])
        row = result.rows[0]
        # Every barrier (after a set-up step or a stage) is ceil(log2 16) = 4 rounds of 6 us.
        counts = [round(b / 24e-6) for b in result.samples[f"16/{MiB}/barrier"]]
        assert result.samples[f"16/{MiB}/barrier"] == pytest.approx([24e-6 * c for c in counts], rel=1e-12)
        assert sum(counts) >= row["stages"] >= 1
        # The root's NIC carries the 12 blocks of the other hosts' ranks at 10 GB/s.
        assert row["transfer"] >= 12 * MiB / 10e9


def test_a_cluster_of_1024_ranks_gathers_three_sizes_in_well_under_a_second():
    template = fabric.cluster(8, ranks_per_host=16)
    for schedule in ("ring", "tree", "vlink", "mpi"):
        start = time.process_time()
        gather_sim.run(schedule, template, nodes=[1024], sizes=[64 * KiB, MiB, 16 * MiB])
        # 0.03 to 0.16 s of CPU on the 2-core VM; 200 draws of a point must fit in 60 s.
        assert time.process_time() - start < 1.0, schedule


# --- bad input: one message, status 2 --------------------------------------------


def fpgacomm(*args):
    """The command as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "fpgacomm", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"),
    )


def refused(run, message=""):
    """Status 2, nothing on stdout, one line on stderr that says `message`."""
    assert run.returncode == 2, run.stderr
    assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert message in run.stderr and "Traceback" not in run.stderr
    return True


def platform_text(**change):
    document = json.loads(fabric.cluster(4, ranks_per_host=2, **COSTS).to_json())
    for key, value in change.items():
        if key == "schema":
            document["schema"] = value
        elif value is None:
            del document["parameters"][key]
        else:
            document["parameters"][key]["value"] = value
    return json.dumps(document)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(schema="fpgacomm.platform/2"),
            "schema 'fpgacomm.platform/2'; this fpgacomm reads platform files of " "schema fpgacomm.platform/1",
        ),
        (dict(gap=None), "parameter gap of cluster is missing"),
        (dict(inter_latency=-1e-6), "parameter inter_latency is -1e-06; give a finite number of 0 or more"),
        (dict(intra_bandwidth=0.0), "cluster parameter intra_bandwidth is 0.0; give a finite number above 0"),
        (dict(send_overhead="fast"), "parameter send_overhead is 'fast'; give a number"),
    ],
)
def test_a_bad_platform_is_refused_with_one_message_and_status_2(change, message, tmp_path):
    path = tmp_path / "platform.json"
    path.write_text(platform_text(**change))
    with pytest.raises(UsageError) as raised:
        fabric.platform_or_preset(str(path))
    assert message in str(raised.value)
    assert refused(fpgacomm("fabric", "latency", str(path)), message)


def test_a_non_finite_number_is_refused(tmp_path):
    path = tmp_path / "platform.json"
    path.write_text(platform_text().replace('"value": 3e-06', '"value": NaN'))
    assert refused(
        fpgacomm("gather", "--fabric", str(path), "--nodes", "4", "--sizes", "64K"), "the number NaN is not finite"
    )


def test_a_schedule_the_platform_cannot_run_names_both(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(fabric.host_path(4).to_json())
    assert refused(
        fpgacomm("gather", "--fabric", str(path), "--schedule", "tree", "--nodes", "4"),
        "schedule tree does not run on fabric 'host_path'",
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fabric", "latency", "cluster", "--nodes", "0"], "cluster needs at least 2 nodes, got 0"),
        (["gather", "--fabric", "cluster", "--nodes", "0"], "give node counts of 2 or more"),
        (
            ["fabric", "bw", "no_such_platform.json"],
            "platform no_such_platform.json: no such file; give a platform file or a preset",
        ),
    ],
)
def test_bad_counts_and_missing_files_are_refused(argv, message):
    assert refused(fpgacomm(*argv), message)


def test_the_cluster_on_the_command_line_as_a_platform_file(tmp_path, capsys):
    path = tmp_path / "cluster.json"
    path.write_text(fabric.cluster(8, ranks_per_host=4, **COSTS).to_json())
    assert (
        cli.main(["fabric", "latency", str(path), "--hops", "4", "--size", "0", "--json", str(tmp_path / "lat.json")])
        == 0
    )
    assert json.loads((tmp_path / "lat.json").read_text())["rows"][0]["latency"] == pytest.approx(6e-6, rel=1e-12)
    assert cli.main(["gather", "--fabric", str(path), "--nodes", "8,16", "--sizes", "64K"]) == 0
    assert "mpi" in capsys.readouterr().out


def test_the_b_eff_ring_runs_on_a_cluster_in_rank_order():
    # One rank per host; each sends 1 MiB to rank + 1 (leaving at o_s + rendezvous = 8 us), then to
    # rank - 1 (1 us later): its NIC carries the 2 MiB at 10 GB/s from 8 us on, one message after the
    # other, and each receiving NIC gets them one after the other too: 8 + 209.7152 + 3 (switch) + 2 us.
    row = fabric.beff_ring(fabric.cluster(4, ranks_per_host=1, **COSTS), sizes=[MiB]).rows[0]
    assert row["time"] == pytest.approx(222.7152e-6, rel=1e-12)
    assert "model_pair_bandwidth" not in row  # the 520N's channel model describes no cluster


def test_fabric_platform_writes_a_preset_with_changes_that_reads_back(tmp_path):
    path = tmp_path / "cluster.json"
    run = fpgacomm(
        "fabric",
        "platform",
        "cluster",
        "--nodes",
        "16",
        "--set",
        "ranks_per_host=8",
        "--set",
        "send_overhead=1e-6",
        "--json",
        str(path),
    )
    assert run.returncode == 0 and run.stdout == "", run.stderr
    fab = fabric.platform_or_preset(str(path))
    assert fab.arguments == {**fabric.cluster(16).arguments, "ranks_per_host": 8, "send_overhead": 1e-6}
    assert fab.provenance == {"ranks_per_host": {"source": "given"}, "send_overhead": {"source": "given"}}
    # Without --json the file goes to stdout, and a platform file can be changed again.
    again = fpgacomm("fabric", "platform", str(path), "--set", "gap=2e-7")
    assert json.loads(again.stdout)["parameters"]["gap"] == {
        "value": 2e-7,
        "unit": "s",
        "provenance": {"source": "given"},
    }
    assert refused(
        fpgacomm("fabric", "platform", "cluster", "--set", "gap=-1"),
        "parameter gap is -1; give a finite number of 0 or more",
    )
    assert refused(
        fpgacomm("fabric", "platform", "cluster", "--set", "bandwidth=1e9"), "cluster has no parameter bandwidth"
    )


def test_patterns_too_large_are_refused_before_they_run():
    fab = fabric.cluster(8)
    with pytest.raises(UsageError, match="mbw_mr of up to 4 pairs x 1048576 messages on cluster would need about"):
        patterns.mbw_mr(fab, pairs=[1, 4], size=16 * MiB, window=1 << 20)
    with pytest.raises(UsageError, match="an incast of up to 7 senders on cluster would need"):
        patterns.incast(fab, senders=7, size=1 << 44)
