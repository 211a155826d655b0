// Measuring a device's staging copies and the wire between ranks, the way
// the staged engine uses them (docs/METHODS.md, "Copy calibration"). The
// choices made from these figures (the smallest fast copy per direction,
// the chunk and the slots) are python/fpgacomm/runtime/calibration.py's.
#pragma once
#include <cstdint>
#include <vector>

#include "cl/device.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

// Median seconds of one size: this rank's copy of `bytes` from a pinned
// host buffer to its device and back, and MPI's one-way time for `bytes`
// between pinned buffers of ranks 0 and 1 (0 where not measured).
struct CopySample {
  std::uint64_t bytes = 0;
  double to_device = 0, to_host = 0, wire = 0;
};

// Collective over `comm`. The ranks take turns, in rank order, as the two
// ends of a ping-pong do: in its turn a rank writes `bytes` to its device
// and reads them back, each copy enqueued, flushed and waited for as the
// staged engine does, so a device shared by several ranks shows what a
// copy costs after another process used it. With `wire`, ranks 0 and 1
// then ping-pong `bytes` over MPI between pinned buffers. A rank with
// `copies` false takes its turns without copying (it stages nothing in the
// run being calibrated) and gets zero copy times.
std::vector<CopySample> measure_copies(const Communicator& comm, Device& device,
                                       const std::vector<std::uint64_t>& sizes, int repetitions, bool wire,
                                       bool copies);

// Collective: the bytes per second MPI moves from rank 0 to rank 1 when
// `in_flight` messages of `bytes` are posted at once from as many pinned
// buffers (the staged pipeline's wire with that many slots), median of
// `repetitions`; one figure per entry of in_flight, the same on every rank.
std::vector<double> measure_wire_window(const Communicator& comm, Device& device, std::uint64_t bytes,
                                        const std::vector<int>& in_flight, int repetitions);

}  // namespace fpgacomm
