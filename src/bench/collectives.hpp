// The OSU blocking collectives (OMB's method, docs/METHODS.md "Collectives"):
// each iteration times one MPI collective on every rank, with the barrier
// outside the timed region. Buffers of device kinds are staged through host
// memory and the staging part is timed apart. Raw timings out; reporting is
// Python's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/iterations.hpp"
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"
#include "comm/datatype.hpp"

namespace fpgacomm {

struct CollectiveOptions {
  // gather | scatter | allgather | alltoall | bcast | reduce | allreduce | reduce_scatter | barrier
  std::string op = "allreduce";
  MemKind kind = MemKind::Host;  // every buffer of every rank
  // OMB's sizes: bytes each rank contributes (gather, scatter, allgather,
  // alltoall: per block; bcast: the message; reductions: the vector).
  std::vector<std::uint64_t> sizes;
  IterationCounts counts;
  Datatype datatype = Datatype::Char;  // OMB's -T; sizes smaller than one element are skipped
  int root = 0;
  bool validate = false;
  int bank = 0;
};

struct CollectiveTiming {
  std::uint64_t size = 0;
  int iterations = 0;
  // Per timed iteration, the mean over ranks (OMB's omb_get_stats), s.
  std::vector<double> samples;
  // Per rank, the mean over iterations, s: OMB's avg, min and max are the
  // mean, min and max of these.
  std::vector<double> rank_means;
  // The device<->host staging part of one iteration, mean over ranks and iterations, s.
  double staging = 0;
  std::uint64_t errors = 0;  // bytes that failed validation, summed over ranks
};

struct CollectiveRun {
  // The sizes holding at least one element; stops after the first size that failed validation.
  std::vector<CollectiveTiming> sizes;
};

// Collective over `comm`; every rank gets the same CollectiveRun.
CollectiveRun run_collective(const Communicator& comm, Device* device, const CollectiveOptions& options);

}  // namespace fpgacomm
