// Fast-forward through the steady state of long streams, bit-identical to
// stepping (docs/FABRIC.md, "Fast-forward").
//
// Times are doubles. Within one binade [2^k, 2^(k+1)) every double is a
// multiple of u = 2^(k-52), and adding a constant rounds the same way at t
// and at t + D when D is a multiple of 2u (round to nearest, ties to even):
// the simulator's arithmetic on times (a time plus a latency or a
// serialisation, maxima, comparisons) commutes with a shift by D as long as
// every time it touches stays in the binade. So if the network's state at
// one checkpoint equals the state a period before, every time shifted by D
// (or unchanged: a message's start, an idle write engine), with the same
// frames (relabelled), queues, grants and arbitration, then stepping on
// repeats the last period shifted by D, again and again, until a counter (a
// message's frames left) or the binade's end would change that. The jump
// applies J such periods at once: times + J D, counters + J times their
// change, events counted + J times a period's.
//
// A sender whose memory reads faster than its link sends (VCSN: 19.2 GB/s
// against 12.5) has a second clock: its read side emits frames into the
// first hop's unbounded FIFO with a period of its own, and the queue grows.
// Both clocks together never repeat. While that FIFO holds many frames and
// its port is busy, the read side and the rest of the network do not touch
// each other's state (the read side appends, the port takes from the front,
// and admission into an unbounded FIFO always succeeds), so the network
// side is checked and jumped alone, taking J times a period's frames off the
// front of the FIFO, and the read side's events, still at the old time,
// are then stepped up to the new one: they only append.
#include "fabric/fast_forward.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace fpgacomm::fabric {
using namespace fast_forward;
}

namespace fpgacomm::fabric {

namespace fast_forward {

// A reader's times are one sum repeated: value += step, once per frame. They
// need not be stepped one by one. Within one binade [2^(e-1), 2^e) every
// double is a multiple of its ulp u, and value + step rounds (to nearest) to
// value + S, S = step rounded to a multiple of u: the same S for every value
// of the binade, unless step / u lies exactly half-way between two whole
// numbers (then ties-to-even depends on the value: those sums are stepped),
// and as long as the sum stays in the binade. So a binade's worth of sums is
// one multiplication, exact: the same doubles as the loop, bit for bit.
//
std::int64_t add_while_below(double& value, double step, double until, std::int64_t most) {
  std::int64_t taken = 0;
  while (taken < most && value < until) {
    int exponent = 0;
    std::frexp(value, &exponent);  // value in [2^(exponent-1), 2^exponent)
    if (value >= std::numeric_limits<double>::min() && step > 0.0 && std::isfinite(value) && exponent < 1000) {
      const double top = std::ldexp(1.0, exponent);
      const double ulp = std::ldexp(1.0, exponent - 53);
      const double quotient = step / ulp;  // exact: a power-of-two scaling
      const double whole = std::floor(quotient);
      const double fraction = quotient - whole;
      if (fraction != 0.5 && quotient < 0x1p52) {
        const double units = fraction < 0.5 ? whole : whole + 1.0;
        const double stride = units * ulp;
        // Sums value + j * stride for j = 1 .. inside stay in the binade
        // (exact: j * units < 2^53 there).
        const double room = (top - value) / ulp;  // whole units to the binade's end, exact
        const auto inside = stride > 0.0 ? static_cast<std::int64_t>(std::ceil(room / units)) - 1 : 0;
        std::int64_t count = std::min(inside, most - taken);
        while (count > 0 && !(value + static_cast<double>(count) * stride < top))
          --count;  // (rounding of room / units)
        if (count >= 1) {
          // The loop stops after the first sum at or above `until`.
          if (value + static_cast<double>(count) * stride >= until) {
            auto first = static_cast<std::int64_t>(std::ceil((until - value) / stride));
            first = std::clamp<std::int64_t>(first, 1, count);
            while (first > 1 && value + static_cast<double>(first - 1) * stride >= until) --first;
            while (first < count && value + static_cast<double>(first) * stride < until) ++first;
            count = first;
          }
          value += static_cast<double>(count) * stride;
          taken += count;
          continue;
        }
      }
    }
    value += step;
    ++taken;
  }
  return taken;
}

double add_repeatedly(double value, double step, std::int64_t count) {
  add_while_below(value, step, std::numeric_limits<double>::infinity(), count);
  return value;
}

}  // namespace fast_forward

Network::~Network() = default;

void Network::enable_fast_forward(bool on) {
  if (!on) {
    fast_forward_.reset();
    return;
  }
  if (spec_.framing.bit_error_rate > 0.0 || (spec_.trunk_framing && spec_.trunk_framing->bit_error_rate > 0.0)) {
    return;  // retransmissions draw random numbers: never periodic
  }
  for (const Port& port : ports_) {
    if (port.wait_sink) return;  // every wait is wanted
  }
  const std::uint64_t jumps = fast_forward_ ? fast_forward_->jumps : 0;
  fast_forward_ = std::make_unique<FastForward>();
  fast_forward_->jumps = jumps;
  double reach = spec_.node.app_latency + spec_.node.dma_latency;
  if (std::isfinite(spec_.node.dma_bandwidth)) reach += static_cast<double>(chunk_) / spec_.node.dma_bandwidth;
  double hop = 0.0;
  for (const Port& port : ports_) {
    hop = std::max(hop, port.latency + port.peer_routing_latency + 2.0 * port.chunk_wire / port.rate);
  }
  fast_forward_->margin = 4.0 * (reach + hop);
}

std::uint64_t Network::fast_forwards() const { return fast_forward_ ? fast_forward_->jumps : 0; }

// Checks start afresh, every frame, when the messages in flight change (a
// new steady state may begin) or after a jump.
void Network::restart_checks() {
  FastForward& ff = *fast_forward_;
  ff.forget();
  ff.stride = 1;
  ff.countdown = 0;
  ff.misses = 0;
}

// A frame of `message` left its source: the stream that leads is checked
// once per such frame.
void Network::first_hop_sent(int message) {
  FastForward& ff = *fast_forward_;
  const Message& m = messages_[message];
  if (ff.lead < 0 || !messages_[ff.lead].live) {
    if (m.frames_total - m.frames_done < kMinFramesLeft) return;
    ff.lead = message;
    restart_checks();
  }
  if (message != ff.lead) return;
  if (ff.countdown > 0) {
    --ff.countdown;
    return;
  }
  ff.countdown = ff.stride - 1;
  checkpoint_due_ = true;
}

// Visits the network side's state in an order that depends on nothing but
// the state itself: pending events by (time, order), the ports on the paths
// of messages in flight by number, frames in order of first appearance,
// messages by number, their nodes in order of first appearance.
template <class Visitor>
void Network::walk_state(Visitor& visitor) {
  FastForward& ff = *fast_forward_;
  ++ff.stamp;
  ff.frame_stamp.resize(frames_.size(), 0);
  ff.frame_label.resize(frames_.size(), 0);
  ff.port_stamp.resize(ports_.size(), 0);
  ff.path_count.resize(ports_.size(), 0);
  ff.node_stamp.resize(topology_->devices(), 0);
  ff.decoupled.resize(messages_.size(), 0);
  ff.labelled.clear();
  ff.frame_at.clear();
  ff.ports.clear();
  ff.live.assign(live_ids_.begin(), live_ids_.end());
  std::sort(ff.live.begin(), ff.live.end());
  // Paths: every port a message in flight crosses, and how many cross it.
  for (int id : ff.live) {
    const Message& m = messages_[id];
    int device = m.record.src;
    for (int step = 0; device != m.record.dst && step <= topology_->devices(); ++step) {
      const PortGroup group = topology_->route(device, m.record.dst, m.plane);
      for (int p = group.first; p < group.first + group.count; ++p) {
        if (ff.port_stamp[p] != ff.stamp) {
          ff.port_stamp[p] = ff.stamp;
          ff.path_count[p] = 0;
          ff.ports.push_back(p);
        }
        ++ff.path_count[p];
      }
      device = ports_[group.first].peer;
    }
  }
  std::sort(ff.ports.begin(), ff.ports.end());
  // A message's read side runs apart when its first hop is its alone, busy,
  // unbounded, and holds many frames, the front ones all alike and ready.
  for (int id : ff.live) {
    const Message& m = messages_[id];
    bool apart = m.engine >= 0 && m.group.count == 1 && read_queue_[m.record.src].empty();
    if (apart) {
      const int p = m.group.first;
      const Port& port = ports_[p];
      const Lane& lane = port.lanes[lane_at(port, m.lane)];
      apart = ff.path_count[p] == 1 && port.busy && std::isinf(port.capacity) && lane.waiting.empty() &&
              static_cast<std::int64_t>(lane.frames.size()) + lane.in_runs >= static_cast<std::int64_t>(kDeep);
      // The front frames: the message's, full, ready, and none waiting for a grant.
      for (std::size_t k = 0; apart && k < kFront && k < lane.frames.size(); ++k) {
        apart = lane.frames[k] < 0 || (!frames_[lane.frames[k]].requested && !frames_[lane.frames[k]].granted &&
                                       frames_[lane.frames[k]].channel == 0 && frames_[lane.frames[k]].port == p);
      }
      apart = apart && ready_between(lane, 0, kFront - 1, id);
    }
    ff.decoupled[id] = apart;
    visitor.shape(id);
    visitor.shape(apart);
  }
  // Frames are labelled in order of first appearance, with where they are:
  // which of their times will still be read depends on it.
  const auto label = [&](int frame_id, FrameAt at) -> std::int64_t {
    if (ff.frame_stamp[frame_id] != ff.stamp) {
      ff.frame_stamp[frame_id] = ff.stamp;
      ff.frame_label[frame_id] = static_cast<int>(ff.labelled.size());
      ff.labelled.push_back(frame_id);
      ff.frame_at.push_back(at);
    }
    return ff.frame_label[frame_id];
  };
  // Pending events of the network side, in the order they will be taken.
  ff.pending.clear();
  bool foreign = false;
  engine_.visit_pending([&](double time, std::uint64_t seq, std::uint64_t tag) {
    const auto event = static_cast<Event>(tag >> 56);
    if (event == kStart || event == kTimer) foreign = true;
    if (read_side(tag)) return;
    std::uint64_t bits;  // times are never negative: their bits order as they do
    std::memcpy(&bits, &time, sizeof bits);
    ff.pending.push_back({bits, seq, tag});
  });
  if (foreign) visitor.ineligible();
  std::sort(ff.pending.begin(), ff.pending.end());
  for (const auto& pending : ff.pending) {
    const std::uint64_t tag = pending[2];
    double time;
    std::memcpy(&time, &pending[0], sizeof time);
    const auto event = static_cast<Event>(tag >> 56);
    const auto id = static_cast<std::int64_t>(tag & ((std::uint64_t{1} << 56) - 1));
    visitor.shape(event);
    if (event == kEnqueue || event == kDeliver) {
      visitor.shape(label(static_cast<int>(id), event == kEnqueue ? FrameAt::travelling : FrameAt::arriving));
    } else {
      visitor.shape(id);
    }
    visitor.time(time, kMoves);
  }
  // Ports on the paths.
  const std::int64_t unbounded = std::numeric_limits<std::int64_t>::max();
  for (int p : ff.ports) {
    Port& port = ports_[p];
    visitor.shape(p);
    visitor.shape(port.busy);
    visitor.shape(port.rr);
    visitor.shape(port.in_flight_lane);
    visitor.shape(static_cast<std::int64_t>(port.in_flight_wire));
    visitor.count(port.stats.frames, 0, unbounded);
    visitor.count(port.stats.retransmissions, 0, unbounded);
    visitor.amount(port.stats.wire_bytes);
    visitor.amount(port.stats.busy_time);
    visitor.amount(port.stats.wait_sum);
    for (int l = 0; l < static_cast<int>(port.lanes.size()); ++l) {
      Lane& lane = port.lanes[l];
      bool deep = false;
      for (int id : ff.live) {
        const Message& m = messages_[id];
        deep = deep || (ff.decoupled[id] && m.group.first == p && lane_at(port, m.lane) == l);
      }
      visitor.shape(deep);
      visitor.count(lane.popped, 0, unbounded);
      if (deep) {
        visitor.deep(p, l, lane);
        continue;
      }
      if (lane.frames.size() > kLongQueue) {
        visitor.ineligible();  // a queue growing inside the network: no steady state
        return;
      }
      visitor.shape(static_cast<std::int64_t>(lane.frames.size()));
      for (int frame : lane.frames) {
        if (frame < 0) visitor.ineligible();  // a run in a FIFO that is no longer deep: stepped to its end
        visitor.shape(frame < 0 ? -1 : label(frame, FrameAt::queued));
      }
      visitor.shape(static_cast<std::int64_t>(lane.reserved));
      visitor.shape(lane.last_input);
      visitor.shape(static_cast<std::int64_t>(lane.waiting.size()));
      for (const Request& r : lane.waiting) {
        visitor.shape(r.input);
        visitor.shape(r.port);
        visitor.shape(r.frame >= 0 ? label(r.frame, FrameAt::queued) : -1);
        visitor.shape(r.message);
        visitor.shape(static_cast<std::int64_t>(r.wire));
      }
    }
  }
  // Frames of the network side, in order of first appearance.
  for (std::size_t k = 0; k < ff.labelled.size(); ++k) {
    Frame& f = frames_[ff.labelled[k]];
    visitor.shape(f.message);
    visitor.shape(f.payload);
    visitor.shape(f.wire);
    visitor.shape(f.channel);
    visitor.shape(f.port);
    visitor.shape(f.requested);
    visitor.shape(f.granted);
    // Only the times read again: one travelling to a port needs its tail
    // there, one queued also when it was queued (its wait), one arriving
    // when its first byte came; the others are written before being read.
    const FrameAt at = ff.frame_at[k];
    visitor.shape(static_cast<std::int64_t>(at));
    if (at == FrameAt::arriving) {
      visitor.time(f.first_byte, kMoves);
    } else {
      visitor.time(f.tail_ready, kMoves);
      if (at == FrameAt::queued) visitor.time(f.enqueued, kMoves);
    }
  }
  // Messages in flight, and their nodes.
  for (int id : ff.live) {
    Message& m = messages_[id];
    visitor.shape(m.record.src);
    visitor.shape(m.record.dst);
    visitor.shape(m.lane);
    visitor.shape(m.plane);
    visitor.shape(m.engine);
    visitor.shape(m.write_engine);
    visitor.count(m.frames_done, 0, m.frames_total - 2);
    visitor.time(m.record.start, kMayStay);
    visitor.time(m.record.first_byte, kMayStay);
    visitor.time(m.record.done, kMayStay);
    if (!ff.decoupled[id]) {
      visitor.shape(m.granted);
      visitor.shape(m.next_channel);
      visitor.count(m.frames_emitted, 0, m.frames_total - 2);
      for (std::int64_t& left : m.channel_left) visitor.count(left, chunk_, unbounded);
    }
    for (int node : {m.record.src, m.record.dst}) {
      if (ff.node_stamp[node] == ff.stamp) continue;
      ff.node_stamp[node] = ff.stamp;
      visitor.shape(node);
      visitor.shape(static_cast<std::int64_t>(read_queue_[node].size()));
      for (int waiting : read_queue_[node]) visitor.shape(waiting);
      for (int e = 0; e < spec_.node.dma_engines; ++e) {
        visitor.shape(read_busy_[node * spec_.node.dma_engines + e]);
        visitor.time(write_free_[node * spec_.node.dma_engines + e], kMayStay);
      }
    }
  }
  visitor.shape(static_cast<std::int64_t>(read_ends_));
}

// A pending event of a read side that runs apart from the network.
bool Network::read_side(std::uint64_t tag) const {
  const FastForward& ff = *fast_forward_;
  const auto event = static_cast<Event>(tag >> 56);
  const auto id = static_cast<std::int64_t>(tag & ((std::uint64_t{1} << 56) - 1));
  const auto apart = [&](int message) {
    return message < static_cast<int>(ff.decoupled.size()) && ff.decoupled[message];
  };
  switch (event) {
    case kFrameReady:
      return apart(static_cast<int>(id));
    case kEnqueue: {
      const Frame& f = frames_[id];
      return apart(f.message) && ports_[f.port].device == messages_[f.message].record.src;
    }
    case kReadEngineFree: {
      const int node = static_cast<int>(id) / spec_.node.dma_engines;
      for (int message : live_ids_) {
        if (apart(message) && messages_[message].record.src == node) return true;
      }
      return false;
    }
    default:
      return false;
  }
}

void Network::checkpoint() {
  FastForward& ff = *fast_forward_;
  if (live_ids_.size() > kMaxLive || timers_.size() != free_timers_.size()) {
    ff.forget();
    return;
  }
  const Message& lead = messages_[ff.lead];
  if (lead.frames_total - lead.frames_done < kMinFramesLeft) {
    ff.lead = -1;
    ff.forget();
    return;
  }
  ff.current.clear();
  ff.current.now = now();
  FastForward::Recorder recorder{&ff};
  // A check that finds nothing: after kMissesPerStride of them, check half
  // as often, with history that far apart only.
  const auto missed = [&ff] {
    if (++ff.misses < kMissesPerStride || ff.stride >= kLongestStride) return false;
    ff.stride *= 2;
    ff.misses = 0;
    ff.forget();
    return true;
  };
  walk_state(recorder);
  if (!recorder.eligible) {
    ff.forget();
    missed();
    return;
  }
  std::uint64_t read_events = 0;
  for (int id : ff.live) {
    if (ff.decoupled[id]) read_events += static_cast<std::uint64_t>(messages_[id].read_events);
  }
  ff.current.events = engine_.events_processed() - read_events;
  const FastForward::Snapshot& now_state = ff.current;
  for (int lag = 1; lag <= ff.filled; ++lag) {
    const FastForward::Snapshot& before = ff.history[(ff.next - lag + kLags) % kLags];
    if (before.shape != now_state.shape || before.times.size() != now_state.times.size() ||
        before.counts.size() != now_state.counts.size() || before.amounts.size() != now_state.amounts.size() ||
        before.deep.size() != now_state.deep.size()) {
      continue;
    }
    const double period = now_state.now - before.now;
    if (!(period > 0.0) || !(before.now > 0.0)) continue;
    const double base = std::ldexp(1.0, std::ilogb(before.now));  // the binade [base, 2 base)
    const double ulp = std::ldexp(base, -52);
    if (std::fmod(period, 2.0 * ulp) != 0.0) continue;
    bool periodic = true;
    double low = before.now, high = now_state.now;
    for (std::size_t i = 0; periodic && i < now_state.times.size(); ++i) {
      const double a = before.times[i], b = now_state.times[i];
      if (b == a) {
        periodic = now_state.change[i] == kMayStay;
      } else {
        periodic = b - a == period;
        low = std::min(low, a);
        high = std::max(high, b);
      }
    }
    if (!periodic || low - ff.margin < base) continue;
    // Periods that may be skipped: the binade, the counters' ranges, the
    // frames queued in deep FIFOs (each period takes some off the front).
    std::int64_t periods = static_cast<std::int64_t>(std::floor((2.0 * base - ff.margin - high) / period)) - 1;
    for (std::size_t i = 0; i < now_state.counts.size() && periods > 0; ++i) {
      const std::int64_t change = now_state.counts[i] - before.counts[i];
      const auto& range = now_state.bounds[i];
      if (change > 0) periods = std::min(periods, (range[1] - now_state.counts[i]) / change);
      if (change < 0) periods = std::min(periods, (now_state.counts[i] - range[0]) / -change);
    }
    for (std::size_t d = 0; d < now_state.deep.size() && periods > 0; ++d) {
      const auto& deep = now_state.deep[d];
      if (deep[0] != before.deep[d][0] || deep[1] != before.deep[d][1]) periods = 0;
      const std::int64_t pops = now_state.counts[deep[3]] - before.counts[deep[3]];
      if (pops > static_cast<std::int64_t>(kFront)) periods = 0;
      if (pops > 0) periods = std::min(periods, (deep[2] - pops - static_cast<std::int64_t>(kFront)) / pops);
    }
    if (periods < 1) continue;
    if (jump(lag, period, periods)) {
      restart_checks();
      return;
    }
  }
  if (missed()) return;
  std::swap(ff.history[ff.next], ff.current);
  ff.next = (ff.next + 1) % kLags;
  ff.filled = std::min(ff.filled + 1, kLags);
}

bool Network::jump(int lag, double period, std::int64_t periods) {
  FastForward& ff = *fast_forward_;
  const FastForward::Snapshot& before = ff.history[(ff.next - lag + kLags) % kLags];
  const FastForward::Snapshot& state = ff.current;
  // The frames a deep FIFO gives up must all be alike and ready, as those
  // its port took during the period were. Only its message's frames enter
  // it (its first hop is its alone), all full but the last, which is not
  // among them (kFront frames stay behind); only the front one can wait for
  // a grant (checked at the checkpoint); their tails come in the order they
  // were read, so the last one taken is ready if any is not.
  for (const auto& deep : state.deep) {
    const std::int64_t pops = state.counts[deep[3]] - before.counts[deep[3]];
    const Lane& lane = ports_[deep[0]].lanes[deep[1]];
    const std::int64_t last = (periods + 1) * pops + static_cast<std::int64_t>(kFront) - 1;
    if (last >= static_cast<std::int64_t>(lane.frames.size()) + lane.in_runs) return false;
    const int message =
        lane.frames.front() < 0 ? runs_[-lane.frames.front() - 1].message : frames_[lane.frames.front()].message;
    if (!ready_between(lane, last, last, message)) return false;
  }
  const double shift = static_cast<double>(periods) * period;
  std::vector<int> freed;
  FastForward::Shifter shifter;
  shifter.before_times = &before.times;
  shifter.times = &state.times;
  shifter.before_counts = &before.counts;
  shifter.counts = &state.counts;
  shifter.before_amounts = &before.amounts;
  shifter.amounts = &state.amounts;
  shifter.shift = shift;
  shifter.periods = periods;
  shifter.freed = &freed;
  shifter.network = this;
  // Walk the same state again (nothing changed since it was recorded), so
  // the visits line up with the recorded ones; pending events move apart.
  walk_state(shifter);
  engine_.retime_pending([&](double& time, std::uint64_t tag) {
    if (!read_side(tag)) time += shift;
  });
  for (int frame : freed) free_frames_.push_back(frame);
  engine_.count_skipped(static_cast<std::uint64_t>(periods) * (state.events - before.events));
  ++ff.jumps;
  // The read sides apart, still at the old time, catch up to the network's
  // next event.
  double until = std::numeric_limits<double>::infinity();
  engine_.visit_pending([&](double time, std::uint64_t, std::uint64_t tag) {
    if (!read_side(tag)) until = std::min(until, time);
  });
  for (int id : ff.live) {
    if (ff.decoupled[id]) catch_up_reads(id, until);
  }
  return true;
}

// Does what frame_ready and the first hop's kEnqueue would do for a read
// side apart from the network, for all its events before `until` (the
// network's next event), with the same arithmetic, and counts them: each
// frame is admitted at once (an unbounded FIFO nobody waits at), queued
// behind the others, and its port, busy, does not look at it. The last two
// frames of the message are left to the events (the short last frame, the
// read engine's release).
void Network::catch_up_reads(int id, double until) {
  Message& m = messages_[id];
  const int p = m.group.first;
  Port& port = ports_[p];
  Lane& lane = port.lanes[lane_at(port, m.lane)];
  std::vector<std::pair<double, std::uint64_t>> taken;
  engine_.take_pending(
      [&](double time, std::uint64_t tag) {
        const auto event = static_cast<Event>(tag >> 56);
        const auto object = static_cast<std::int64_t>(tag & ((std::uint64_t{1} << 56) - 1));
        if (time >= until) return false;
        if (event == kFrameReady) return object == id;
        return event == kEnqueue && frames_[object].message == id && frames_[object].port == p &&
               ports_[p].device == m.record.src;
      },
      &taken);
  // Events at equal times are taken in the order they were scheduled: a
  // frame's enqueue before the next frame's read (frame_ready schedules it first).
  std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : (a.second >> 56) == kEnqueue && (b.second >> 56) != kEnqueue;
  });
  double next_read = -1.0;
  std::uint64_t events = 0;
  for (const auto& [time, tag] : taken) {
    if ((tag >> 56) == kEnqueue) {
      const int frame_id = static_cast<int>(tag & ((std::uint64_t{1} << 56) - 1));
      frames_[frame_id].enqueued = time;
      lane.frames.push_back(frame_id);
      ++events;
    } else {
      next_read = time;
    }
  }
  const bool cut_through = spec_.hub.forwarding == Forwarding::cut_through;
  const int engine_input = static_cast<int>(ports_.size()) + m.record.src * spec_.node.dma_engines + m.engine;
  // Frames queued before `until` join a run (one entry); one read before it
  // but queued after (store and forward) is a frame of its own with its event.
  Run run{id, p, 0, next_read};
  const double read_time = static_cast<double>(chunk_) / spec_.node.dma_bandwidth;
  if (next_read >= 0.0 && next_read < until) {
    // All but the last of these reads, at once (add_while_below's sums are
    // the loop's own): their frames' places are whole wire bytes (exact
    // sums), and each joins the run, its head and tail before `until`.
    const std::int64_t reads = m.frames_total - 2 - m.frames_emitted;
    double last = next_read;
    const std::int64_t bulk = reads > 1 ? add_while_below(last, read_time, until, reads) - 1 : 0;
    if (bulk > 0) {
      next_read = add_repeatedly(next_read, read_time, bulk);
      lane.reserved += static_cast<double>(bulk) * port.chunk_wire;
      lane.last_input = engine_input;
      m.channel_left[0] -= bulk * chunk_;
      m.frames_emitted += bulk;
      run.count += bulk;
      events += 2 * static_cast<std::uint64_t>(bulk);  // each read and its enqueue
    }
  }
  while (next_read >= 0.0 && next_read < until && m.frames_emitted + 2 < m.frames_total) {
    const std::int64_t payload = chunk_;
    const double wire = port.chunk_wire;
    lane.reserved += wire;
    lane.last_input = engine_input;
    const double tail_ready = next_read + static_cast<double>(payload) / spec_.node.dma_bandwidth;
    const double eligible = cut_through ? next_read : tail_ready;
    m.channel_left[0] -= payload;
    ++m.frames_emitted;
    ++events;
    if (eligible < until) {
      ++run.count;
      ++events;  // its enqueue
    } else {
      const int frame_id = new_frame();
      Frame& frame = frames_[frame_id];
      frame.message = id;
      frame.payload = static_cast<int>(payload);
      frame.wire = static_cast<int>(wire);
      frame.channel = 0;
      frame.port = p;
      frame.tail_ready = tail_ready;
      frame.eligible = eligible;
      engine_.schedule_at(frame.eligible, tag(kEnqueue, frame_id));
    }
    next_read = tail_ready;
  }
  if (run.count > 0) {
    int index;
    if (free_runs_.empty()) {
      index = static_cast<int>(runs_.size());
      runs_.push_back(run);
    } else {
      index = free_runs_.back();
      free_runs_.pop_back();
      runs_[index] = run;
    }
    lane.frames.push_back(-index - 1);
    lane.in_runs += run.count - 1;
  }
  if (next_read >= 0.0) engine_.schedule_at(next_read, tag(kFrameReady, id));
  m.read_events += static_cast<std::int64_t>(events);
  engine_.count_skipped(events);
}

}  // namespace fpgacomm::fabric

namespace fpgacomm::fabric {

// The port takes the first frame of the run at the front of `lane`: it
// becomes a frame like those catch_up_reads would have made, queued when
// it became eligible.
int Network::take_from_run(Lane& lane) {
  const int index = -lane.frames.front() - 1;
  Run& run = runs_[index];
  const int frame_id = new_frame();
  Frame& frame = frames_[frame_id];
  frame.message = run.message;
  frame.payload = static_cast<int>(chunk_);
  frame.wire = static_cast<int>(ports_[run.port].chunk_wire);
  frame.channel = 0;
  frame.port = run.port;
  frame.tail_ready = run.read + static_cast<double>(chunk_) / spec_.node.dma_bandwidth;
  frame.eligible = spec_.hub.forwarding == Forwarding::cut_through ? run.read : frame.tail_ready;
  frame.enqueued = frame.eligible;
  run.read = frame.tail_ready;
  lane.frames.pop_front();
  if (--run.count > 0) {
    lane.frames.push_front(-index - 1);
    --lane.in_runs;
  } else {
    free_runs_.push_back(index);
  }
  lane.frames.push_front(frame_id);
  return frame_id;
}

// Takes `frames` frames off the front of `lane` (a jump: its port sent them).
void Network::drop_front(Lane& lane, std::int64_t frames, std::vector<int>* freed) {
  while (frames > 0) {
    const int entry = lane.frames.front();
    if (entry >= 0) {
      freed->push_back(entry);
      lane.frames.pop_front();
      --frames;
      continue;
    }
    Run& run = runs_[-entry - 1];
    const std::int64_t taken = std::min(frames, run.count);
    run.read = add_repeatedly(run.read, static_cast<double>(chunk_) / spec_.node.dma_bandwidth, taken);
    frames -= taken;
    if (taken == run.count) {
      lane.in_runs -= run.count - 1;
      free_runs_.push_back(-entry - 1);
      lane.frames.pop_front();
    } else {
      lane.in_runs -= taken;
    }
    run.count -= taken;
  }
}

bool Network::ready_between(const Lane& lane, std::int64_t first, std::int64_t last, int message) const {
  std::int64_t position = 0;
  for (const int entry : lane.frames) {
    if (position > last) break;
    if (entry >= 0) {
      if (position >= first) {
        const Frame& f = frames_[entry];
        if (f.message != message || f.payload != chunk_ || !(f.tail_ready <= now())) return false;
      }
      ++position;
      continue;
    }
    const Run& run = runs_[-entry - 1];
    if (run.message != message) return false;
    // Tails grow along the run: the last one in range decides.
    const std::int64_t in_range = std::min(last, position + run.count - 1);
    if (in_range >= first) {
      const double read =
          add_repeatedly(run.read, static_cast<double>(chunk_) / spec_.node.dma_bandwidth, in_range - position);
      if (!(read + static_cast<double>(chunk_) / spec_.node.dma_bandwidth <= now())) return false;
    }
    position += run.count;
  }
  return position > last;
}

}  // namespace fpgacomm::fabric
