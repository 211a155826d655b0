// The host's copy rate with `threads` threads copying at once, each its own
// block (calibrate run's host_copy family, docs/PREDICTION.md), and the rate
// at which they pass blocks on from core to core (its host_pass family). Threads of
// C++, not of Python: a NumPy copy of a block that stays in the caches takes
// a few microseconds, and Python threads then queue for the interpreter
// lock instead of copying (64 of them moved 6 GB/s with 64 KiB blocks where
// one moved 20).
#pragma once
#include <cstdint>

namespace fpgacomm {

// Bytes per second copied by `threads` threads together, each copying a
// `block` of its own (allocated and first touched by that thread) into
// another for `seconds`. Throws std::runtime_error where a copy did not
// arrive intact.
double host_copy_rate(int threads, std::uint64_t block, double seconds);

// Bytes per second that `threads` threads in a chain pass on together, as a
// ring gather forwards: in each round every thread but the first copies the
// block its left neighbour wrote in the round before (from that core's
// caches) into its own, and the first writes a new one (its source, stamped
// with the round); all wait for each other between rounds. So the copies
// cross cores, where host_copy_rate's stay in each core's own. Throws
// std::runtime_error where a block did not arrive with its round's stamp.
double host_pass_rate(int threads, std::uint64_t block, double seconds);

}  // namespace fpgacomm
