// Network's fast-forward state (fast_forward.cpp says how it works).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "fabric/network.hpp"

namespace fpgacomm::fabric {

namespace fast_forward {

constexpr int kLags = 8;                      // a period of up to 8 frames of the stream that leads
constexpr std::int64_t kMinFramesLeft = 256;  // shorter streams are stepped
constexpr std::size_t kMaxLive = 16;          // messages in flight at most, for a checkpoint to be worth it
constexpr std::size_t kFront = 8;             // frames at the front of a deep FIFO checked at each checkpoint
constexpr std::size_t kDeep = 2 * kFront;     // frames a FIFO holds before its read side counts as apart
constexpr std::size_t kLongQueue = 64;        // a FIFO (not deep) holding more: a queue that grows, stepped
// Checks that find no period come ever further apart (every 2nd, 4th, ...
// frame, at most every kLongestStride-th), so that a stream that never
// settles costs little more than stepping.
constexpr int kMissesPerStride = 32;
constexpr int kLongestStride = 1024;

// A reader's times are one sum repeated (value += step, once per frame):
// adds `step` to `value` while value < until, at most `most` times, with the
// very doubles that loop gives, a binade's worth of sums at a time (see
// fast_forward.cpp); returns how many times it added.
std::int64_t add_while_below(double& value, double step, double until, std::int64_t most);
// `count` times value += step.
double add_repeatedly(double value, double step, std::int64_t count);

// How a recorded time may change over one period.
enum Change : char { kMoves = 0, kMayStay = 1 };
// Where a frame of the network side is.
enum class FrameAt : char { travelling, queued, arriving };

}  // namespace fast_forward

struct Network::FastForward {
  struct Snapshot {
    double now = 0.0;
    std::uint64_t events = 0;  // the network side's events so far
    std::vector<std::int64_t> shape;
    std::vector<double> times;
    std::vector<char> change;
    std::vector<std::int64_t> counts;
    std::vector<std::array<std::int64_t, 2>> bounds;  // per count: the range it must stay in
    std::vector<double> amounts;
    std::vector<std::array<std::int64_t, 4>> deep;  // port, lane, frames queued, index of its `popped` count
    void clear() {
      shape.clear();
      times.clear();
      change.clear();
      counts.clear();
      bounds.clear();
      amounts.clear();
      deep.clear();
    }
  };
  int lead = -1;
  std::uint64_t jumps = 0;
  std::array<Snapshot, fast_forward::kLags> history;
  int next = 0, filled = 0;
  int stride = 1, countdown = 0, misses = 0;  // checks every `stride` frames of the lead
  Snapshot current;
  double margin = 0.0;  // how far the arithmetic of one event reaches from the times it reads
  // Scratch of one walk.
  std::vector<std::uint32_t> frame_stamp, port_stamp, node_stamp;
  std::vector<int> frame_label, path_count, labelled, ports;
  std::vector<fast_forward::FrameAt> frame_at;  // per label
  std::uint32_t stamp = 0;
  std::vector<char> decoupled;  // per message id
  std::vector<int> live;
  std::vector<std::array<std::uint64_t, 3>> pending;  // the network side's events: time's bits, seq, tag

  void forget() {
    filled = 0;
    next = 0;
  }
  struct Recorder;
  struct Shifter;
};

// Records a state (Network::walk_state's visitor).
struct Network::FastForward::Recorder {
  FastForward* ff = nullptr;
  bool eligible = true;
  void shape(std::int64_t value) { ff->current.shape.push_back(value); }
  void time(double& value, fast_forward::Change change) {
    ff->current.times.push_back(value);
    ff->current.change.push_back(change);
  }
  template <class Count>
  void count(Count& value, std::int64_t low, std::int64_t high) {
    ff->current.counts.push_back(static_cast<std::int64_t>(value));
    ff->current.bounds.push_back({low, high});
  }
  void amount(double& value) { ff->current.amounts.push_back(value); }
  void deep(int port, int index, Lane& lane) {
    ff->current.deep.push_back({port, index, static_cast<std::int64_t>(lane.frames.size()) + lane.in_runs,
                                static_cast<std::int64_t>(ff->current.counts.size()) - 1});
  }
  void ineligible() { eligible = false; }
};

// Applies `periods` periods to the state just recorded.
struct Network::FastForward::Shifter {
  const std::vector<double>* before_times = nullptr;
  const std::vector<double>* times = nullptr;
  const std::vector<std::int64_t>* before_counts = nullptr;
  const std::vector<std::int64_t>* counts = nullptr;
  const std::vector<double>* before_amounts = nullptr;
  const std::vector<double>* amounts = nullptr;
  double shift = 0.0;
  std::int64_t periods = 0;
  std::size_t t = 0, c = 0, a = 0;
  std::vector<int>* freed = nullptr;
  Network* network = nullptr;
  void shape(std::int64_t) {}
  void time(double& value, fast_forward::Change) {
    if ((*times)[t] != (*before_times)[t]) value += shift;
    ++t;
  }
  template <class Count>
  void count(Count& value, std::int64_t, std::int64_t) {
    value += static_cast<Count>(periods * ((*counts)[c] - (*before_counts)[c]));
    ++c;
  }
  void amount(double& value) {
    value += static_cast<double>(periods) * ((*amounts)[a] - (*before_amounts)[a]);
    ++a;
  }
  void deep(int port, int, Lane& lane) {
    // The lane's `popped` count was visited just before: its change per period.
    const std::int64_t taken = periods * ((*counts)[c - 1] - (*before_counts)[c - 1]);
    network->drop_front(lane, taken, freed);
    lane.reserved -= static_cast<double>(taken) * network->ports_[port].chunk_wire;
  }
  void ineligible() {}
};

}  // namespace fpgacomm::fabric
