// The b_eff ring: which rank sits where, and whom each rank exchanges with.
// Positions are random by default (HPCC FPGA: "positions in the ring are
// assigned at random") and reproducible from a seed; every N >= 1 works,
// odd N included, and N = 1 is a rank exchanging with itself.
#pragma once
#include <cstdint>
#include <vector>

namespace fpgacomm {

// order[p] is the rank at ring position p. Natural keeps rank order; random
// draws a permutation from `seed` with our own generator (splitmix64 and
// Fisher-Yates), so the same seed gives the same ring on every platform.
std::vector<int> ring_order(int ranks, bool random, std::uint64_t seed);

struct RingNeighbours {
  int position = 0;
  int left = 0;   // the rank before this one in the ring
  int right = 0;  // the rank after it
};

// Where `rank` sits in `order` and its two neighbours (itself when N = 1;
// the same rank on both sides when N = 2).
RingNeighbours ring_neighbours(const std::vector<int>& order, int rank);

}  // namespace fpgacomm
