#include "fabric/engine.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

#include "core/error.hpp"

namespace fpgacomm::fabric {

void Engine::schedule_at(double time, EventHandler* handler, std::uint64_t tag) {
  if (time < now_) {
    throw Error("fabric engine: an event was scheduled at " + std::to_string(time) +
                " s, before the current time " + std::to_string(now_) + " s");
  }
  heap_.push_back(Event{time, next_seq_++, handler, tag});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void Engine::run() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Event event = heap_.back();
    heap_.pop_back();
    now_ = event.time;
    ++processed_;
    event.handler->handle(event.tag);
  }
}

double heap_baseline_rate(std::uint64_t operations, std::size_t pending) {
  struct Item {
    double time;
    std::uint64_t seq;
    void* handler;
    std::uint64_t tag;
  };
  auto later = [](const Item& a, const Item& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  };
  std::mt19937_64 rng(1);
  std::exponential_distribution<double> gap(1.0);
  std::vector<Item> heap;
  heap.reserve(pending + 1);
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < pending; ++i) {
    heap.push_back(Item{gap(rng), seq++, nullptr, 0});
    std::push_heap(heap.begin(), heap.end(), later);
  }
  // Each operation pops the earliest item and pushes one later, as a
  // simulator handling an event that schedules the next does. The delays
  // come from a table so that drawing them costs next to nothing.
  std::vector<double> delays(1024);
  for (double& delay : delays) delay = gap(rng);
  std::uint64_t checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < operations; ++i) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Item item = heap.back();
    heap.pop_back();
    checksum += item.seq;
    heap.push_back(Item{item.time + delays[i & 1023], seq++, nullptr, checksum});
    std::push_heap(heap.begin(), heap.end(), later);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The checksum keeps the loop from being optimised away.
  if (checksum == 0 && operations > 1) throw Error("fabric: heap baseline lost its items");
  return static_cast<double>(operations) / seconds;
}

}  // namespace fpgacomm::fabric
