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

// Every thread waits here until all have come, round after round (a
// counter and a round number).
class RoundBarrier {
 public:
  static constexpr int kSpins = 1 << 12;

  explicit RoundBarrier(int threads) : threads_(threads) {}
  void wait() {
    const std::uint64_t round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      round_.fetch_add(1, std::memory_order_release);
      return;
    }
    // Spinning answers fastest; yielding lets a thread that shares a core reach the barrier.
    for (int spins = 0; round_.load(std::memory_order_acquire) == round; ++spins)
      if (spins >= kSpins) std::this_thread::yield();
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint64_t> round_{0};
};

struct Copier {
  double rate = 0;           // bytes per second
  std::uint64_t errors = 0;  // bytes of the last copy that differ from the pattern
};

void copy_for(std::uint64_t block, double seconds, RoundBarrier& start, Copier& out) {
  std::vector<std::uint8_t> source(block), target(block);  // this thread's pages, first touched here
  write_pattern(source.data(), block, 0, block, 0, 0);
  std::memcpy(target.data(), source.data(), block);  // warm, before the clock starts
  start.wait();                                      // every thread starts copying at once
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

constexpr std::uint64_t kNoRound = ~std::uint64_t{0};  // the stamp of a block no round wrote

// The shared state of host_pass_rate's chain: each thread's two blocks (the
// round's and the last round's), written by their owner only.
struct Chain {
  explicit Chain(int threads) : blocks(threads), barrier(threads) {}
  std::vector<std::uint8_t*> blocks;  // thread i's two blocks, back to back
  RoundBarrier barrier;
  // The round after which every thread stops, set by thread 0 during that round: a thread that reads it
  // early (thread 0 may set it before another has read it after the last barrier) sees another round.
  std::atomic<std::uint64_t> last_round{kNoRound};
  double elapsed = 0;        // the timed rounds' seconds, written by thread 0
  std::uint64_t rounds = 0;  // the rounds timed, written by thread 0
};

void pass_for(int me, std::uint64_t block, double seconds, Chain& chain, std::uint64_t& errors) {
  std::vector<std::uint8_t> mine(2 * block), source;  // this thread's pages, first touched here
  write_pattern(mine.data(), block, 0, block, 0, 0);
  write_pattern(mine.data() + block, block, 0, block, 0, 0);
  std::memcpy(mine.data(), &kNoRound, sizeof kNoRound);
  std::memcpy(mine.data() + block, &kNoRound, sizeof kNoRound);
  if (me == 0) {
    source.resize(block);
    write_pattern(source.data(), block, 0, block, 0, 0);
  }
  chain.blocks[static_cast<std::size_t>(me)] = mine.data();
  chain.barrier.wait();  // every block in place, before the clock starts
  using clock = std::chrono::steady_clock;
  const auto began = clock::now();
  std::uint64_t round = 0;
  for (;; ++round) {
    std::uint8_t* target = mine.data() + (round % 2) * block;
    if (me == 0) {
      // The rounds before this one are done (the barrier), so the clock counts whole rounds; this one,
      // whose end comes with the stop, is not counted.
      const double elapsed = std::chrono::duration<double>(clock::now() - began).count();
      if (round > 0 && elapsed >= seconds && chain.last_round.load(std::memory_order_relaxed) == kNoRound) {
        chain.elapsed = elapsed;
        chain.rounds = round;
        chain.last_round.store(round, std::memory_order_relaxed);
      }
      std::memcpy(target, source.data(), block);
      std::memcpy(target, &round, sizeof round);
    } else {
      // The left neighbour's block of the last round, from its core's caches.
      std::memcpy(target, chain.blocks[static_cast<std::size_t>(me - 1)] + ((round + 1) % 2) * block, block);
    }
    chain.barrier.wait();
    if (chain.last_round.load(std::memory_order_relaxed) == round) break;
  }
  // What thread 0 wrote in round `round - me` has come `me` threads along.
  const std::uint8_t* last = mine.data() + (round % 2) * block;
  std::uint64_t stamp = 0;
  std::memcpy(&stamp, last, sizeof stamp);
  const std::uint64_t expected = round >= static_cast<std::uint64_t>(me) ? round - me : kNoRound;
  errors = (stamp != expected ? sizeof stamp : 0) +
           pattern_errors(last + sizeof stamp, block - sizeof stamp, sizeof stamp, block, 0, 0);
}

}  // namespace

double host_pass_rate(int threads, std::uint64_t block, double seconds) {
  if (threads < 1) throw std::invalid_argument("host_pass_rate: threads must be at least 1");
  if (block < 16) throw std::invalid_argument("host_pass_rate: a block holds at least 16 bytes");
  Chain chain(threads);
  std::vector<std::uint64_t> errors(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i)
    workers.emplace_back(pass_for, i, block, seconds, std::ref(chain), std::ref(errors[static_cast<std::size_t>(i)]));
  for (std::thread& worker : workers) worker.join();
  for (int i = 0; i < threads; ++i)
    if (errors[static_cast<std::size_t>(i)] != 0)
      throw std::runtime_error("host_pass_rate: " + std::to_string(errors[static_cast<std::size_t>(i)]) +
                               " bytes of the block thread " + std::to_string(i) +
                               " passed on last differ from what thread 0 wrote " + std::to_string(i) +
                               " rounds before");
  return static_cast<double>(threads) * static_cast<double>(block) * static_cast<double>(chain.rounds) / chain.elapsed;
}

double host_copy_rate(int threads, std::uint64_t block, double seconds) {
  if (threads < 1) throw std::invalid_argument("host_copy_rate: threads must be at least 1");
  std::vector<Copier> copiers(threads);
  RoundBarrier start(threads);
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int i = 0; i < threads; ++i)
    workers.emplace_back(copy_for, block, seconds, std::ref(start), std::ref(copiers[i]));
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
