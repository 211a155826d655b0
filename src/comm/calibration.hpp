// Measuring a device's staging copies and the staged pipeline, the way
// the staged engine uses them (docs/METHODS.md, "Copy calibration"). The
// choices made from these figures (the smallest fast copy per direction,
// the chunk and the slots) are python/fpgacomm/runtime/calibration.py's.
#pragma once
#include <cstdint>
#include <vector>

#include "cl/device.hpp"
#include "comm/communicator.hpp"
#include "comm/transfer.hpp"

namespace fpgacomm {

// Median seconds of one size: this rank's copy of `bytes` from a pinned
// host buffer to its device and back.
struct CopySample {
  std::uint64_t bytes = 0;
  double to_device = 0, to_host = 0;
};

// Collective over `comm`. The ranks take turns, in rank order, as the two
// ends of a ping-pong do: in its turn a rank writes `bytes` to its device
// and reads them back, each copy enqueued, flushed and waited for as the
// staged engine does, so a device shared by several ranks shows what a
// copy costs after another process used it. A rank with `copies` false
// takes its turns without copying (it stages nothing in the run being
// calibrated) and gets zero copy times.
std::vector<CopySample> measure_copies(const Communicator& comm, Device& device,
                                       const std::vector<std::uint64_t>& sizes, int repetitions, bool copies);

// Collective: the median seconds the staged engine takes to move a window
// of `messages` messages of `bytes` (posted at once, as osu bw's window)
// from rank 0 to rank 1 with each of `candidates` (chunk and slots; path
// staged), the candidates taking turns within every repetition so that
// drift does not favour one; the same figures on every rank. Each of the
// two ranks moves device memory where it `stages`, else host memory
// (as in H-D); other ranks only wait.
std::vector<double> measure_pipeline(const Communicator& comm, Device& device, std::uint64_t bytes, int messages,
                                     const std::vector<TransferOptions>& candidates, int repetitions, bool stages);

}  // namespace fpgacomm
