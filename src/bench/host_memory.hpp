// Host memory a real run will hold, estimated before anything is allocated
// (docs/METHODS.md, "Host memory of a run"): the buffers of the user's
// sizes, the MPI requests and engine records of every message posted at
// once, and the timings kept per timed iteration. The ranks on one host
// share its memory, so their estimates add up; a run past the limit is
// refused on every rank, rather than killed by the kernel halfway.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/iterations.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

// Measured with Open MPI 4.1 on one host (docs/METHODS.md): a message
// posted to MPI costs about 0.9 KiB beside its data (its request and
// matching entry); a chunk a staging rank keeps in its engine (its step,
// posted to MPI only when a slot holds it) about 130 bytes; a timed
// iteration's sample about 70 bytes on its way from the loop's vectors to
// the Python Result.
constexpr std::uint64_t kBytesPerPostedMessage = 1024;
constexpr std::uint64_t kBytesPerStagedChunk = 128;
constexpr std::uint64_t kBytesPerSample = 80;
// A size's row in one round of several (--rounds): the Python dict of its
// figures and its place in the round's order, about 1 KiB.
constexpr std::uint64_t kBytesPerRoundRow = 1024;
// The default limit: this fraction of the host's MemAvailable.
constexpr double kDefaultHostMemoryShare = 0.75;

// One rank's estimate.
// Doubles, so that no product of the user's numbers (-W times -m) can wrap.
struct HostMemory {
  double buffers = 0;  // data of the user's sizes: host buffers, pinned mirrors, validation copies
  double posted = 0;   // messages (or wire chunks) posted to MPI at once
  double staged = 0;   // chunks a staging rank's engine holds at once
  double samples = 0;  // timed iterations kept, over every size
  double rows = 0;     // rows of the rounds kept, one per size and round

  // A batch of `pieces` wire chunks: a rank that stages holds a record of
  // each and at most 2 * slots on MPI at once; any other posts them all.
  void add_batch(double pieces, bool stages, int slots);
  double bytes() const;
  std::string describe() const;
};

// Timed iterations over `sizes`, as `counts` gives them.
double timed_samples(const IterationCounts& counts, const std::vector<std::uint64_t>& sizes);

// Bytes the ranks of one host may hold together; 0 (the default) means
// kDefaultHostMemoryShare of MemAvailable, read when a run starts.
void set_host_memory_limit(std::uint64_t bytes);
std::uint64_t host_memory_limit();
// /proc/meminfo's MemAvailable in bytes; 0 where it cannot be read.
std::uint64_t available_host_memory();

// Collective over `comm`. Throws UsageError on the ranks of every host
// whose ranks together would hold more than the limit, naming the
// estimate, the limit and `fix` (what to give smaller); run_agreed makes
// the refusal every rank's. Call it before the first rank-dependent check.
void check_host_memory(const Communicator& comm, const HostMemory& mine, const std::string& run,
                       const std::string& fix);

}  // namespace fpgacomm
