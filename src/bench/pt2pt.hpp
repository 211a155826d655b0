// The OSU point-to-point loops (OMB's method, docs/METHODS.md): ping-pong
// latency, windowed bandwidth and bidirectional bandwidth, and their
// multi-pair forms. They return raw timings; reporting is Python's.
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
#include "comm/transfer.hpp"

namespace fpgacomm {

struct Pt2ptOptions {
  std::string test = "latency";       // one of pt2pt_tests()
  MemKind send_kind = MemKind::Host;  // the buffers of rank 0 (of the first half in multi-pair tests)
  MemKind recv_kind = MemKind::Host;  // the buffers of rank 1 (of the second half)
  std::vector<std::uint64_t> sizes;
  IterationCounts counts{10000, 100, 1000, 10};  // OMB's latency counts
  // OMB's -T: a message moves its whole elements; sizes smaller than one are skipped.
  Datatype datatype = Datatype::Char;
  int window = 64;
  bool validation = false;  // -c: check every received message, outside the timed region
  // -u: with validation, untimed repetitions of each iteration's operation
  // before the timed one (OMB's warmup_validation; at most 10).
  int validation_warmup = 0;
  // mbw_mr's -p: the pairs taking part, rank i with rank i+pairs, the ranks
  // above 2*pairs waiting; none: every rank, N/2 pairs.
  std::optional<int> pairs;
  // mbw_mr's -V: every size at each window of varied_windows() in turn, not at `window`.
  bool vary_window = false;
  // mbw_mr's -R: whether its text shows the message rate; the loop ignores
  // it, and validate() refuses turning it off for the other tests.
  bool print_rate = true;
  bool multiple_buffers = false;  // -b multiple: fresh buffers per size, one per window slot
  bool touch = false;             // placeholder kernel on device buffers before each measured operation
  int bank = 0;                   // memory bank for B and P
  bool timeline = false;          // with staging: record the last timed iteration's chunks
  TransferOptions transfer;

  // Throws UsageError naming the first parameter no run can take, and its
  // fix; what depends on the ranks is checked when the run starts.
  void validate() const;
};

// latency, multi_lat, bw, bibw, mbw_mr: the ping-pongs, then the windowed tests.
std::vector<std::string> pt2pt_tests();

// The windows of mbw_mr -V, OMB's WINDOW_SIZES.
std::vector<int> varied_windows();

struct SizeTiming {
  std::uint64_t size = 0;
  int window = 0;  // messages per window of this row; 0 for the ping-pongs
  int iterations = 0;
  // OMB's number: latency in seconds (half a round trip) or bandwidth in B/s,
  // averaged over the timing ranks (the senders).
  double value = 0;
  // Per timed iteration, averaged over the timing ranks: half round trips
  // (s) or window bandwidths (B/s).
  std::vector<double> samples;
  std::uint64_t errors = 0;  // bytes that failed validation, summed over ranks
  // This rank's own staged chunks in the last timed window, when
  // Pt2ptOptions::timeline; the one part of a Pt2ptRun that differs by rank.
  std::vector<ChunkTimes> timeline;
};

struct Pt2ptRun {
  // The sizes holding at least one element (with -V, each at every window
  // in turn); stops after the first size that failed validation.
  std::vector<SizeTiming> sizes;
  int pairs = 1;
  std::string send_route, recv_route;                  // how rank 0's and rank `pairs`' buffers moved
  std::uint64_t chunk_bytes = 0;                       // the pipelining chunk all ranks used
  int slots = 0;                                       // this rank's staging slots per direction
  std::uint64_t fast_to_device = 1, fast_to_host = 1;  // this rank's smallest fast copies
};

// Collective over `comm`; every rank gets the same Pt2ptRun but for its
// timeline, and calls on_size (when set) after each size with its timing.
Pt2ptRun run_pt2pt(const Communicator& comm, DeviceOps* device, const Pt2ptOptions& options,
                   const SizeHook<SizeTiming>& on_size = {});

}  // namespace fpgacomm
