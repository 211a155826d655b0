#include "bench/ring.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace fpgacomm {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int> ring_order(int ranks, bool random, std::uint64_t seed) {
  if (ranks < 1) throw UsageError("a ring needs at least one rank, got " + std::to_string(ranks));
  std::vector<int> order(static_cast<std::size_t>(ranks));
  std::iota(order.begin(), order.end(), 0);
  if (!random) return order;
  std::uint64_t state = seed;
  for (int i = ranks - 1; i > 0; --i) {
    // Multiply-shift instead of modulo: unbiased enough for ring positions
    // and identical everywhere.
    const auto j = static_cast<int>((static_cast<unsigned __int128>(splitmix64(state)) * (i + 1)) >> 64);
    std::swap(order[i], order[j]);
  }
  return order;
}

RingNeighbours ring_neighbours(const std::vector<int>& order, int rank) {
  const auto it = std::find(order.begin(), order.end(), rank);
  if (it == order.end())
    throw UsageError("rank " + std::to_string(rank) + " is not in the ring of " + std::to_string(order.size()) +
                     " ranks");
  const int n = static_cast<int>(order.size());
  const int position = static_cast<int>(it - order.begin());
  return {position, order[(position + n - 1) % n], order[(position + 1) % n]};
}

}  // namespace fpgacomm
