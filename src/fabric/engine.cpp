#include "fabric/engine.hpp"

#include <chrono>
#include <random>
#include <string>

#include "core/error.hpp"

namespace fpgacomm::fabric {

void Engine::reject_past(double time) const {
  throw Error("fabric engine: an event was scheduled at " + std::to_string(time) + " s, before the current time " +
              std::to_string(now_) + " s");
}

void Engine::restart() {
  if (!heap_.empty()) throw Error("fabric engine: restarted with " + std::to_string(heap_.size()) + " events pending");
  now_ = 0.0;
}

double heap_baseline_rate(std::uint64_t operations, std::size_t pending) {
  struct Item {
    double time;
    std::uint64_t seq;
    std::uint64_t tag;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.time > b.time || (a.time == b.time && a.seq > b.seq);
    }
  };
  if (pending < 1) pending = 1;
  std::mt19937_64 rng(1);
  std::exponential_distribution<double> gap(1.0);
  std::vector<Item> heap;
  heap.reserve(pending + 1);
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) {
    heap.push_back(Item{gap(rng), seq++, 0});
    std::push_heap(heap.begin(), heap.end(), Later{});
  }
  // Each operation pops the earliest item and pushes one later, as a
  // simulator handling an event that schedules the next does. The delays
  // come from a table so that drawing them costs next to nothing.
  std::vector<double> delays(1024);
  for (double& delay : delays) delay = gap(rng);
  std::uint64_t checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < operations; ++i) {
    std::pop_heap(heap.begin(), heap.end(), Later{});
    const Item item = heap.back();
    heap.pop_back();
    checksum += item.seq;
    heap.push_back(Item{item.time + delays[i & 1023], seq++, checksum});
    std::push_heap(heap.begin(), heap.end(), Later{});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The checksum keeps the loop from being optimised away.
  if (checksum == 0 && operations > 1) throw Error("fabric: heap baseline lost its items");
  return static_cast<double>(operations) / seconds;
}

}  // namespace fpgacomm::fabric
