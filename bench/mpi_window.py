"""The staged pipeline's wire pattern in plain MPI, without devices.

`osu bw D D` moves a message as chunk-sized MPI messages through a few
reused staging slots, a new chunk going on the wire as soon as a slot frees;
`osu bw H H` posts a whole window of messages at once. This probe runs both
patterns between two ranks with mpi4py and NumPy only (no OpenCL, no
fpgacomm), so that what it shows is the MPI library's: how fast MPI moves
data in the staged pattern when every device copy takes no time at all
(bench/RESULTS.md, "Real accelerators").

    mpirun -np 2 python bench/mpi_window.py [--chunk 4M] [--slots 4] [--pieces 1] [--bytes 64M] [--reps 10]

Patterns, rank 0 to rank 1, --bytes per repetition:
  all     one buffer, every chunk posted at once, then one wait (OMB's window)
  stream  the same buffer, at most --slots chunks in flight: chunk i is posted
          when chunk i - slots has finished
  slots   as stream, but through --slots reused chunk buffers (the staged
          pipeline with free copies): against stream, what reusing a few
          buffers that stay in the caches is worth
With --pieces K each chunk goes as K messages posted together. Buffers are
allocated and written once, before any timing. Each pattern is then checked:
one more repetition with numbered chunks, every chunk compared on arrival.
"""

import argparse
import statistics
import sys

import numpy as np


# Not fpgacomm's parse_size: that loads the core, and with it OpenCL, which
# this probe keeps out of the processes it times.
def parse_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    scale = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    if not number.isdigit() or int(number) == 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive size; write e.g. 4096, 64K or 4M")
    return int(number) * scale


def chunk_views(pattern, chunk, slots, total):
    """The buffer each chunk moves through: a slice of one whole buffer, or
    one of `slots` reused buffers. Every page is written once here."""
    if pattern == "slots":
        buffers = [np.ones(chunk, np.uint8) for _ in range(slots)]
        return [buffers[i % slots] for i in range(total // chunk)]
    whole = np.ones(total, np.uint8)
    return [whole[i * chunk : (i + 1) * chunk] for i in range(total // chunk)]


def run(comm, pattern, views, slots, pieces, numbered=False):
    """Moves every view from rank 0 to rank 1; returns the seconds it took
    (the slower rank's, from a barrier to its last completion) and whether
    every chunk arrived intact (checked only with `numbered`)."""
    from mpi4py import MPI

    sender = comm.rank == 0
    post = comm.Isend if sender else comm.Irecv
    depth = len(views) if pattern == "all" else slots
    in_flight = [[] for _ in range(depth)]
    intact = True

    def finish(i):
        nonlocal intact
        MPI.Request.Waitall(in_flight[i % depth])
        if numbered and not sender:
            intact &= bool(np.all(views[i] == i % 251))

    comm.Barrier()
    start = MPI.Wtime()
    for i, view in enumerate(views):
        if i >= depth:
            finish(i - depth)
        if numbered and sender:
            view.fill(i % 251)
        in_flight[i % depth] = [post(piece, 1 - comm.rank, tag=7) for piece in np.array_split(view, pieces)]
    for i in range(max(0, len(views) - depth), len(views)):
        finish(i)
    seconds = MPI.Wtime() - start
    return comm.allreduce(seconds, op=MPI.MAX), comm.allreduce(intact, op=MPI.LAND)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk", type=parse_bytes, default=4 << 20)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--pieces", type=int, default=1)
    parser.add_argument("--bytes", type=parse_bytes, default=64 << 20)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--patterns", default="all,stream,slots")
    args = parser.parse_args(argv)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    problems = []
    if comm.size != 2:
        problems.append(f"needs exactly 2 ranks, got {comm.size}; run it under mpirun -np 2")
    if args.bytes % args.chunk:
        problems.append(f"--bytes {args.bytes} is not a multiple of --chunk {args.chunk}")
    if min(args.slots, args.pieces, args.reps) < 1 or args.pieces > args.chunk:
        problems.append("--slots, --pieces and --reps must be at least 1, and --pieces at most --chunk")
    unknown = set(args.patterns.split(",")) - {"all", "stream", "slots"}
    if unknown:
        problems.append(f"unknown pattern(s) {', '.join(sorted(unknown))}; choose all, stream or slots")
    if problems:
        if comm.rank == 0:
            print("mpi_window: " + "; ".join(problems), file=sys.stderr)
        return 2
    for pattern in args.patterns.split(","):
        views = chunk_views(pattern, args.chunk, args.slots, args.bytes)
        run(comm, pattern, views, args.slots, args.pieces)  # warm-up: connections made
        rates = [args.bytes / run(comm, pattern, views, args.slots, args.pieces)[0] / 1e9 for _ in range(args.reps)]
        intact = run(comm, pattern, views, args.slots, args.pieces, numbered=True)[1]
        if comm.rank == 0:
            depth = "" if pattern == "all" else f" depth {args.slots}"
            print(
                f"{pattern}{depth} chunk {args.chunk} x{args.pieces} bytes {args.bytes}: median "
                f"{statistics.median(rates):.2f} GB/s (min {min(rates):.2f}, max {max(rates):.2f}, "
                f"{args.reps} reps); data {'intact' if intact else 'CORRUPT'}",
                flush=True,
            )
        if not intact:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
