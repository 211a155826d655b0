#include "bench/host_copy.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/pattern.hpp"

namespace fpgacomm {

namespace {

struct Copier {
  double rate = 0;           // bytes per second
  std::uint64_t errors = 0;  // bytes of the last copy that differ from the pattern
};

void copy_for(std::uint64_t block, double seconds, std::atomic<int>& waiting, Copier& out) {
  std::vector<std::uint8_t> source(block), target(block);  // this thread's pages, first touched here
  write_pattern(source.data(), block, 0, block, 0, 0);
  std::memcpy(target.data(), source.data(), block);  // warm, before the clock starts
  waiting.fetch_sub(1);
  while (waiting.load() > 0) std::this_thread::yield();  // every thread starts copying at once
  using clock = std::chrono::steady_clock;
  const auto began = clock::now();
  std::uint64_t copies = 0;
  double elapsed = 0;
  do {
    std::memcpy(target.data(), source.data(), block);
    ++copies;
    elapsed = std::chrono::duration<double>(clock::now() - began).count();
  } while (elapsed < seconds);
  out.rate = static_cast<double>(copies * block) / elapsed;
  out.errors = pattern_errors(target.data(), block, 0, block, 0, 0);
}

}  // namespace

double host_copy_rate(int threads, std::uint64_t block, double seconds) {
  if (threads < 1) throw std::invalid_argument("host_copy_rate: threads must be at least 1");
  std::vector<Copier> copiers(threads);
  std::atomic<int> waiting{threads};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int i = 0; i < threads; ++i)
    workers.emplace_back(copy_for, block, seconds, std::ref(waiting), std::ref(copiers[i]));
  for (std::thread& worker : workers) worker.join();
  double total = 0;
  for (const Copier& copier : copiers) {
    if (copier.errors != 0)
      throw std::runtime_error("host_copy_rate: " + std::to_string(copier.errors) + " bytes of a " +
                               std::to_string(block) + "-byte copy differ from what was copied");
    total += copier.rate;
  }
  return total;
}

}  // namespace fpgacomm
