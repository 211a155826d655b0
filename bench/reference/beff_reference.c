/* A plain-C MPI reference for fpgacomm's b_eff --comm-type cpu: the same
 * ring exchange (receive from both neighbours, send to both, wait for all
 * four) on page-aligned host buffers, with nothing else around the MPI
 * calls. bench/beff.py loads it into the same ranks as fpgacomm, so both
 * run at the MPI thread level fpgacomm asked for. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char* page_aligned(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), bytes ? bytes : 1) != 0) return NULL;
  memset(p, 1, bytes);
  return p;
}

/* This rank's best time in seconds for `loop_length` exchanges, over
 * `repetitions` measurements each after a barrier; -1 on error. */
double reference_beff(MPI_Fint fcomm, size_t size, long loop_length, int repetitions, int left, int right) {
  MPI_Comm comm = MPI_Comm_f2c(fcomm);
  char *to_right = page_aligned(size), *to_left = page_aligned(size);
  char *from_left = page_aligned(size), *from_right = page_aligned(size);
  double best = -1;
  MPI_Request requests[4];
  if (!to_right || !to_left || !from_left || !from_right) goto out;
  for (int r = 0; r < repetitions; ++r) {
    if (MPI_Barrier(comm)) goto out;
    double start = MPI_Wtime();
    for (long i = 0; i < loop_length; ++i) {
      if (MPI_Irecv(from_left, (int)size, MPI_CHAR, left, 200, comm, &requests[0]) ||
          MPI_Irecv(from_right, (int)size, MPI_CHAR, right, 201, comm, &requests[1]) ||
          MPI_Isend(to_right, (int)size, MPI_CHAR, right, 200, comm, &requests[2]) ||
          MPI_Isend(to_left, (int)size, MPI_CHAR, left, 201, comm, &requests[3]) ||
          MPI_Waitall(4, requests, MPI_STATUSES_IGNORE))
        goto out;
    }
    double time = MPI_Wtime() - start;
    if (best < 0 || time < best) best = time;
  }
out:
  free(to_right);
  free(to_left);
  free(from_left);
  free(from_right);
  return best;
}
