"""fpgacomm under a real Slurm (tests/slurm.py: munged, slurmctld and two
slurmd on this host): srun --mpi=pmix of an osu test, a collective and the
suite (through the repository's example batch script, as docs/SLURM.md
runs it), salloc + mpirun,
scancel keeping the partial Result, two nodes, and what every Result
records of the job and its launcher. The commands run as a user types them."""

import json
import re
import sys
import time
from pathlib import Path

import pytest
from slurm import Cluster, missing

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parents[1]
SHORT = "-i 3 -x 1"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    absent = missing()
    assert not absent, f"Slurm is not installed ({', '.join(absent)} missing): run scripts/setup.sh"
    path = f"{Path(sys.executable).parent}:{__import__('os').environ['PATH']}"
    started = Cluster(tmp_path_factory.mktemp("slurm"), nodes=2, path=path)
    try:
        yield started.start()
    finally:
        started.stop()


def ran(completed, status=0):
    assert completed.returncode == status, f"exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    return completed


def env_of(path: Path) -> dict:
    return json.loads(path.read_text())["env"]


def test_srun_records_the_job_the_launcher_and_one_core(cluster, tmp_path):
    command = f"srun --mpi=pmix -N 1 -n 2 fpgacomm osu latency -m 1:64 {SHORT} --json lat.json"
    ran(cluster.run(command, cwd=tmp_path))
    env = env_of(tmp_path / "lat.json")
    assert env["launcher"] == {"name": "srun", "command": command}
    slurm = env["slurm"]
    assert slurm["job_id"].isdigit() and slurm["step_id"] == "0"
    assert slurm["cluster"] == "fpgacommtest" and slurm["partition"] == "debug" and slurm["mpi_type"] == "pmix"
    assert slurm["node_list"] in cluster.nodes and slurm["rank_nodes"] == [slurm["node_list"]] * 2
    assert env["hosts"] == [slurm["node_list"]] and env["scale"] == "scale-up"
    # Slurm binds each task to a core of its own; the load is still judged against the host's cores.
    assert env["machine"]["affinity_cores"] == 1
    assert env["machine"]["cores"] == __import__("os").cpu_count()


def test_a_collective_under_srun(cluster, tmp_path):
    ran(
        cluster.run(
            f"srun --mpi=pmix -n 2 fpgacomm osu allreduce -m 4:64 {SHORT} -c --json allreduce.json", cwd=tmp_path
        )
    )
    result = json.loads((tmp_path / "allreduce.json").read_text())
    assert [row["size"] for row in result["rows"]] == [4, 8, 16, 32, 64]
    assert result["env"]["launcher"]["name"] == "srun" and result["env"]["ranks"] == 2


def test_two_nodes_are_two_hosts(cluster, tmp_path):
    ran(cluster.run(f"srun --mpi=pmix -N 2 -n 2 fpgacomm osu bw -m 1:1K {SHORT} --json bw.json", cwd=tmp_path))
    env = env_of(tmp_path / "bw.json")
    assert env["hosts"] == ["n1", "n2"] and env["nodes"] == 2 and env["scale"] == "scale-out"
    assert env["slurm"]["rank_nodes"] == ["n1", "n2"]
    # Both are this machine, whose own name is kept beside Slurm's.
    assert len(set(env["slurm"]["rank_host_names"])) == 1


def test_salloc_and_mpirun(cluster, tmp_path):
    command = f"mpirun -np 2 fpgacomm osu latency -m 1:64 {SHORT} --json lat.json"
    ran(cluster.run(f"salloc -n 2 {command}", cwd=tmp_path))
    env = env_of(tmp_path / "lat.json")
    assert env["launcher"] == {"name": "mpirun", "command": command}
    assert env["slurm"]["job_id"].isdigit() and env["slurm"]["node_list"] in cluster.nodes


def test_without_a_launcher_the_message_names_srun(cluster, tmp_path):
    (tmp_path / "alone.sh").write_text("#!/bin/bash\nfpgacomm osu latency -m 1:64\n")
    ran(cluster.run("sbatch --wait -n 2 -o alone.out alone.sh", cwd=tmp_path), status=2)
    log = (tmp_path / "alone.out").read_text()
    assert "this run has 1; run it with mpirun -np 2 or srun -n 2 --mpi=pmix" in log, log


def test_srun_without_pmix_says_so(cluster, tmp_path):
    completed = ran(cluster.run("srun -n 2 fpgacomm osu latency -m 1:64", cwd=tmp_path), status=2)
    assert "srun started this task with --mpi=none" in completed.stderr
    assert "run it with srun --mpi=pmix" in completed.stderr
    assert "Traceback" not in completed.stderr and "OPAL ERROR" not in completed.stderr


@pytest.mark.parametrize("scancel", ["scancel --signal=INT", "scancel"])
def test_scancel_keeps_the_partial_result(cluster, tmp_path, scancel):
    """scancel --signal=INT sends SIGINT to the step; plain scancel (and a
    time limit) SIGTERM, then SIGKILL after KillWait (5 s here)."""
    (tmp_path / "long.sh").write_text(
        "#!/bin/bash\nsrun --mpi=pmix fpgacomm osu latency -m 1:4M -i 3000 -x 10 " "--json partial.json\n"
    )
    job = ran(cluster.run("sbatch --parsable -n 2 -o long.out long.sh", cwd=tmp_path)).stdout.strip()
    log = tmp_path / "long.out"
    deadline = time.monotonic() + 90
    while not (log.exists() and re.search(r"^4 +\d", log.read_text(), re.M)):
        assert time.monotonic() < deadline, f"no row of 4 bytes in 90 s:\n{log.read_text() if log.exists() else ''}"
        time.sleep(0.5)
    ran(cluster.run(f"{scancel} {job}", cwd=tmp_path))
    deadline = time.monotonic() + 60
    while cluster.run(f"squeue -h -j {job}").stdout.strip():
        assert time.monotonic() < deadline, "the cancelled job still runs after 60 s"
        time.sleep(0.5)
    # Every task gets the signal at once: rank 0 must still save before the job ends.
    assert (tmp_path / "partial.json").exists(), f"no partial Result saved; the job's output:\n{log.read_text()}"
    result = json.loads((tmp_path / "partial.json").read_text())
    signal = "SIGINT" if "INT" in scancel else "SIGTERM"
    # The signal as received: slurmstepd delivers scancel's to every task.
    assert result["incomplete"].startswith(f"interrupted by {signal} from slurmstepd: ")
    sizes = [row["size"] for row in result["rows"]]
    assert sizes[:3] == [1, 2, 4] and len(sizes) < 23
    assert result["env"]["slurm"]["job_id"] == job


def test_outside_slurm_mpirun_and_no_launcher_are_recorded(tmp_path):
    import os
    import subprocess

    environment = {key: value for key, value in os.environ.items() if not key.startswith(("SLURM", "OMPI_", "PMIX_"))}
    environment.update(
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    )
    command = f"mpirun -np 2 --oversubscribe fpgacomm osu latency -m 1:8 {SHORT} --json lat.json"
    ran(subprocess.run(command, shell=True, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120))
    env = env_of(tmp_path / "lat.json")
    assert env["launcher"] == {"name": "mpirun", "command": command} and "slurm" not in env
    script = "import fpgacomm.runtime.environment as e; print(e.launcher())"
    alone = ran(subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True))
    assert alone.stdout.strip() == "{'name': 'none', 'command': None}"


def docs_commands() -> list[str]:
    """Every line of docs/SLURM.md's sh blocks, comments dropped."""
    blocks = re.findall(r"^```sh\n(.*?)^```", (ROOT / "docs" / "SLURM.md").read_text(), flags=re.M | re.S)
    lines = [re.sub(r"\s+#.*$", "", line).strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line]


def shortened(command: str) -> str:
    """The command with options after its own that cut its length (the last of an option given twice counts)."""
    if "fpgacomm osu" in command:
        return f"{command} -m 1:64K {SHORT}"
    if "suite.sbatch" in command:
        return f"{command} -m 8 {SHORT} --beff-max-size 2 --beff-repetitions 1"
    return command


def test_every_command_of_the_slurm_page_runs(cluster, tmp_path):
    commands = docs_commands()
    assert any(command.startswith("sbatch ") for command in commands) and len(commands) >= 5
    for command in commands:
        ran(cluster.run(shortened(command).replace("scripts/", f"{ROOT}/scripts/"), cwd=tmp_path, timeout=180))
    deadline = time.monotonic() + 240
    while cluster.run("squeue -h").stdout.strip():  # the batch job
        assert time.monotonic() < deadline, "the batch job still runs after 240 s"
        time.sleep(1)
    # The example batch script's suite (scripts/suite.sbatch), srun's tasks inside the job.
    assert "status: complete" in (tmp_path / "results" / "latest" / "fpgacomm-run.txt").read_text()
    env = env_of(tmp_path / "results" / "latest" / "osu_latency_H_H.json")
    assert env["launcher"]["name"] == "srun" and env["launcher"]["command"].startswith("srun --mpi=pmix fpgacomm suite")
    assert env["slurm"]["step_id"] == "0" and env["ranks"] == 2
    assert env_of(tmp_path / "lat.json")["launcher"]["name"] == "mpirun"  # salloc's, written last
    assert env_of(tmp_path / "bw.json")["scale"] == "scale-out"
