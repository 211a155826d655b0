// How many timed and warm-up iterations a size gets: OMB switches to its
// "large" counts for messages above a threshold (LARGE_MESSAGE_SIZE, 8192 bytes).
#pragma once
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace fpgacomm {

// OSU Micro-Benchmarks' LARGE_MESSAGE_SIZE: above it the large counts hold.
// Python reads it from the core (fpgacomm.params.LARGE_MESSAGE).
constexpr std::uint64_t kLargeMessage = 8192;

// OMB's -u: untimed repetitions of a validated iteration's operation before
// the timed one: OMB's default (VALIDATION_SKIP_DEFAULT), which the command
// line's -u takes, and the most it takes (VALIDATION_SKIP_MAX). The options
// structs and the Python functions default to none: a validated run then
// costs the data check alone (the suite validates every test).
constexpr int kValidationWarmup = 5, kMaxValidationWarmup = 10;

// Throws UsageError for a -u outside 0..kMaxValidationWarmup.
inline void validate_validation_warmup(int repetitions) {
  if (repetitions < 0 || repetitions > kMaxValidationWarmup)
    throw UsageError("validation warm-up -u must be 0 to " + std::to_string(kMaxValidationWarmup) +
                     " (as OSU "
                     "Micro-Benchmarks), got " +
                     std::to_string(repetitions));
}

struct IterationCounts {
  int iterations = 1000, warmup = 100;
  int iterations_large = 100, warmup_large = 10;
  std::uint64_t large_threshold = kLargeMessage;

  bool large(std::uint64_t size) const { return size > large_threshold; }
  int timed(std::uint64_t size) const { return large(size) ? iterations_large : iterations; }
  int untimed(std::uint64_t size) const { return large(size) ? warmup_large : warmup; }

  // Throws UsageError naming the count that cannot run and its flag.
  void validate() const {
    if (iterations < 1 || iterations_large < 1) throw UsageError("iterations -i must be at least 1");
    if (warmup < 0 || warmup_large < 0) throw UsageError("warm-up -x must not be negative");
  }
};

}  // namespace fpgacomm
