#include <cstdint>
#include <vector>

#include "bench/pattern.hpp"
#include "check.hpp"

using namespace fpgacomm;

namespace {

// Pattern bytes first .. first + n - 1, made one byte at a time.
std::vector<std::uint8_t> bytewise(std::uint64_t n, std::uint64_t first, std::uint64_t size, int iteration,
                                   int stream) {
  std::vector<std::uint8_t> bytes(n);
  for (std::uint64_t i = 0; i < n; ++i) bytes[i] = pattern_byte(first + i, size, iteration, stream);
  return bytes;
}

}  // namespace

int main() {
  // Made 8 bytes at a time, the pattern is the one pattern_byte makes, from
  // any first byte (aligned or not) and any length (whole words or not).
  for (std::uint64_t first : {0, 1, 7, 8, 13, 4096}) {
    for (std::uint64_t n : {0, 1, 5, 8, 9, 64, 1000}) {
      std::vector<std::uint8_t> data(n);
      write_pattern(data.data(), n, first, 4096, 3, 2);
      CHECK(data == bytewise(n, first, 4096, 3, 2));
      CHECK(pattern_errors(data.data(), n, first, 4096, 3, 2) == 0);
    }
  }

  // Every wrong byte counts once, inside a word or in the ends around them.
  std::vector<std::uint8_t> data(1000);
  write_pattern(data.data(), data.size(), 3, 1 << 20, 0, 0);
  for (std::uint64_t at : {0, 4, 5, 12, 13, 500, 999}) data[at] ^= 0x5A;
  CHECK(pattern_errors(data.data(), data.size(), 3, 1 << 20, 0, 0) == 7);

  // Another iteration, stream or size, or the right bytes one byte or one
  // word away: nearly every byte is wrong (a byte matches by chance, 1 in 256).
  write_pattern(data.data(), data.size(), 0, 4096, 5, 1);
  CHECK(pattern_errors(data.data(), data.size(), 0, 4096, 6, 1) > 950);
  CHECK(pattern_errors(data.data(), data.size(), 0, 4096, 5, 2) > 950);
  CHECK(pattern_errors(data.data(), data.size(), 0, 8192, 5, 1) > 950);
  CHECK(pattern_errors(data.data(), data.size(), 1, 4096, 5, 1) > 950);
  CHECK(pattern_errors(data.data(), data.size(), 8, 4096, 5, 1) > 950);
  return check::failures;
}
