// fpgacomm's osu bw loop (run_pt2pt, host buffers) in a plain C++ process,
// printed as OMB's osu_bw prints: beside OMB's osu_bw and `fpgacomm osu bw
// H H` it tells whether a difference between the two lies in the loop or
// in the Python process around it. A probe for bench/RESULTS.md, not part
// of the product. Built against the core library of a setup.sh build:
//   mpicxx -O2 -std=c++17 -Isrc -DCL_TARGET_OPENCL_VERSION=300 -DOMPI_SKIP_MPICXX=1 \
//       bench/pt2pt_native.cpp build/*/libfpgacomm_core.a -lOpenCL -lpthread -o pt2pt_native
//   mpirun -np 2 --bind-to core ./pt2pt_native 1 64
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "bench/pt2pt.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // MPI_THREAD_SINGLE, as OMB and fpgacomm's default
  fpgacomm::Pt2ptOptions options;
  options.test = "bw";
  options.counts = {100, 10, 20, 2};  // OMB's osu_bw: BW_LOOP_SMALL, BW_SKIP_SMALL, and the large ones
  const std::uint64_t smallest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const std::uint64_t largest = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64;
  for (std::uint64_t size = smallest; size <= largest; size *= 2) options.sizes.push_back(size);
  fpgacomm::Communicator comm(MPI_COMM_WORLD);
  const fpgacomm::Pt2ptRun run = fpgacomm::run_pt2pt(comm, nullptr, options);
  if (comm.rank() == 0) {
    std::printf("# OSU MPI Bandwidth Test v0.1.0 (fpgacomm's loop, native)\n# Size      Bandwidth (MB/s)\n");
    for (const auto& row : run.sizes) std::printf("%-10llu%18.2f\n", (unsigned long long)row.size, row.value / 1e6);
  }
  MPI_Finalize();
  return 0;
}
