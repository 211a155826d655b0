// Message sizes as users type them: bytes with binary K/M/G suffixes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fpgacomm {

// "4096", "4K", "4k", "1M", "2G" -> bytes (K = 1024). Throws UsageError.
std::uint64_t parse_size(const std::string& text);

struct SizeRange {
  std::uint64_t min;
  std::uint64_t max;
};

// OMB's -m: "MAX", "MIN:MAX" or "MIN:"; the missing bound comes from
// `defaults`. Throws UsageError for min > max, min == 0 or junk.
SizeRange parse_size_range(const std::string& spec, SizeRange defaults);

// min, 2*min, 4*min, ... up to max inclusive, as OMB sweeps.
std::vector<std::uint64_t> doubling_sizes(SizeRange range);

}  // namespace fpgacomm
