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
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

struct OneSidedOptions {
  std::string test = "put_latency";  // put_latency | get_latency | put_bw | get_bw | put_bibw
  MemKind kind = MemKind::Host;      // the local (origin) buffer of both ranks
  std::vector<std::uint64_t> sizes;
  IterationCounts counts;
  int window = 64;  // operations per synchronisation in the bandwidth tests (OMB's -W)
  // OMB's -w: create | allocate | dynamic (MPI_Win_create, MPI_Win_allocate,
  // MPI_Win_create_dynamic with the memory attached).
  std::string window_creation = "allocate";
  // OMB's -s: lock | flush | flush_local | lock_all | pscw | fence; put_bibw
  // takes pscw or fence only.
  std::string sync = "flush";
  bool validate = false;
  int bank = 0;
};

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
};

// Collective over `comm` (exactly 2 ranks); both ranks get the same OneSidedRun.
OneSidedRun run_onesided(const Communicator& comm, Device* device, const OneSidedOptions& options);

}  // namespace fpgacomm
