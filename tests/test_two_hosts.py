"""Across hosts: the two-host test bed (scripts/two_hosts.sh: two network
namespaces with host names of their own, joined by a bridge) and fpgacomm
runs whose ranks sit on both hosts. Skipped, with the reason, where the
machine does not allow namespaces or root."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fpgacomm import Result, plot
from fpgacomm.results.report import summary_line

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "two_hosts.sh"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", POCL_MAX_PTHREAD_COUNT="1")


def _bed(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def _leftovers(name: str) -> list:
    """What a test bed called `name` leaves: namespaces, links, state."""
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-brief", "link"], capture_output=True, text=True).stdout.split()
    return (
        [n for n in namespaces if n.startswith(name)]
        + [link for link in links if link.startswith(name)]
        + ([str(Path("/run/fpgacomm-two-hosts") / name)] if (Path("/run/fpgacomm-two-hosts") / name).exists() else [])
    )


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


# mpirun's options where it runs on a host without ranks (a login node): Open MPI's TCP keepalive on the
# connections to its daemons, so that a daemon cut off is found lost within seconds (2 s idle, then 3 probes 1 s
# apart) rather than after the 8 minutes of its defaults.
LOST_DAEMON_OPTIONS = (
    "--mca",
    "oob_tcp_keepalive_time",
    "2",
    "--mca",
    "oob_tcp_keepalive_intvl",
    "1",
    "--mca",
    "oob_tcp_keepalive_probes",
    "3",
)
RANK_ENV = ("-x", "OMPI_ALLOW_RUN_AS_ROOT", "-x", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "-x", "POCL_MAX_PTHREAD_COUNT")
FPGACOMM = (sys.executable, "-m", "fpgacomm")


def _mpirun(options, ranks, *command, timeout=240):
    """One mpirun on the bed, ranks alternating between the hosts (rank 0 on
    the first, rank 1 on the second)."""
    return subprocess.run(
        ["mpirun", *options, "-np", str(ranks), "--map-by", "node", *RANK_ENV, *command],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


def _per_host(options, first: dict, second: dict, *command, timeout=240):
    """4 ranks, 2 on each host, each host's ranks with their own variables
    (one app context per host, as a user gives a host its own -x)."""
    hosts = options[options.index("--host") + 1].split(",")
    common = [
        word
        for index, word in enumerate(options)
        if word != "--host" and (index == 0 or options[index - 1] != "--host")
    ]
    contexts = []
    for host, variables in zip(hosts, (first, second)):
        contexts += [":"] if contexts else []
        contexts += [
            "-np",
            "2",
            "--host",
            host,
            *RANK_ENV,
            *[word for name, value in variables.items() for word in ("-x", f"{name}={value}")],
            *command,
        ]
    return subprocess.run(["mpirun", *common, *contexts], capture_output=True, text=True, timeout=timeout, env=ENV)


def _one_agreed_error(run, message: str) -> None:
    """Every rank ended with status 2 and fpgacomm printed one message (the
    agreed one, starting with `message`), no traceback."""
    assert run.returncode == 2, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("fpgacomm: error")]
    assert len(errors) == 1 and errors[0].startswith(f"fpgacomm: error: {message}"), run.stderr
    assert "Traceback" not in run.stderr


def test_each_host_has_its_own_name(two_hosts):
    name, options = two_hosts
    run = _mpirun(options, 4, "hostname")
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.split()) == [f"{name}-a", f"{name}-a", f"{name}-b", f"{name}-b"]


def test_device_latency_across_hosts_is_labelled_scale_out_in_text_json_and_figures(two_hosts, tmp_path):
    name, options = two_hosts
    path = tmp_path / "latency.json"
    run = _mpirun(
        options, 2, *FPGACOMM, "osu", "latency", "D", "D", "-m", "1:64", "-i", "5", "-x", "1", "-c", "--json", str(path)
    )
    assert run.returncode == 0, run.stderr
    assert "# Scale-out: 2 ranks on 2 hosts, 1 per host" in run.stdout.splitlines()[:4]
    rows = [line.split() for line in run.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 7 and all(row[-1] == "Pass" for row in rows)
    result = Result.read_json(path)
    assert result.env["hosts"] == [f"{name}-a", f"{name}-b"] and result.env["rank_hosts"] == result.env["hosts"]
    assert result.env["ranks_per_node"] == {f"{name}-a": 1, f"{name}-b": 1}
    assert (result.env["nodes"], result.env["scale"]) == (2, "scale-out")
    assert summary_line(result).startswith("osu_latency D D (scale-out, 2 hosts): ")
    # Beside it, the same run as if on one host: each legend says which.
    one_host = Result(
        result.benchmark, result.params, dict(result.env, ranks_per_node={"a": 2}), result.rows, result.units
    )
    legend = plot.figure_for([result, one_host]).axes[0].get_legend()
    assert [text.get_text() for text in legend.get_texts()] == ["D D scale-out (2 hosts)", "D D scale-up"]


def test_every_family_across_two_hosts_with_two_ranks_on_each(two_hosts):
    """tests/mpi/test_across_hosts.py under mpirun: ranks 0 and 1 on one host, 2 and 3 on the other."""
    _, options = two_hosts
    run = subprocess.run(
        [
            "mpirun",
            *options,
            "-np",
            "4",
            "--map-by",
            "slot",
            *RANK_ENV,
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "test_across_hosts.py",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
        cwd=ROOT / "tests" / "mpi",
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


def test_device_maps_are_indexed_by_node_local_rank_on_each_host(two_hosts, tmp_path):
    """Two PoCL devices on each host (0 basic, 1 pthread). FPGA_MAPPING given
    per host maps each host's own ranks; --device-map, the same everywhere,
    maps every host's node-local ranks alike."""
    _, options = two_hosts
    devices = {"POCL_DEVICES": "basic pthread"}
    command = [*FPGACOMM, "osu", "allreduce", "--mem", "D", "-m", "8:8", "-i", "2", "-x", "1", "-c"]
    run = _per_host(
        options,
        {**devices, "FPGA_MAPPING": "1:0"},
        {**devices, "FPGA_MAPPING": "0:1"},
        *command,
        "--json",
        str(tmp_path / "per_host.json"),
    )
    assert run.returncode == 0, run.stderr
    result = Result.read_json(tmp_path / "per_host.json")
    assert [device.split("'")[1].split("-")[0] for device in result.env["rank_devices"]] == [
        "pthread",
        "basic",
        "basic",
        "pthread",
    ]
    a, b = result.env["hosts"]
    assert result.env["host_variables"][a]["FPGA_MAPPING"] == "1:0"
    assert result.env["host_variables"][b]["FPGA_MAPPING"] == "0:1"
    run = _per_host(options, devices, devices, *command, "--device-map", "1:0", "--json", str(tmp_path / "map.json"))
    assert run.returncode == 0, run.stderr
    result = Result.read_json(tmp_path / "map.json")
    assert [device.split("'")[1].split("-")[0] for device in result.env["rank_devices"]] == [
        "pthread",
        "basic",
        "pthread",
        "basic",
    ]
    assert "host_variables" not in result.env


def test_a_bad_mapping_on_one_host_only_stops_every_rank_with_one_message(two_hosts):
    _, options = two_hosts
    run = _per_host(
        options,
        {"FPGA_MAPPING": "0:0"},
        {"FPGA_MAPPING": "0:x"},
        *FPGACOMM,
        "osu",
        "allreduce",
        "--mem",
        "D",
        "-m",
        "8:8",
        "-i",
        "2",
    )
    _one_agreed_error(
        run,
        "rank 2: FPGA_MAPPING='0:x' has a non-numeric entry 'x'; expected colon-separated device "
        "indices such as 2:0:3 (entry i is the device of node-local rank i)",
    )


def _registry(folder: Path, *libraries: str) -> str:
    """An OpenCL ICD registry folder listing only `libraries` (a host with other devices)."""
    folder.mkdir()
    for number, library in enumerate(libraries):
        (folder / f"only{number}.icd").write_text(library + "\n")
    return str(folder)


def _icd_library(fragment: str) -> str:
    found = [path.read_text().strip() for path in Path("/etc/OpenCL/vendors").glob("*.icd") if fragment in path.name]
    if not found:
        pytest.skip(f"no {fragment} OpenCL driver registered in /etc/OpenCL/vendors (scripts/setup.sh registers it)")
    return found[0]


def test_a_host_without_the_asked_device_type_stops_every_rank_with_one_message(two_hosts, tmp_path):
    """--device-type fpga: the first host has Intel's FPGA emulator, the second only PoCL's CPU device."""
    _, options = two_hosts
    _icd_library("fpga-emu")
    only_pocl = _registry(tmp_path / "pocl", _icd_library("pocl"))
    run = _per_host(
        options,
        {},
        {"OCL_ICD_VENDORS": only_pocl},
        *FPGACOMM,
        "osu",
        "allreduce",
        "--mem",
        "D",
        "--device-type",
        "fpga",
        "-m",
        "8:8",
        "-i",
        "2",
    )
    _one_agreed_error(run, "rank 2: no OpenCL device matches platform='' device='' type=fpga")


def test_hosts_whose_devices_lack_the_asked_kind_stop_with_one_message(two_hosts, tmp_path):
    """--mem B (HBM): PoCL on the first host and the FPGA emulator on the
    second both lack it, each with its own reason; the ranks agree on one."""
    _, options = two_hosts
    only_emulator = _registry(tmp_path / "emulator", _icd_library("fpga-emu"))
    run = _per_host(
        options,
        {},
        {"OCL_ICD_VENDORS": only_emulator},
        *FPGACOMM,
        "osu",
        "allreduce",
        "--mem",
        "B",
        "-m",
        "8:8",
        "-i",
        "2",
    )
    _one_agreed_error(run, "rank 0: HBM (B) needs the Xilinx XRT memory-bank extension")
    assert "Portable Computing Language" in run.stderr and "Emulation" not in run.stderr


def test_one_sided_without_a_transport_for_windows_is_one_message(two_hosts):
    """Open MPI 4.1 over TCP makes no window without osc/pt2pt (the bed's options give it)."""
    _, options = two_hosts
    index = options.index("pt2pt")
    assert options[index - 2 : index] == ["--mca", "osc"]
    run = _mpirun(options[: index - 2] + options[index + 1 :], 2, *FPGACOMM, "osu", "put_bw", "-m", "8:8", "-i", "2")
    _one_agreed_error(run, "rank 0: this MPI library cannot create a window (MPI_Win_allocate: ")
    assert "mpirun --mca osc pt2pt" in run.stderr


def _ranks_of(marker: str) -> dict:
    """{world rank: pid} of the processes started with FPGACOMM_TEST_RUN=marker."""
    ranks = {}
    for entry in Path("/proc").iterdir():
        try:
            variables = dict(item.split("=", 1) for item in (entry / "environ").read_text().split("\0") if "=" in item)
        except (OSError, ValueError):
            continue
        if variables.get("FPGACOMM_TEST_RUN") == marker and "OMPI_COMM_WORLD_RANK" in variables:
            ranks[int(variables["OMPI_COMM_WORLD_RANK"])] = int(entry.name)
    return ranks


def test_a_rank_killed_on_the_other_host_ends_every_rank(two_hosts):
    """kill -9 of rank 3, whose UTS namespace is the second host's: every rank
    ends, mpirun's status is not 0 and it names the killed rank once."""
    name, options = two_hosts
    marker = f"{name}-kill"
    command = [
        "mpirun",
        *options,
        "-np",
        "4",
        "--map-by",
        "slot",
        *RANK_ENV,
        "-x",
        f"FPGACOMM_TEST_RUN={marker}",
        *FPGACOMM,
        "--timeout",
        "120",
        "osu",
        "allreduce",
        "-m",
        "8:8",
        "-i",
        "100000000",
    ]
    job = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(ENV, FPGACOMM_TEST_RUN=marker),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        ranks = _ranks_of(marker)
        while len(ranks) < 4 and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.2)
            ranks = _ranks_of(marker)
        assert len(ranks) == 4, f"the job's ranks did not all start: {ranks}"
        second_host = os.stat(Path("/run/fpgacomm-two-hosts") / name / "uts-b").st_ino
        assert os.stat(f"/proc/{ranks[3]}/ns/uts").st_ino == second_host
        assert os.stat(f"/proc/{ranks[0]}/ns/uts").st_ino != second_host
        time.sleep(1)  # inside the measurement
        os.kill(ranks[3], signal.SIGKILL)
        stdout, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    assert job.returncode != 0
    assert stderr.count("exited on signal 9") == 1 and "process rank 3 with PID" in stderr, stderr
    assert "Traceback" not in stderr and "fpgacomm: error" not in stderr
    assert _ranks_of(marker) == {}


def test_the_bed_is_idempotent_and_leaves_nothing():
    check = _bed("check")
    if check.returncode != 0:
        pytest.skip(check.stdout.strip() or check.stderr.strip())
    name = f"fd{os.getpid() % 100000}"
    try:
        assert _bed("up", name).returncode == 0
        again = _bed("up", name)  # over what the first left
        assert again.returncode == 0, again.stderr
        assert len(_leftovers(name)) == 8  # 3 namespaces, the bridge, 3 veth ends, the state folder
    finally:
        assert _bed("down", name).returncode == 0
    assert _bed("down", name).returncode == 0  # nothing left to remove is fine
    assert _leftovers(name) == []


def test_a_bed_whose_name_gives_a_taken_subnet_takes_the_next_free_one(two_hosts):
    """Two beds at once (two test sessions) must not share a subnet: mpirun
    reaches each bed's hosts through its bridge's address."""
    _, options = two_hosts
    taken = options[options.index("--host") + 1].split(".")[2]
    find = subprocess.run(
        [
            "bash",
            "-c",
            "for i in $(seq 1 5000); do n=fe$i; [ $(( $(printf %s $n | cksum | cut "
            f"-d' ' -f1) % 250 + 1 )) = {taken} ] && {{ echo $n; break; }}; done",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    other = find.stdout.strip()
    assert other, "no name of fe1..fe5000 gives that subnet"
    try:
        up = _bed("up", other)
        assert up.returncode == 0, up.stderr
        given = up.stdout.split()
        assert given[given.index("--host") + 1].split(".")[2] != taken
    finally:
        assert _bed("down", other).returncode == 0


def test_bad_names_are_refused():
    run = _bed("up", "Bad-Name")
    assert run.returncode == 2 and "NAME: a lowercase letter, then up to 7 letters or digits" in run.stderr


def _bed_processes(name: str) -> list:
    """Processes of any job on the bed: mpirun, its launch agents, the
    daemons and ranks (each names the bed's agent or carries its marker)."""
    agent = f"/run/fpgacomm-two-hosts/{name}/agent"
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().decode(errors="replace")
            variables = (entry / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if agent in words or f"FPGACOMM_TEST_RUN={name}-link" in variables:
            found.append(f"{entry.name}: {words.replace(chr(0), ' ')[:80]}")
    return found


@pytest.mark.parametrize(
    "launcher_host, interrupt",
    [("a", False), ("a", True), ("c", False)],
    ids=["time-limit", "sigint-to-mpirun", "mpirun-on-a-host-without-ranks"],
)
def test_a_link_that_goes_down_mid_run_ends_the_job_on_both_hosts(two_hosts, tmp_path, launcher_host, interrupt):
    """mpirun on the first host (as a user runs it there), or on the third
    host, which has no rank (a login node); rank 0 on the first host, rank
    1 on the second, the link to the second set down 4 s after both ranks
    started. With --timeout 14 alone: the time limit stops rank 0, which
    saves the sizes measured, and fpgacomm then ends what Open MPI keeps
    waiting for, saying which host stopped answering. With SIGINT to mpirun 1 s later: rank 0 (SIGTERM
    from mpirun, blocked in MPI) saves the sizes measured, and mpirun ends
    within seconds. Either way, nothing of the job is left on any host
    within --timeout + 10 s."""
    name, options = two_hosts
    state = Path("/run/fpgacomm-two-hosts") / name
    first, second = [host.split(":")[0] for host in options[options.index("--host") + 1].split(",")]
    if launcher_host == "c":
        # No rank, so no fpgacomm, runs beside this mpirun to end its wait: Open MPI's own TCP keepalive of its
        # daemons' connections (docs/METHODS.md, "Errors and time limits") tells it the cut-off daemon is lost.
        options = [*options, *LOST_DAEMON_OPTIONS]
    marker = f"{name}-link"
    limit = 14  # --timeout
    output = tmp_path / "lat.json"
    command = [
        "nsenter",
        f"--net=/run/netns/{name}{launcher_host}",
        f"--uts={state}/uts-{launcher_host}",
        "--",
        "mpirun",
        *options,
        "-np",
        "2",
        "--map-by",
        "node",
        *RANK_ENV,
        "-x",
        f"FPGACOMM_TEST_RUN={marker}",
        *FPGACOMM,
        "--timeout",
        str(limit),
        "osu",
        "latency",
        "-m",
        "1:4M",
        "-i",
        "3000",
        "--json",
        str(output),
    ]
    job = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(ENV, FPGACOMM_TEST_RUN=marker),
        start_new_session=True,
    )
    try:
        # The link goes down 4 s into the measurement, not at a fixed time after mpirun's start: on a loaded
        # machine the daemon on the second host may take seconds to report, and a link cut before it has is a
        # failed start (no rank ran), not the lost link under test. The time limit counts from the ranks' start.
        deadline = time.monotonic() + 60
        while len(_ranks_of(marker)) < 2 and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.1)
        if len(_ranks_of(marker)) < 2:  # say why: mpirun ended (its status and words), or is still starting them
            status = job.poll()
            if status is None:
                os.killpg(job.pid, signal.SIGKILL)
            _, said = job.communicate(timeout=60)
            pytest.fail(
                f"the job's ranks did not both start: {_ranks_of(marker)}; mpirun "
                f"{'had not started them after 60 s' if status is None else f'ended with status {status}'}: {said}"
            )
        started = time.monotonic()
        time.sleep(4)
        subprocess.run(["ip", "link", "set", f"{name}hb", "down"], check=True)
        if interrupt:
            time.sleep(1)
            interrupted = time.monotonic()
            job.send_signal(signal.SIGINT)  # nsenter has become mpirun
        job.wait(timeout=60)  # mpirun's end (its output is short: no pipe fills meanwhile)
        ended = time.monotonic()
        stdout, stderr = job.communicate(timeout=60)  # once every holder of its pipes (the daemons) has ended
        # mpirun's end is the job's (below); on a loaded machine the rest may take a few seconds more.
        while _bed_processes(name) and time.monotonic() - started < limit + 20:
            time.sleep(0.2)
        left = _bed_processes(name)
    finally:
        subprocess.run(["ip", "link", "set", f"{name}hb", "up"], check=True)
        # The hosts that tried to reach the cut-off one hold it as unreachable (a failed neighbour entry) for some
        # seconds after the link is back, and the next test's mpirun would find it so: forget it now.
        for host in "abc":
            subprocess.run(["ip", "-n", f"{name}{host}", "neigh", "flush", "all"], check=True)
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
        for line in _bed_processes(name):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
    assert job.returncode != 0
    assert ended - started < limit + 10, stderr
    assert left == [], left
    assert "Traceback" not in stderr
    assert output.exists(), stderr
    saved = Result.read_json(output)
    if launcher_host == "c":  # mpirun names the host it lost, and ends the job: rank 0 saves on SIGTERM
        assert "Remote daemon: " in stderr and f" on node {second}" in stderr, stderr
        assert saved.incomplete.startswith(("interrupted by SIGTERM from orted: ", "time limit (--timeout): "))
        return
    # Rank 0's watcher ends mpirun's wait, naming the host (rank 1, on the cut-off host, ends itself and its
    # daemon 5 s past its own time limit, which only rank 0's stops the run at; on a loaded machine that may
    # come first, and mpirun then names the host).
    assert (
        f"fpgacomm: mpirun still waits 3 s after a rank ended: its daemons on {second} stopped answering" in stderr
        or f" on node {second}" in stderr
    ), stderr
    if interrupt:
        assert ended - interrupted < 10, stderr
        assert saved.incomplete.startswith("interrupted by SIGTERM from mpirun: ") and "saved in" in stderr
    else:
        assert f"rank 0: time limit of {limit} s exceeded (--timeout)" in stderr
        assert saved.incomplete.startswith("time limit (--timeout): ") and "saved in" in stderr
    assert first != second
