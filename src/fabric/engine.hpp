// The event-driven core of the fabric simulator: a time-ordered queue of
// events. Ties in time are broken by the order in which events were
// scheduled, so a run with the same inputs and seed is identical every time.
//
// The queue is a 4-ary heap of 24-byte events (time, scheduling order, a
// tag for the one handler), ordered by a comparator the compiler inlines:
// the heap is most of the simulator's time. A comparator called through a
// function pointer (the PLT of a position-independent library) cost a
// sixth of it; four children per node halve the levels a pop walks down,
// and the four sit in two cache lines. Keys are unique (time, order), so
// the events come out in the same order from any correct heap.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/interrupt.hpp"

namespace fpgacomm::fabric {

// Receives the events scheduled for it; `tag` is whatever was passed along.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(std::uint64_t tag) = 0;
};

class Engine {
 public:
  explicit Engine(EventHandler* handler) : handler_(handler) {}

  // Schedules `handler->handle(tag)` at simulated time `time` (seconds),
  // which must not lie in the past.
  void schedule_at(double time, std::uint64_t tag) {
    if (!(time >= now_)) reject_past(time);
    const Event event{time + 0.0, next_seq_++, tag};  // + 0.0: -0.0 becomes +0.0
    std::size_t hole = heap_.size();
    heap_.push_back(event);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!later(heap_[parent], event)) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = event;
  }
  void schedule_in(double delay, std::uint64_t tag) { schedule_at(now_ + delay, tag); }
  // Processes events in time order until none is left.
  void run() {
    while (!heap_.empty()) {
      depth_sum_ += heap_.size();
      const Event event = heap_.front();
      const Event last = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) {
        // Move the last event down from the root into the hole the earliest left.
        heap_.front() = last;
        sift_down(0);
      }
      now_ = event.time;
      // SIGINT, SIGTERM: about every millisecond, one relaxed load.
      if ((++processed_ & kInterruptEvery) == 0) check_interrupt();
      handler_->handle(event.tag);
    }
  }
  // Sets the clock back to 0; only with no event pending (a new stage of a
  // schedule, simulated on its own clock).
  void restart();

  double now() const { return now_; }
  // Events of the whole simulation: those processed and those a fast-forward
  // (network.hpp) skipped, exactly as many as stepping would have processed.
  std::uint64_t events_processed() const { return processed_ + skipped_; }
  std::uint64_t events_simulated() const { return processed_; }
  void count_skipped(std::uint64_t events) { skipped_ += events; }
  // Lets `retime(time, tag)` move pending events later (a fast-forward),
  // then restores the heap's order; keys stay unique, so the order of
  // events is again the one their (time, sequence) gives.
  template <class Retime>
  void retime_pending(Retime retime) {
    for (Event& event : heap_) retime(event.time, event.tag);
    for (std::size_t hole = heap_.size(); hole-- > 0;) sift_down(hole);
  }
  // Takes the pending events `take(time, tag)` says yes to out of the
  // queue, appending their (time, tag) to `taken` in no particular order.
  template <class Take>
  void take_pending(Take take, std::vector<std::pair<double, std::uint64_t>>* taken) {
    std::size_t kept = 0;
    for (const Event& event : heap_) {
      if (take(event.time, event.tag)) {
        taken->emplace_back(event.time, event.tag);
      } else {
        heap_[kept++] = event;
      }
    }
    heap_.resize(kept);
    for (std::size_t hole = heap_.size(); hole-- > 0;) sift_down(hole);
  }
  template <class Visit>
  void visit_pending(Visit visit) const {
    for (const Event& event : heap_) visit(event.time, event.seq, event.tag);
  }
  std::size_t pending() const { return heap_.size(); }
  // Events in the queue when the next was taken, averaged over all taken:
  // the depth a bare heap must have to be a fair reference.
  double mean_depth() const { return processed_ ? static_cast<double>(depth_sum_) / processed_ : 0.0; }

 private:
  struct Event {
    double time;
    std::uint64_t seq;  // scheduling order: the tie-breaker
    std::uint64_t tag;
  };
  static constexpr std::size_t kArity = 4;
  // Times are never negative (none lies before 0), so their bit patterns
  // order as the times do, and (time, seq) compares as one 128-bit number:
  // no branch on equal times.
  static unsigned __int128 order(const Event& e) {
    std::uint64_t bits;
    std::memcpy(&bits, &e.time, sizeof bits);
    return (static_cast<unsigned __int128>(bits) << 64) | e.seq;
  }
  static bool later(const Event& a, const Event& b) { return order(a) > order(b); }
  [[noreturn]] void reject_past(double time) const;
  void sift_down(std::size_t hole) {
    const Event moving = heap_[hole];
    const std::size_t size = heap_.size();
    for (;;) {
      const std::size_t first = kArity * hole + 1;
      if (first >= size) break;
      const std::size_t end = std::min(first + kArity, size);
      std::size_t earliest = first;
      for (std::size_t child = first + 1; child < end; ++child) {
        if (later(heap_[earliest], heap_[child])) earliest = child;
      }
      if (!later(moving, heap_[earliest])) break;
      heap_[hole] = heap_[earliest];
      hole = earliest;
    }
    heap_[hole] = moving;
  }

  EventHandler* handler_;
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
  static constexpr std::uint64_t kInterruptEvery = (1u << 14) - 1;  // check once per 16384 events
  std::uint64_t processed_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t depth_sum_ = 0;
  double now_ = 0.0;
};

// Push-and-pop operations per second of a bare binary heap (std::push_heap
// and std::pop_heap, as std::priority_queue does it) of events of the same
// size and order as Engine's, holding `pending` events: the reference the
// simulator's rate is judged against, at the simulator's own mean_depth for
// a like-for-like race.
double heap_baseline_rate(std::uint64_t operations, std::size_t pending);

}  // namespace fpgacomm::fabric
