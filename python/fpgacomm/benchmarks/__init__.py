"""Benchmarks on real MPI ranks: each is a function taking a communicator
(COMM_WORLD by default) and keyword options and returning a Result; the timed
loops run in the C++ core."""
