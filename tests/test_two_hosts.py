"""Across hosts: the two-host test bed (scripts/two_hosts.sh: two network
namespaces with host names of their own, joined by a bridge) and fpgacomm
runs whose ranks sit on both hosts. Skipped, with the reason, where the
machine does not allow namespaces or root."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fpgacomm import Result

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "two_hosts.sh"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", POCL_MAX_PTHREAD_COUNT="1")


def _bed(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def _leftovers(name: str) -> list:
    """What a test bed called `name` leaves: namespaces, links, state."""
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-brief", "link"], capture_output=True, text=True).stdout.split()
    return ([n for n in namespaces if n.startswith(name)] + [link for link in links if link.startswith(name)]
            + ([str(Path("/run/fpgacomm-two-hosts") / name)] if (Path("/run/fpgacomm-two-hosts") / name).exists()
               else []))


@pytest.fixture(scope="module")
def two_hosts():
    """The mpirun options of a fresh two-host test bed, removed afterwards."""
    check = _bed("check")
    if check.returncode != 0:
        pytest.skip(check.stdout.strip() or check.stderr.strip())
    name = f"fc{os.getpid() % 100000}"
    up = _bed("up", name)
    assert up.returncode == 0, up.stderr
    try:
        yield name, up.stdout.split()
    finally:
        down = _bed("down", name)
        assert down.returncode == 0, down.stderr


def _mpirun(options, ranks, *command, timeout=240):
    return subprocess.run(["mpirun", *options, "-np", str(ranks), "--map-by", "node", "-x", "OMPI_ALLOW_RUN_AS_ROOT",
                           "-x", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "-x", "POCL_MAX_PTHREAD_COUNT", *command],
                          capture_output=True, text=True, timeout=timeout, env=ENV)


def test_each_host_has_its_own_name(two_hosts):
    name, options = two_hosts
    run = _mpirun(options, 4, "hostname")
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.split()) == [f"{name}-a", f"{name}-a", f"{name}-b", f"{name}-b"]


def test_device_latency_across_hosts_validates_and_names_both_hosts(two_hosts, tmp_path):
    name, options = two_hosts
    path = tmp_path / "latency.json"
    run = _mpirun(options, 2, sys.executable, "-m", "fpgacomm", "osu", "latency", "D", "D", "-m", "1:64", "-i", "5",
                  "-x", "1", "-c", "--json", str(path))
    assert run.returncode == 0, run.stderr
    rows = [line.split() for line in run.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 7 and all(row[-1] == "Pass" for row in rows)
    result = Result.read_json(path)
    assert result.env["hosts"] == [f"{name}-a", f"{name}-b"]
    assert result.env["ranks_per_node"] == {f"{name}-a": 1, f"{name}-b": 1}


def test_the_bed_is_idempotent_and_leaves_nothing():
    check = _bed("check")
    if check.returncode != 0:
        pytest.skip(check.stdout.strip() or check.stderr.strip())
    name = f"fd{os.getpid() % 100000}"
    try:
        assert _bed("up", name).returncode == 0
        again = _bed("up", name)  # over what the first left
        assert again.returncode == 0, again.stderr
        assert len(_leftovers(name)) == 6  # 2 namespaces, the bridge, 2 veth ends, the state folder
    finally:
        assert _bed("down", name).returncode == 0
    assert _bed("down", name).returncode == 0  # nothing left to remove is fine
    assert _leftovers(name) == []


def test_bad_names_are_refused():
    run = _bed("up", "Bad-Name")
    assert run.returncode == 2 and "NAME: a lowercase letter, then up to 7 letters or digits" in run.stderr
