#include "core/sizes.hpp"

#include <cctype>
#include <limits>

#include "core/error.hpp"

namespace fpgacomm {

std::uint64_t parse_size(const std::string& text) {
  const std::string hint = "expected bytes with an optional K, M or G suffix (binary), e.g. 4096, 64K, 4M";
  if (text.empty()) throw UsageError("empty message size: " + hint);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) throw UsageError("message size '" + text + "' is not a number: " + hint);
  unsigned shift = 0;
  if (digits < text.size()) {
    if (digits + 1 != text.size()) throw UsageError("message size '" + text + "' has trailing junk: " + hint);
    switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      default:
        throw UsageError("message size '" + text + "' has an unknown suffix: " + hint);
    }
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw UsageError("message size '" + text + "' is too large");
    value = value * 10 + digit;
  }
  if (shift && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    throw UsageError("message size '" + text + "' is too large");
  return value << shift;
}

SizeRange parse_size_range(const std::string& spec, SizeRange defaults) {
  SizeRange range = defaults;
  const auto colon = spec.find(':');
  if (colon == std::string::npos) {
    range.max = parse_size(spec);
  } else {
    const std::string low = spec.substr(0, colon), high = spec.substr(colon + 1);
    if (low.empty() && high.empty()) throw UsageError("message size range ':' names no bound; use [MIN:]MAX");
    if (!low.empty()) range.min = parse_size(low);
    if (!high.empty()) range.max = parse_size(high);
  }
  if (range.min == 0)
    throw UsageError("message size range '" + spec + "' starts at 0 bytes; the smallest message is 1 byte");
  if (range.min > range.max)
    throw UsageError("message size range '" + spec + "' has MIN " + std::to_string(range.min) + " above MAX " +
                     std::to_string(range.max) + "; use [MIN:]MAX with MIN <= MAX");
  return range;
}

std::vector<std::uint64_t> doubling_sizes(SizeRange range) {
  if (range.min == 0 || range.min > range.max)
    throw UsageError("invalid size range " + std::to_string(range.min) + ":" + std::to_string(range.max));
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = range.min; size <= range.max; size *= 2) {
    sizes.push_back(size);
    if (size > range.max / 2) break;  // the next doubling would pass max (or overflow)
  }
  return sizes;
}

}  // namespace fpgacomm
