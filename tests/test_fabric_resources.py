"""The simulator's resource estimate and its refusal (fpgacomm.fabric_resources)."""

import json

import pytest
from fpgacomm import fabric, fabric_resources, gather_sim
from fpgacomm.simulation.resources import Limits
from processes import fpgacomm

MiB = 1 << 20


def gather_estimate(schedule, preset, nodes, size, **options):
    return gather_sim.estimate(schedule, preset, nodes, size, **options)


def test_the_default_admits_the_cluster_scale_targets():
    for args in (
        ("tree", "vcsn_fat_tree", 1024, 16 * MiB),
        ("tree", "vcsn_fat_tree", 4096, 16 * MiB),
        ("ring", "dcn_ring", 11664, 64 << 10),
        ("tree", "vcsn_fat_tree", 11664, 64 << 10),
        ("ring", "dcn_ring", 11664, 256 * MiB),
        ("tree", "vcsn_fat_tree", 11664, 256 * MiB),
    ):
        fabric_resources.check(gather_estimate(*args))


def test_reuse_is_what_makes_them_fit():
    full = gather_estimate("tree", "vcsn_fat_tree", 4096, 16 * MiB, reuse=False)
    reused = gather_estimate("tree", "vcsn_fat_tree", 4096, 16 * MiB)
    assert full.events > 100 * reused.events
    with pytest.raises(fabric.UsageError, match="events to simulate"):
        fabric_resources.check(full)


def test_the_estimate_is_near_what_the_simulator_does():
    # Within a factor of two of the events simulated (bench/fabric_estimates.py
    # checks more cases, and memory): every schedule, with and without reuse,
    # MPI's single stage of every transfer, and traffic over a torus's long paths.
    cases = [
        ("tree", "vcsn_fat_tree", 64, MiB, "gather", True),
        ("tree", "vcsn_fat_tree", 64, MiB, "gather", False),
        ("ring", "dcn_ring", 64, 4 * MiB, "gather", True),
        ("vlink", "vcsn_fat_tree", 64, MiB, "gather", True),
        ("mpi", "host_path", 16, 256 << 10, "allgather", True),
        ("tree", "vcsn_fat_tree", 40, MiB, "allgather", True),
    ]
    for schedule, preset, nodes, size, collective, reuse in cases:
        row = gather_sim.run(schedule, preset, nodes=[nodes], sizes=[size], collective=collective, reuse=reuse).rows[0]
        assert row["events_simulated"] / 2 < row["events_estimated"] < 2 * row["events_simulated"], (schedule, row)
    traffic = fabric.traffic("cuscomnet_torus", nodes=900, packets=5, rate=1e5)
    assert traffic.rows[0]["events"] / 2 < traffic.params["events_estimated"] < 2 * traffic.rows[0]["events"]
    assert traffic.params["events_estimated"] > 20 * 900 * 5  # 15 links on average, not 4


def test_ten_million_nodes_are_refused_before_any_fabric_is_built_with_the_way_out(monkeypatch):
    # A preset is its spec: the topology is built by describe and run_schedule, after the estimate.
    for name in ("describe", "run_schedule"):
        monkeypatch.setattr(fabric._sim, name, lambda *arguments: pytest.fail("the fabric was built"))
    with pytest.raises(fabric.UsageError) as refused:
        gather_sim.run("ring", "dcn_ring", nodes=[10_000_000], sizes=[64 << 10])
    message = str(refused.value)
    assert "ring gather of 10000000 nodes" in message and "--max-memory" in message and "--max-events" in message


def test_a_billion_packets_are_refused_before_the_fabric_is_built():
    with pytest.raises(fabric.UsageError, match="1e\\+10 events|1.\\d+e\\+10 events"):
        fabric.traffic("vcsn_fat_tree", rate=1e6, nodes=10000, packets=100000)


def test_limits_can_be_lowered_and_raised():
    with pytest.raises(fabric.UsageError, match=r"limit 1e\+03"):
        gather_sim.run("tree", "vcsn", nodes=[9], sizes=[MiB], limits=Limits(events=1e3))
    row = gather_sim.run("tree", "vcsn", nodes=[9], sizes=[MiB], limits=Limits(events=1e12)).rows[0]
    assert row["events"] > 0


def test_cli_refuses_with_status_2_and_one_message():
    run = fpgacomm("gather", "--fabric", "dcn_ring", "--nodes", "10000000", "--sizes", "64K")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("would need") == 1 and "--max-events N / --max-memory SIZE" in run.stderr
    run = fpgacomm("fabric", "traffic", "vcsn_fat_tree", "--nodes", "10000", "--packets", "100000", "--rate", "1e6")
    assert run.returncode == 2 and run.stderr.count("would need") == 1
    run = fpgacomm("gather", "--fabric", "vcsn", "--nodes", "9", "--sizes", "1M", "--max-events", "100")
    assert run.returncode == 2 and "limit 100" in run.stderr


def test_cli_no_reuse_prints_the_same_table():
    reused = fpgacomm("gather", "--fabric", "vcsn", "--nodes", "4,9", "--sizes", "64K:128K")
    full = fpgacomm("gather", "--fabric", "vcsn", "--nodes", "4,9", "--sizes", "64K:128K", "--no-reuse")
    assert reused.returncode == full.returncode == 0, full.stderr
    assert reused.stdout == full.stdout
    local = fpgacomm("gather", "--fabric", "vcsn", "--nodes", "4", "--sizes", "64K", "--control", "local")
    assert local.returncode == 0 and "control local: stages may overlap" in local.stderr
    run = fpgacomm("gather", "--no-reuse", "--sizes", "8")
    assert run.returncode == 2 and "--no-reuse applies to simulated runs" in run.stderr


def test_latency_and_bandwidth_are_checked_too():
    with pytest.raises(fabric.UsageError, match="a stream of up to 1099511627776 bytes on vcsn"):
        fabric.bandwidth("vcsn", size=1 << 40, limits=Limits(events=1e6))
    with pytest.raises(fabric.UsageError, match="a ping-pong of 2000 messages"):
        fabric.latency("vcsn", size=1 << 20, iterations=1000, limits=Limits(events=1e5))
    run = fpgacomm("fabric", "bw", "vcsn", "--size", "1G", "--max-events", "1000")
    assert run.returncode == 2 and run.stderr.count("would need") == 1


def test_the_b_eff_ring_one_sided_and_virtual_streams_are_checked_too(monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(fabric._sim, "beff_ring", lambda *arguments: pytest.fail("the ring ran before the estimate"))
        with pytest.raises(fabric.UsageError, match=r"a b_eff ring of 1000000 nodes .* 42.2 GiB of memory"):
            fabric.beff_ring(nodes=1_000_000)
    with pytest.raises(fabric.UsageError, match="a one-sided put of up to 1099511627776 bytes"):
        fabric.one_sided(size=1 << 40, limits=Limits(events=1e6))
    with pytest.raises(fabric.UsageError, match="2 virtual streams of up to 1099511627776 bytes"):
        fabric.virtual_streams("vcsn", [(0, 0, 0, 1 << 40), (0, 0, 1, 1 << 40)], limits=Limits(events=1e6))
    assert fabric.beff_ring(nodes=4, sizes=[1024]).rows[0]["time"] > 0


def test_progress_goes_to_stderr_for_long_runs(capsys):
    progress = fabric_resources.Progress("gather_sim", 2, after=0.0)
    progress.begin("4096 nodes, 16 MiB", fabric_resources.Estimate("x", 8e8, 0, 0))
    progress.step("4096 nodes, 16 MiB")
    quiet = fabric_resources.Progress("gather_sim", 1)
    quiet.begin("4 nodes", fabric_resources.Estimate("x", 10, 0, 0))
    quiet.step("4 nodes")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0] == "gather_sim: 1/2 (4096 nodes, 16 MiB): about 8e+08 events, 100 s estimated"
    assert captured.err.splitlines()[1].startswith("gather_sim: 1/2 done (4096 nodes, 16 MiB), ")
    assert len(captured.err.splitlines()) == 2


def test_fast_forward_shrinks_the_estimate_of_long_streams_only():
    stepped = gather_estimate("tree", "vcsn_fat_tree", 4096, 16 * MiB, fast_forward=False)
    forwarded = gather_estimate("tree", "vcsn_fat_tree", 4096, 16 * MiB)
    assert forwarded.events < stepped.events / 5
    short = [gather_estimate("tree", "vcsn_fat_tree", 16, 64 << 10, fast_forward=flag).events for flag in (True, False)]
    assert short[0] == short[1]


HUGE = (
    ("latency", "dcn_ring", 10_000_000),
    ("bw", "dcn_ring", 10_000_000),
    ("latency", "cuscomnet_torus", 10_000_000),
    ("latency", "beff_520n", 10_000_000),
    ("latency", "host_path", 10_000_000),
    ("bw", "host_path", 10_000_000),
)


def test_huge_fabrics_are_refused_before_any_topology_is_built(monkeypatch):
    for name in ("node_at", "distances", "describe", "ping_pong", "stream", "uniform_traffic"):
        monkeypatch.setattr(fabric._sim, name, lambda *arguments, name=name: pytest.fail(f"{name} ran"))
    measure = {"latency": fabric.latency, "bw": fabric.bandwidth}
    for command, preset, nodes in HUGE:
        with pytest.raises(fabric.UsageError, match=f"a simulated {preset} of {nodes} nodes would need about .* GiB"):
            measure[command](preset, nodes=nodes)
    with pytest.raises(fabric.UsageError, match="random traffic .* would need"):
        fabric.traffic("cuscomnet_torus", rate=1e6, nodes=10_000_000, packets=1)


def test_cli_refuses_huge_fabrics_with_status_2():
    # timeout: a hang fails the test (the refusal itself takes well under a second).
    for command, preset, nodes in HUGE:
        run = fpgacomm("fabric", command, preset, "--nodes", str(nodes), timeout=120)
        assert run.returncode == 2 and run.stderr.count("would need") == 1 and "Traceback" not in run.stderr, run


def test_a_long_ring_is_walked_by_closed_form():
    # 100000 nodes, half way round: the path is 50000 links, never walked node by node.
    row = fabric.latency("dcn_ring", nodes=100_000, hops=50_000).rows[0]
    assert row["hops"] == 50_000 and fabric.node_at(fabric.dcn_ring(100_000), 50_000) == 50_000
    with pytest.raises(fabric.UsageError, match=r"give --hops as one of 1\.\.5$"):
        fabric.node_at(fabric.dcn_ring(10), 7)


def test_an_interrupt_ends_a_long_simulation_and_saves_the_points_done(tmp_path):
    """As a user sees it: stderr on a terminal, where the progress line says
    which point runs; SIGINT during the long second point ends the run
    within seconds and saves the first."""
    import os
    import pty
    import signal
    import subprocess
    import sys
    import time

    from processes import ENV, running
    from terminal import read_terminal

    out = tmp_path / "gather.json"
    # The second point, every stage in full, would take minutes.
    command = [
        sys.executable,
        "-m",
        "fpgacomm",
        "gather",
        "--fabric",
        "dcn_ring",
        "--nodes",
        "4,2000",
        "--sizes",
        "1M",
        "--no-reuse",
        "--json",
        str(out),
    ]
    leader, follower = pty.openpty()
    with open(tmp_path / "rows.txt", "w") as rows:
        process = subprocess.Popen(command, stdout=rows, stderr=follower, env={**ENV, "FPGACOMM_PROGRESS_AFTER": "0"})
    os.close(follower)
    try:
        screen = read_terminal(leader, until=b"point 2 of 2 (2000 nodes, 1048576 bytes", seconds=120)
        assert b"point 2 of 2 (2000 nodes, 1048576 bytes, about " in screen, screen
        time.sleep(0.5)
        assert running(process.pid)
        process.send_signal(signal.SIGINT)
        screen = read_terminal(leader, screen, seconds=60)  # to the end
        process.wait(timeout=60)
    finally:
        process.kill()
        os.close(leader)
    err = screen.decode(errors="replace")
    assert process.returncode == 130, err
    assert "interrupted by SIGINT: 1 of 2 points simulated; saved in" in err
    saved = json.loads(out.read_text())
    assert saved["incomplete"] == "interrupted by SIGINT: 1 of 2 points simulated"
    assert [row["nodes"] for row in saved["rows"]] == [4]


def test_an_interrupted_size_sweep_keeps_the_sizes_done(monkeypatch):
    import signal

    from fpgacomm.runtime import interrupts

    real = fabric._sim.stream

    def stream(spec, src, dst, size, port):
        if size > MiB:
            raise interrupts.interrupted(signal.SIGTERM)
        return real(spec, src, dst, size, port)

    monkeypatch.setattr(fabric._sim, "stream", stream)
    with pytest.raises(interrupts.Interrupted) as stop:
        fabric.bandwidth("vcsn", nodes=4, size=[1024, MiB, 4 * MiB, 16 * MiB])
    assert [row["size"] for row in stop.value.result.rows] == [1024, MiB]
    assert stop.value.result.incomplete == "interrupted by SIGTERM: 2 of 4 sizes simulated"


@pytest.mark.parametrize("name", sorted(fabric.PRESETS))
def test_every_topologys_closed_form_is_what_it_builds(name):
    # Links, levels, the longest and the mean path, from Topology::shape before anything is built,
    # against the topology built and its path lengths walked from every node.
    entry = fabric.PRESETS[name]
    # Partial hosts, blocks and pods; fat trees of 8-port switches up to 3 levels, of 4-port ones up to 6.
    variants = {"cluster": [{"ranks_per_host": 3}], "vcsn_fat_tree": [{"switch_ports": 8}, {"switch_ports": 4}]}
    for nodes, extra in [
        (n, x) for n in ((3, 8, 13, 40, 97) if entry.node_arguments else (None,)) for x in variants.get(name, [{}])
    ]:
        if name == "vcsn" and nodes and nodes > 16:
            continue  # one 16-port switch
        fab = fabric.preset(name, nodes, **extra)
        shape, built = fabric._sim.shape(fab.spec), fab.describe()
        assert (shape["links"], shape["levels"]) == (built["links"], built["levels"]), (name, nodes)
        lengths = [
            links
            for src in range(fab.nodes)
            for dst, links in enumerate(fabric._sim.distances(fab.spec, src))
            if dst != src
        ]
        assert shape["longest_path"] == max(lengths), (name, nodes)
        assert shape["mean_links"] == pytest.approx(sum(lengths) / len(lengths), rel=1e-12), (name, nodes)
        assert fabric_resources.mean_links(fab.spec) == shape["mean_links"]


def test_a_topology_the_estimates_do_not_know_is_an_error():
    spec = fabric.vcsn(4).spec
    with pytest.raises(fabric.UsageError, match="unknown topology 'dragonfly'"):
        spec.topology = "dragonfly"
