// The OSU one-sided tests on MPI windows (OMB's method, docs/METHODS.md
// "OSU one-sided tests"): PUT and GET latency, PUT and GET bandwidth with
// windows of W operations per synchronisation, each at its own offset, and
// PUT bidirectional bandwidth. The origin's local buffer may be of any
// memory kind (device kinds are staged through host memory, timed apart);
// the window is host memory, made anew for every size as OMB does. Raw
// timings out; reporting is Python's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/iterations.hpp"
#include "bench/size_hook.hpp"
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

struct OneSidedOptions {
  std::string test = "put_latency";  // one of onesided_tests()
  MemKind kind = MemKind::Host;      // the local (origin) buffer of both ranks
  std::vector<std::uint64_t> sizes;
  IterationCounts counts;
  int window = 64;  // operations per synchronisation in the bandwidth tests (OMB's -W)
  // OMB's -w: one of window_creations() (MPI_Win_allocate, MPI_Win_create,
  // MPI_Win_create_dynamic with the memory attached).
  std::string window_creation = "allocate";
  // OMB's -s: one of onesided_test_syncs(test); empty for OMB's default
  // there, the first of them.
  std::string sync;
  bool validation = false;  // -c: check every message, outside the timed region
  int bank = 0;

  std::string sync_or_default() const;
  // Throws UsageError naming the first parameter no run can take, and its
  // fix; what depends on the ranks is checked when the run starts.
  void validate() const;
};

// OMB's one-sided tests; its window creations (-w) and synchronisations
// (-s), each list with OMB's default first; the synchronisations `test`
// takes (put_bibw, where both ranks put at once, active target only).
std::vector<std::string> onesided_tests();
std::vector<std::string> window_creations();
std::vector<std::string> onesided_syncs();
std::vector<std::string> onesided_test_syncs(const std::string& test);

struct OneSidedTiming {
  std::uint64_t size = 0;
  int iterations = 0;
  double value = 0;             // latency (s) or bandwidth (B/s), timed on rank 0
  std::vector<double> samples;  // per timed iteration: latencies (s) or bandwidths (B/s)
  double staging_share = 0;     // the part of rank 0's timed region spent staging device<->host
  std::uint64_t errors = 0;     // bytes that failed validation, summed over ranks
};

struct OneSidedRun {
  std::vector<OneSidedTiming> sizes;  // stops after the first size that failed validation
  std::string sync;                   // the synchronisation run (-s)
  std::string route;                  // how the local buffer reaches MPI: direct or staged
};

// Collective over `comm` (exactly 2 ranks); both ranks get the same
// OneSidedRun, and call on_size (when set) after each size with its timing.
OneSidedRun run_onesided(const Communicator& comm, Device* device, const OneSidedOptions& options,
                         const SizeHook<OneSidedTiming>& on_size = {});

}  // namespace fpgacomm
