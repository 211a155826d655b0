/* A plain-C MPI reference for fpgacomm's point-to-point numbers: OMB's
 * ping-pong latency and windowed bandwidth on page-aligned host buffers,
 * with nothing else around the MPI calls. bench/pt2pt.py loads it into the
 * same ranks as fpgacomm (so both run at the MPI thread level fpgacomm
 * asked for) and prints the ratios. Communicators arrive as Fortran handles
 * (mpi4py's py2f), which is portable across MPI libraries. */
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
