// The event-driven core of the fabric simulator: a time-ordered queue of
// events. Ties in time are broken by the order in which events were
// scheduled, so a run with the same inputs and seed is identical every time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fpgacomm::fabric {

// Receives the events it scheduled; `tag` is whatever it passed along.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(std::uint64_t tag) = 0;
};

class Engine {
 public:
  // Schedules `handler->handle(tag)` at simulated time `time` (seconds),
  // which must not lie in the past.
  void schedule_at(double time, EventHandler* handler, std::uint64_t tag);
  void schedule_in(double delay, EventHandler* handler, std::uint64_t tag) {
    schedule_at(now_ + delay, handler, tag);
  }
  // Processes events in time order until none is left.
  void run();

  double now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return heap_.size(); }

 private:
  struct Event {
    double time;
    std::uint64_t seq;  // scheduling order: the tie-breaker
    EventHandler* handler;
    std::uint64_t tag;
  };
  static bool later(const Event& a, const Event& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  double now_ = 0.0;
};

// Push-and-pop operations per second of a bare binary heap of events of the
// same size as Engine's, holding `pending` events: the ceiling any event
// queue of this kind can reach, against which the simulator's rate is judged.
double heap_baseline_rate(std::uint64_t operations, std::size_t pending);

}  // namespace fpgacomm::fabric
