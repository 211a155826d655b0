#pragma once
// The validation pattern every benchmark writes into what it sends and
// checks in what it receives: byte `index` of a message of `size` bytes sent
// in `iteration` on `stream` (a window slot, a direction, a sending rank).
// A chunk landing at the wrong offset, or data from another iteration,
// stream or size, does not match; so a block that was not moved this
// iteration fails without the receive buffer being cleared first.
//
// Made 8 bytes at a time and inline, so that filling and checking run at
// memory speed: made a byte at a time, a 32-rank gather's untimed check of
// 31 blocks of 16 MiB per iteration took most of a minute.

#include <cstdint>
#include <cstring>

namespace fpgacomm {

// Bytes 8w .. 8w+7 of the pattern, byte 8w + k in bits 8k .. 8k+7 (a
// splitmix64 finalizer of the word's index mixed with the message's
// identity).
inline std::uint64_t pattern_word(std::uint64_t word, std::uint64_t size, int iteration, int stream) {
  std::uint64_t x = word * 0x9E3779B97F4A7C15ull ^
                    (size + (static_cast<std::uint64_t>(iteration) << 24) + (static_cast<std::uint64_t>(stream) << 48));
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

inline std::uint8_t pattern_byte(std::uint64_t index, std::uint64_t size, int iteration, int stream) {
  return static_cast<std::uint8_t>(pattern_word(index >> 3, size, iteration, stream) >> (8 * (index & 7)));
}

// Writes pattern bytes first .. first + n - 1 to data.
inline void write_pattern(std::uint8_t* data, std::uint64_t n, std::uint64_t first, std::uint64_t size, int iteration,
                          int stream) {
  std::uint64_t i = 0;
  for (; i < n && (first + i) % 8 != 0; ++i) data[i] = pattern_byte(first + i, size, iteration, stream);
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t word = pattern_word((first + i) >> 3, size, iteration, stream);
    for (int k = 0; k < 8; ++k) data[i + k] = static_cast<std::uint8_t>(word >> (8 * k));  // one store, compiled
  }
  for (; i < n; ++i) data[i] = pattern_byte(first + i, size, iteration, stream);
}

// How many of data's n bytes differ from pattern bytes first .. first + n - 1.
inline std::uint64_t pattern_errors(const std::uint8_t* data, std::uint64_t n, std::uint64_t first, std::uint64_t size,
                                    int iteration, int stream) {
  std::uint64_t errors = 0, i = 0;
  for (; i < n && (first + i) % 8 != 0; ++i) errors += data[i] != pattern_byte(first + i, size, iteration, stream);
  std::uint8_t expected[8];
  for (; i + 8 <= n; i += 8) {
    write_pattern(expected, 8, first + i, size, iteration, stream);
    if (std::memcmp(data + i, expected, 8) != 0)
      for (int k = 0; k < 8; ++k) errors += data[i + k] != expected[k];
  }
  for (; i < n; ++i) errors += data[i] != pattern_byte(first + i, size, iteration, stream);
  return errors;
}

}  // namespace fpgacomm
