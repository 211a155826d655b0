// Executes one rank's part of a gather, scatter or allgather schedule
// (python/fpgacomm/schedules.py, the VCSN paper's section 5) on real ranks, with every
// rank's blocks in one buffer of any memory kind (docs/METHODS.md, "Gather
// schedules and real runs"). Each stage posts its receives and sends through the
// staged transfer engine (set-up), waits for them (transfer) and, in
// barrier control, ends in an MPI_Barrier (the VCSN paper's complete process);
// in local control a rank goes on as soon as its own transfers are done.
// The mpi schedule is one MPI_Gatherv / Scatterv / Allgatherv stage on
// host memory, device buffers staged through a pinned mirror.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench/iterations.hpp"
#include "bench/size_hook.hpp"
#include "cl/buffer.hpp"
#include "comm/communicator.hpp"
#include "comm/transfer.hpp"

namespace fpgacomm {

// One message of a stage as this rank sees it: `blocks` consecutive blocks
// from buffer position `first` on, to or from `peer`. Position p holds the
// block of node (p + root) mod n, so the root's own block is at 0.
struct GatherMove {
  int peer = 0;
  std::uint64_t first = 0;
  std::uint64_t blocks = 0;
};

struct GatherStage {
  std::vector<GatherMove> sends, recvs;
};

struct GatherOptions {
  // The stages of this rank (every rank has the same number); empty with
  // mpi_collective set: one stage of MPI_Gatherv, _Scatterv or _Allgatherv.
  std::vector<GatherStage> stages;
  std::string mpi_collective;  // "" | gather | scatter | allgather
  int root = 0;
  std::vector<std::uint64_t> holds;   // positions this rank holds before the first stage
  std::vector<std::uint64_t> checks;  // positions it must hold, intact, after the last
  MemKind kind = MemKind::Device;
  std::vector<std::uint64_t> sizes;  // bytes per node (block size)
  IterationCounts counts;            // timed and warm-up iterations per size
  bool barrier = true;               // control: barrier (true) or local
  bool validation = true;            // check every block after the last stage, outside the timed region
  // Ranks whose buffers share this rank's device: the memory check counts them all.
  int device_sharers = 1;
  // Bare MPI_Barriers timed after the sweep: the reference a stage's own
  // control cost is measured against (bench/gather.py).
  int barrier_reference = 0;
  int bank = 0;
  TransferOptions transfer;

  // Throws UsageError naming the first parameter no run can take, and its
  // fix; what depends on the ranks is checked when the run starts.
  void validate() const;
};

struct GatherTiming {
  std::uint64_t size = 0;
  // [iteration][stage], s: set-up (until the last rank has posted its
  // messages), transfer (then until the last rank's are done) and barrier
  // (the rest of the longest rank's stage); their sum is the stage's time.
  std::vector<std::vector<double>> setup, transfer, barrier;
  // Per iteration, s: the slowest rank's time from the common start to the
  // end of its last stage.
  std::vector<double> totals;
  std::uint64_t errors = 0;  // wrong bytes at the checked positions, summed over ranks
};

struct GatherRun {
  std::vector<GatherTiming> sizes;        // stops after the first size that failed validation
  std::vector<double> barrier_reference;  // s, per bare barrier: the slowest rank's
  std::string route;                      // how this rank's buffer reaches MPI
};

// Collective over `comm`; every rank gets the same GatherRun, and calls
// on_size (when set) after each size with its timing.
GatherRun run_gather(const Communicator& comm, Device* device, const GatherOptions& options,
                     const SizeHook<GatherTiming>& on_size = {});

}  // namespace fpgacomm
