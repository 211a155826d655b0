"""Where measurements run: MPI started at the thread level asked for (mpi),
OpenCL devices opened per rank (devices), and the record of both that every
Result carries (environment)."""
