"""Runs `fpgacomm osu latency D D` with a fault on rank 1 (not a test module:
tests/test_mpi.py starts it under mpirun). `raise`: rank 1 fails after its
first iteration's receive; `hang`: rank 1 stops there, and the 5 s time limit
must end the job."""

import sys
import time

from conftest import receive_fault
from fpgacomm import cli, mpi


def main(mode: str) -> int:
    def fault(buffer, offset, nbytes):
        if mode == "raise":
            raise RuntimeError("injected fault")
        time.sleep(3600)

    world = mpi.world()
    with receive_fault(world, fault if world.Get_rank() == 1 else None) as faulty:
        mpi.world = lambda: faulty  # the command runs over the faulty duplicate
        return cli.main(["--timeout", "5", "osu", "latency", "D", "D", "-m", "8", "-i", "1000"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
