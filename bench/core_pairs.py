"""Rank 0's ping-pong latency (8 B) and streaming bandwidth (1 MiB) with each
other rank in turn, every rank bound to its own core: where a host's cores
are not alike (two sockets behind one virtual socket, hyperthread siblings),
the pairs fall into groups. A probe of the lent hosts for docs/PREDICTION.md,
not a product benchmark.

    mpirun -np 32 --bind-to core --map-by core python bench/core_pairs.py > pairs.json
"""

import json
import os
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
SMALL, LARGE, WINDOW = 8, 1 << 20, 16
small, large = np.zeros(SMALL, np.uint8), np.ones(LARGE * WINDOW, np.uint8)
cores = comm.gather(sorted(os.sched_getaffinity(0)))


def ping_pong(peer: int, iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        if rank == 0:
            comm.Send(small, peer)
            comm.Recv(small, peer)
        else:
            comm.Recv(small, 0)
            comm.Send(small, 0)
    return (time.perf_counter() - start) / iterations / 2


def stream(peer: int, windows: int) -> float:
    start = time.perf_counter()
    for _ in range(windows):
        if rank == 0:
            requests = [comm.Isend(large[i * LARGE : (i + 1) * LARGE], peer) for i in range(WINDOW)]
            MPI.Request.Waitall(requests)
            comm.Recv(small, peer)
        else:
            requests = [comm.Irecv(large[i * LARGE : (i + 1) * LARGE], 0) for i in range(WINDOW)]
            MPI.Request.Waitall(requests)
            comm.Send(small, 0)
    return LARGE * WINDOW * windows / (time.perf_counter() - start)


for peer in range(1, size):
    for repeat in range(2):
        if rank in (0, peer):
            ping_pong(peer, 200)
            latency = min(ping_pong(peer, 2000) for _ in range(3))
            stream(peer, 2)
            bandwidth = max(stream(peer, 10) for _ in range(3))
        comm.Barrier()
        if rank == 0:
            print(
                json.dumps(
                    {
                        "peer": peer,
                        "repeat": repeat,
                        "cores": [cores[0], cores[peer]],
                        "latency_s": latency,
                        "bandwidth_Bps": bandwidth,
                    }
                ),
                flush=True,
            )
