/* A plain-C MPI reference for fpgacomm's numbers: OMB's ping-pong latency,
 * windowed bandwidth, collectives and put latency on page-aligned host
 * buffers, with nothing else around the MPI calls. bench/pt2pt.py and
 * bench/collectives.py load it into the same ranks as fpgacomm (so both run
 * at the MPI thread level fpgacomm asked for) and print the ratios.
 * Communicators arrive as Fortran handles (mpi4py's py2f), which is
 * portable across MPI libraries. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char* page_aligned(size_t bytes) {
  void* p = NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (posix_memalign(&p, page, bytes ? bytes : 1) != 0) return NULL;
  memset(p, 1, bytes);
  return p;
}

/* Average half round trip in seconds on rank 0; -1 on error. As OMB 7.x,
 * each iteration is timed on its own and the times are summed:
 * total / 2 / iterations. */
double reference_latency(MPI_Fint fcomm, size_t size, int iterations, int warmup) {
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  int rank;
  char *s = page_aligned(size), *r = page_aligned(size);
  double sum = 0, total = -1;
  if (!s || !r) goto out;
  MPI_Comm_rank(comm, &rank);
  MPI_Barrier(comm);
  for (int i = 0; i < warmup + iterations; ++i) {
    double start = MPI_Wtime();
    if (rank == 0) {
      if (MPI_Send(s, (int)size, MPI_CHAR, 1, 1, comm) || MPI_Recv(r, (int)size, MPI_CHAR, 1, 1, comm, MPI_STATUS_IGNORE)) goto out;
    } else {
      if (MPI_Recv(r, (int)size, MPI_CHAR, 0, 1, comm, MPI_STATUS_IGNORE) || MPI_Send(s, (int)size, MPI_CHAR, 0, 1, comm)) goto out;
    }
    if (i >= warmup) sum += MPI_Wtime() - start;
  }
  total = sum / (2.0 * iterations);
out:
  free(s);
  free(r);
  return total;
}

/* Bytes per second on rank 0 (OMB: size * window * iterations / time),
 * each window closed by a 1-byte acknowledgement and timed on its own; -1 on error. */
double reference_bandwidth(MPI_Fint fcomm, size_t size, int window, int iterations, int warmup) {
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  int rank;
  char* buffer = page_aligned(size);
  char ack = 0;
  MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)window);
  double sum = 0, result = -1;
  if (!buffer || !requests) goto out;
  MPI_Comm_rank(comm, &rank);
  MPI_Barrier(comm);
  for (int i = 0; i < warmup + iterations; ++i) {
    double start = MPI_Wtime();
    for (int j = 0; j < window; ++j) {
      int status = rank == 0 ? MPI_Isend(buffer, (int)size, MPI_CHAR, 1, 100, comm, &requests[j])
                             : MPI_Irecv(buffer, (int)size, MPI_CHAR, 0, 100, comm, &requests[j]);
      if (status) goto out;
    }
    if (MPI_Waitall(window, requests, MPI_STATUSES_IGNORE)) goto out;
    if (rank == 0 ? MPI_Recv(&ack, 1, MPI_CHAR, 1, 101, comm, MPI_STATUS_IGNORE)
                  : MPI_Send(&ack, 1, MPI_CHAR, 0, 101, comm)) goto out;
    if (i >= warmup) sum += MPI_Wtime() - start;
  }
  result = (double)size * window * iterations / sum;
out:
  free(buffer);
  free(requests);
  return result;
}

enum { ALLREDUCE = 0, GATHER = 1, BCAST = 2 };

/* OMB's collective method: each iteration timed on its own, a barrier after
 * it outside the timed region; the mean over ranks of each rank's mean, in
 * seconds, on every rank; -1 on error. `size` is OMB's per-rank size; the
 * allreduce sums floats, gather and bcast move chars, root 0. */
double reference_collective(MPI_Fint fcomm, int op, size_t size, int iterations, int warmup) {
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  int ranks;
  double sum = 0, mean = 0, result = -1;
  MPI_Comm_size(comm, &ranks);
  char *s = page_aligned(size), *r = page_aligned(size * (size_t)ranks);
  if (!s || !r) goto out;
  MPI_Barrier(comm);
  for (int i = 0; i < warmup + iterations; ++i) {
    double start = MPI_Wtime();
    int status = op == ALLREDUCE ? MPI_Allreduce(s, r, (int)(size / sizeof(float)), MPI_FLOAT, MPI_SUM, comm)
                 : op == GATHER  ? MPI_Gather(s, (int)size, MPI_CHAR, r, (int)size, MPI_CHAR, 0, comm)
                                 : MPI_Bcast(s, (int)size, MPI_CHAR, 0, comm);
    double stop = MPI_Wtime();
    if (status || MPI_Barrier(comm)) goto out;
    if (i >= warmup) sum += stop - start;
  }
  mean = sum / iterations;
  if (MPI_Allreduce(&mean, &result, 1, MPI_DOUBLE, MPI_SUM, comm)) { result = -1; goto out; }
  result /= ranks;
out:
  free(s);
  free(r);
  return result;
}

/* OMB's osu_put_latency with MPI_Win_allocate and MPI_Win_flush: rank 0
 * locks rank 1's window once, then times put + flush per iteration. Mean
 * seconds on rank 0, 0 on rank 1; -1 on error. */
double reference_put_latency(MPI_Fint fcomm, size_t size, int iterations, int warmup) {
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  int rank;
  char* window_memory = NULL;
  MPI_Win window;
  char* s = page_aligned(size);
  double sum = 0, result = -1;
  MPI_Comm_rank(comm, &rank);
  if (!s || MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL, comm, &window_memory, &window)) goto out;
  MPI_Barrier(comm);
  if (rank == 0) {
    if (MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, window)) goto free_window;
    for (int i = 0; i < warmup + iterations; ++i) {
      double start = MPI_Wtime();
      if (MPI_Put(s, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, window) || MPI_Win_flush(1, window))
        goto free_window;
      if (i >= warmup) sum += MPI_Wtime() - start;
    }
    if (MPI_Win_unlock(1, window)) goto free_window;
    result = sum / iterations;
  } else {
    result = 0;
  }
  MPI_Barrier(comm);
free_window:
  MPI_Win_free(&window);
out:
  free(s);
  return result;
}
