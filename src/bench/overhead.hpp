// LogGP's send and receive overheads measured directly (Kielmann, Bal and
// Verstoep 2000; Culler et al.'s LogP microbenchmarks): the time a rank's
// CPU spends inside the MPI calls that start a send, and inside the calls
// that take a message which has already arrived. A ping-pong cannot tell
// these from the network's latency L (docs/METHODS.md, "Models").
// Host buffers, two ranks; raw timings out, reporting is Python's.
#pragma once
#include <cstdint>
#include <vector>

#include "bench/iterations.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

struct OverheadTiming {
  std::uint64_t size = 0;
  int iterations = 0;
  std::vector<double> send;     // per timed iteration, rank 0: MPI_Isend's duration (s)
  std::vector<double> receive;  // per timed iteration, rank 1: MPI_Irecv + MPI_Wait's duration (s)
};

// Collective over `comm` (exactly 2 ranks); both ranks get the same timings.
std::vector<OverheadTiming> run_overhead(const Communicator& comm, const std::vector<std::uint64_t>& sizes,
                                         const IterationCounts& counts);

}  // namespace fpgacomm
