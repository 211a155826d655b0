// The OSU blocking collectives (OMB's method, docs/METHODS.md "Collectives"):
// each iteration times one MPI collective on every rank, with the barrier
// outside the timed region. Buffers of device kinds are staged through host
// memory and the staging part is timed apart. Raw timings out; reporting is
// Python's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/iterations.hpp"
#include "bench/size_hook.hpp"
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"
#include "comm/datatype.hpp"

namespace fpgacomm {

struct CollectiveOptions {
  std::string op = "allreduce";  // one of collective_ops() (bench/collective_table.hpp)
  MemKind kind = MemKind::Host;  // every buffer of every rank
  // OMB's sizes: bytes each rank contributes (gather, scatter, allgather,
  // alltoall: per block; bcast: the message; reductions: the vector).
  std::vector<std::uint64_t> sizes;
  IterationCounts counts;
  Datatype datatype = Datatype::Char;  // OMB's -T; sizes smaller than one element are skipped
  // The root of gather, scatter, bcast and reduce: rank 0 unless given;
  // the other collectives refuse one.
  std::optional<int> root;
  bool validation = false;  // -c: check every result, outside the timed region
  // -u: with validation, untimed calls (each after a barrier) before each
  // timed one (OMB's warmup_validation; at most 10).
  int validation_warmup = 0;
  int bank = 0;

  // Throws UsageError naming the first parameter no run can take, and its
  // fix; what depends on the ranks is checked when the run starts.
  void validate() const;
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
  std::optional<int> root;  // the root used; none for a collective without one
  std::string route;        // how every rank's buffers reach MPI: direct or staged
};

// Collective over `comm`; every rank gets the same CollectiveRun, and calls
// on_size (when set) after each size with its timing.
CollectiveRun run_collective(const Communicator& comm, DeviceOps* device, const CollectiveOptions& options,
                             const SizeHook<CollectiveTiming>& on_size = {});

}  // namespace fpgacomm
