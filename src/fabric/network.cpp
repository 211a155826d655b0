#include "fabric/network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "fabric/fast_forward.hpp"

namespace fpgacomm::fabric {

Network::Network(const FabricSpec& spec)
    : spec_(spec),
      topology_((spec.validate(), Topology::build(spec))),
      engine_(this),
      rng_(spec.seed),
      mac_table_(spec_, topology_->planes()),
      chunk_(spec_.chunk_bytes()) {
  const auto& infos = topology_->ports();
  ports_.resize(infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    Port& port = ports_[i];
    port.device = infos[i].device;
    port.peer = infos[i].peer;
    const Link& link = infos[i].bus ? spec_.host_link : infos[i].trunk ? spec_.trunk_link : spec_.access_link;
    port.rate = link.data_rate();
    port.latency = link.latency;
    port.framing = &spec_.segment_framing(infos[i].trunk);
    port.chunk_wire = static_cast<double>(port.framing->chunk_wire_bytes(chunk_));
    const DeviceSpec& device = device_spec(port.device);
    port.capacity = device.buffer_bytes;
    port.lanes.resize(device.lanes);
    port.round_robin = device.arbitration == Arbitration::round_robin;
    const DeviceSpec& peer = device_spec(port.peer);
    port.peer_routing_latency = peer.routing_latency;
    port.peer_cuts_through = peer.forwarding == Forwarding::cut_through;
  }
  for (const LinkScale& scale : spec_.link_scales) {
    if (scale.device < 0 || scale.device >= topology_->devices() || scale.port < 0 ||
        scale.port >= static_cast<int>(topology_->ports_of(scale.device).size())) {
      throw UsageError("fabric: cannot scale port " + std::to_string(scale.port) + " of device " +
                       std::to_string(scale.device) + ": no such port in this topology");
    }
    const int port = topology_->ports_of(scale.device)[scale.port];
    ports_[port].rate *= scale.factor;
    ports_[infos[port].reverse].rate *= scale.factor;
  }
  const int slots = topology_->nodes() * spec_.node.dma_engines;
  read_queue_.resize(topology_->nodes());
  read_busy_.assign(slots, 0);
  write_free_.assign(slots, 0.0);
  send_free_.assign(topology_->nodes(), 0.0);
  receive_free_.assign(topology_->nodes(), 0.0);
  // Ports alike in everything a frame's timing depends on share a class.
  std::map<std::tuple<double, double, const Framing*, double, int, int, int>, int> classes;
  port_class_.reserve(ports_.size());
  for (const Port& port : ports_) {
    const auto signature =
        std::make_tuple(port.rate, port.latency, port.framing, port.capacity, static_cast<int>(port.lanes.size()),
                        static_cast<int>(topology_->role(port.device)), static_cast<int>(topology_->role(port.peer)));
    port_class_.push_back(classes.emplace(signature, static_cast<int>(classes.size())).first->second);
  }
}

void Network::begin_stage() {
  if (live_messages_ > 0) {
    throw Error("fabric: a new stage began with " + std::to_string(live_messages_) + " message(s) still in flight");
  }
  engine_.restart();
  for (Port& port : ports_) {
    port.rr = 0;
    for (Lane& lane : port.lanes) lane.last_input = -1;
  }
  std::fill(write_free_.begin(), write_free_.end(), 0.0);
  std::fill(send_free_.begin(), send_free_.end(), 0.0);
  std::fill(receive_free_.begin(), receive_free_.end(), 0.0);
  if (fast_forward_) enable_fast_forward(true);  // no period carries over from the stage before
  runs_.clear();
  free_runs_.clear();
}

const DeviceSpec& Network::device_spec(int device) const {
  switch (topology_->role(device)) {
    case DeviceRole::node:
      return spec_.hub;
    case DeviceRole::switch_:
      return spec_.sw;
    case DeviceRole::host:
      return spec_.host;
  }
  return spec_.sw;
}

int Network::node_port(int node, int local) const {
  const auto& local_ports = topology_->ports_of(node);
  if (local < 0 || local >= static_cast<int>(local_ports.size())) {
    throw UsageError("fabric: node " + std::to_string(node) + " has no port " + std::to_string(local));
  }
  return local_ports[local];
}

int Network::new_frame() {
  if (free_frames_.empty()) {
    frames_.emplace_back();
    return static_cast<int>(frames_.size()) - 1;
  }
  const int id = free_frames_.back();
  free_frames_.pop_back();
  frames_[id] = Frame{};
  return id;
}

int Network::new_message() {
  ++live_messages_;
  int id;
  if (free_messages_.empty()) {
    messages_.emplace_back();
    id = static_cast<int>(messages_.size()) - 1;
  } else {
    id = free_messages_.back();
    free_messages_.pop_back();
    messages_[id] = Message{};
  }
  messages_[id].live = true;
  live_ids_.push_back(id);
  return id;
}

void Network::send(int src, int dst, std::int64_t bytes, double start, int port, int lane, Completion done) {
  submit(src, dst, bytes, start, port, lane, std::move(done));
}

void Network::send_virtual(const VirtualPort& source, std::int64_t bytes, double start, Completion done) {
  const VirtualPort& target = mac_table_.destination(source);
  const int id = submit(source.node, target.node, bytes, start, source.port, source.vport, std::move(done));
  messages_[id].record.dst_vport = target.vport;
}

int Network::submit(int src, int dst, std::int64_t bytes, double start, int port, int lane, Completion done) {
  if (bytes < 0) {
    throw UsageError("fabric: a message of " + std::to_string(bytes) + " bytes; give a size of 0 or more");
  }
  if (lane < 0 || lane >= spec_.hub.lanes) {
    throw UsageError("fabric: lane " + std::to_string(lane) + " does not exist; the nodes' routers have " +
                     std::to_string(spec_.hub.lanes) + " lane(s) per port");
  }
  if (start < now()) start = now();
  // Routing first, so that an impossible destination fails here, in the caller.
  const PortGroup group = topology_->route(src, dst, port);
  const double asked = start;
  start = injection(src, bytes, start);
  const int id = new_message();
  Message& message = messages_[id];
  message.record = MessageRecord{src, dst, bytes, asked, std::numeric_limits<double>::infinity(), start};
  message.lane = lane;
  message.plane = port;
  message.group = group;
  message.on_done = std::move(done);
  // Stripe the payload over the parallel links in whole payload units, as
  // the channels of a b_eff kernel pair share one message word by word.
  const std::int64_t unit = spec_.framing.payload_unit;
  const std::int64_t units = (bytes + unit - 1) / unit;
  message.channel_left.assign(group.count, 0);
  for (int c = 0; c < group.count; ++c) {
    message.channel_left[c] = (units / group.count + (c < units % group.count ? 1 : 0)) * unit;
  }
  if (units > 0) message.channel_left[(units - 1) % group.count] -= units * unit - bytes;
  for (std::int64_t left : message.channel_left) message.frames_total += (left + chunk_ - 1) / chunk_;
  if (message.frames_total == 0) message.frames_total = 1;  // an empty message is one empty frame
  engine_.schedule_at(start, tag(kStart, id));
  return id;
}

// When a message asked for at `start` leaves its sender, after the host's
// costs (LogGP): the sender's software is busy o_s per message and starts
// at most one message per max(o_s, g); a message past the eager threshold
// waits for the rendezvous first. Without costs, `start` itself.
double Network::injection(int src, std::int64_t bytes, double start) {
  const NodeSpec& node = spec_.node;
  if (node.has_message_costs()) {
    const double begin = std::max(start, send_free_[src]);
    send_free_[src] = begin + std::max(node.send_overhead, node.gap);
    start = begin + node.send_overhead;
  }
  if (bytes > node.eager_threshold) start += node.rendezvous_latency;
  return start;
}

// When the receiver's software is done with a message whose last byte
// arrived at `arrival` (LogGP): o_r per message, one message at a time, at
// most one per max(o_r, g). Without costs, `arrival` itself.
double Network::received(int dst, double arrival) {
  const NodeSpec& node = spec_.node;
  if (!node.has_message_costs()) return arrival;
  const double begin = std::max(arrival, receive_free_[dst]);
  receive_free_[dst] = begin + std::max(node.recv_overhead, node.gap);
  return begin + node.recv_overhead;
}

void Network::at(double time, std::function<void()> action) {
  int id;
  if (free_timers_.empty()) {
    timers_.push_back(std::move(action));
    id = static_cast<int>(timers_.size()) - 1;
  } else {
    id = free_timers_.back();
    free_timers_.pop_back();
    timers_[id] = std::move(action);
  }
  engine_.schedule_at(std::max(time, now()), tag(kTimer, id));
}

void Network::run() {
  engine_.run();
  if (live_messages_ > 0) {
    throw Error("fabric: " + std::to_string(live_messages_) +
                " message(s) never arrived: bounded buffers in a cycle of links deadlocked; "
                "give larger buffers (buffer_bytes) or a topology without cycles");
  }
}

void Network::handle(std::uint64_t event_tag) {
  const auto event = static_cast<Event>(event_tag >> 56);
  const auto id = static_cast<std::int64_t>(event_tag & ((std::uint64_t{1} << 56) - 1));
  switch (event) {
    case kStart: {
      const int src = messages_[id].record.src;
      read_queue_[src].push_back(static_cast<int>(id));
      start_reads(src);
      break;
    }
    case kReadEngineFree: {
      ++read_ends_;
      read_busy_[id] = 0;
      start_reads(static_cast<int>(id) / spec_.node.dma_engines);
      break;
    }
    case kFrameReady:
      if (fast_forward_) ++messages_[id].read_events;
      frame_ready(static_cast<int>(id));
      break;
    case kEnqueue: {
      Frame& frame = frames_[id];
      Port& port = ports_[frame.port];
      if (fast_forward_ && port.device == messages_[frame.message].record.src) ++messages_[frame.message].read_events;
      frame.enqueued = now();
      port.lanes[lane_at(port, messages_[frame.message].lane)].frames.push_back(static_cast<int>(id));
      try_start(frame.port);
      break;
    }
    case kPortFree:
      port_free(static_cast<int>(id));
      break;
    case kDeliver:
      deliver(static_cast<int>(id));
      break;
    case kDone: {
      Message& message = messages_[id];
      const MessageRecord record = message.record;
      Completion done = std::move(message.on_done);
      message.live = false;
      live_ids_.erase(std::find(live_ids_.begin(), live_ids_.end(), static_cast<int>(id)));
      if (fast_forward_) restart_checks();
      free_messages_.push_back(static_cast<int>(id));
      --live_messages_;
      if (done) done(record);
      break;
    }
    case kWakePort:
      try_start(static_cast<int>(id));
      break;
    case kTimer: {
      std::function<void()> action = std::move(timers_[id]);
      free_timers_.push_back(static_cast<int>(id));
      action();
      break;
    }
  }
  if (checkpoint_due_) {
    checkpoint_due_ = false;
    checkpoint();
  }
}

// Each idle read engine of the node takes the oldest waiting message (an
// mSGDMA works through its descriptors one at a time). It starts after the
// user logic hands the message over (Ta) and the memory answers the first
// request; an empty message (a short active message, an acknowledgement)
// reads no memory.
void Network::start_reads(int node) {
  auto& queue = read_queue_[node];
  for (int engine = 0; engine < spec_.node.dma_engines && !queue.empty(); ++engine) {
    char& busy = read_busy_[node * spec_.node.dma_engines + engine];
    if (busy) continue;
    busy = 1;
    const int id = queue.front();
    queue.pop_front();
    messages_[id].engine = engine;
    const double read = messages_[id].record.bytes > 0 ? spec_.node.dma_latency : 0.0;
    engine_.schedule_in(spec_.node.app_latency + read, tag(kFrameReady, id));
  }
}

// The DMA engine has the head of the next frame; it needs room in the
// output lane before it goes on.
void Network::frame_ready(int id) {
  Message& message = messages_[id];
  const int channel = message.next_channel;
  const std::int64_t payload = std::min<std::int64_t>(message.channel_left[channel], chunk_);
  const int port_id = message.group.first + channel;
  Port& port = ports_[port_id];
  Lane& lane = port.lanes[lane_at(port, message.lane)];
  const double wire = wire_bytes(port, payload);
  if (!message.granted) {
    const int engine_input =
        static_cast<int>(ports_.size()) + message.record.src * spec_.node.dma_engines + message.engine;
    if (!admit(port_id, lane, Request{engine_input, -1, -1, id, wire})) return;
  }
  message.granted = false;
  const int frame_id = new_frame();
  Frame& frame = frames_[frame_id];
  frame.message = id;
  frame.payload = static_cast<int>(payload);
  frame.wire = static_cast<int>(wire);
  frame.channel = channel;
  frame.port = port_id;
  frame.tail_ready = now() + static_cast<double>(payload) / spec_.node.dma_bandwidth;
  const bool cut_through = spec_.hub.forwarding == Forwarding::cut_through;
  frame.eligible = cut_through ? now() : frame.tail_ready;
  engine_.schedule_at(frame.eligible, tag(kEnqueue, frame_id));

  message.channel_left[channel] -= payload;
  ++message.frames_emitted;
  for (int step = 1; step <= message.group.count; ++step) {
    const int next = (channel + step) % message.group.count;
    if (message.channel_left[next] > 0) {
      message.next_channel = next;
      break;
    }
  }
  if (message.frames_emitted < message.frames_total) {
    engine_.schedule_at(frame.tail_ready, tag(kFrameReady, id));
    return;
  }
  // Read completely: the engine takes the next message once this read ends.
  const int read_engine = message.record.src * spec_.node.dma_engines + message.engine;
  engine_.schedule_at(frame.tail_ready, tag(kReadEngineFree, read_engine));
}

void Network::try_start(int port_id) {
  Port& port = ports_[port_id];
  if (port.busy) return;
  const int lanes = static_cast<int>(port.lanes.size());
  const bool round_robin = port.round_robin;
  for (int k = 0; k < lanes; ++k) {
    const int lane = round_robin ? (port.rr + k) % lanes : k;
    if (port.lanes[lane].frames.empty()) continue;
    int frame_id = port.lanes[lane].frames.front();
    if (frame_id < 0) frame_id = take_from_run(port.lanes[lane]);
    Frame& frame = frames_[frame_id];
    const Message& message = messages_[frame.message];
    int next = -1;  // the frame is delivered at the peer
    if (port.peer != message.record.dst) {
      const PortGroup group = topology_->route(port.peer, message.record.dst, message.plane);
      next = group.first + frame.channel % group.count;
      if (!frame.granted) {
        if (frame.requested) continue;  // the grant wakes this port
        Port& next_port = ports_[next];
        Lane& next_lane = next_port.lanes[lane_at(next_port, message.lane)];
        const double wire = wire_bytes(next_port, frame.payload);
        if (!admit(next, next_lane, Request{port_id, port_id, frame_id, -1, wire})) {
          frame.requested = true;
          continue;
        }
      }
      frame.granted = false;
    }
    port.lanes[lane].frames.pop_front();
    ++port.lanes[lane].popped;
    port.rr = (lane + 1) % lanes;
    frame.port = next;
    transmit(port_id, lane, frame_id);
    return;
  }
}

// A sender gets a place in `lane` at once only if nobody waits for one;
// otherwise it joins the waiting senders, served by grant().
bool Network::admit(int port_id, Lane& lane, const Request& request) {
  if (lane.waiting.empty() && lane.reserved + request.wire <= ports_[port_id].capacity) {
    lane.reserved += request.wire;
    lane.last_input = request.input;
    return true;
  }
  lane.waiting.push_back(request);
  return false;
}

// Room was freed in `lane`: the waiting senders get it in round robin over
// the FIFO's inputs, starting after the input served last, as long as the
// next one's frame fits (no overtaking, so a long frame is not starved).
void Network::grant(int port_id, Lane& lane) {
  const int inputs = static_cast<int>(ports_.size()) + topology_->nodes() * spec_.node.dma_engines;
  while (!lane.waiting.empty()) {
    const auto turn = [&](const Request& r) { return ((r.input - lane.last_input - 1) % inputs + inputs) % inputs; };
    const auto next = std::min_element(lane.waiting.begin(), lane.waiting.end(),
                                       [&](const Request& a, const Request& b) { return turn(a) < turn(b); });
    if (lane.reserved + next->wire > ports_[port_id].capacity) return;
    const Request request = *next;
    lane.waiting.erase(next);
    lane.reserved += request.wire;
    lane.last_input = request.input;
    if (request.frame >= 0) {
      frames_[request.frame].requested = false;
      frames_[request.frame].granted = true;
      engine_.schedule_at(now(), tag(kWakePort, request.port));
    } else {
      messages_[request.message].granted = true;
      engine_.schedule_at(now(), tag(kFrameReady, request.message));
    }
  }
}

void Network::transmit(int port_id, int lane, int frame_id) {
  Port& port = ports_[port_id];
  Frame& frame = frames_[frame_id];
  const Message& message = messages_[frame.message];
  const double serialization = frame.wire / port.rate;
  // Cutting through, the frame may not leave faster than its tail arrives.
  double start = std::max(now(), frame.tail_ready - serialization);
  port.stats.wait_sum += start - frame.enqueued;
  if (port.wait_sink) port.wait_sink->push_back(start - frame.enqueued);
  double end = start + serialization;
  // A frame whose CRC fails at the receiver is sent again once the request
  // to resend has come back over the link; each of the segment's frames
  // that carry the chunk fails on its own.
  const Framing& framing = *port.framing;
  if (framing.bit_error_rate > 0.0) {
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    std::int64_t left = frame.payload;
    do {
      const std::int64_t piece = std::min<std::int64_t>(left, framing.max_payload);
      const double error = framing.frame_error_probability(piece);
      while (draw(rng_) < error) {
        ++port.stats.retransmissions;
        end += 2.0 * port.latency + static_cast<double>(framing.wire_bytes(piece)) / port.rate;
      }
      left -= piece;
    } while (left > 0);
    start = end - serialization;  // the head of the transmission that got through
  }
  if (fast_forward_ && port.device == message.record.src) first_hop_sent(frame.message);
  port.busy = true;
  port.in_flight_lane = lane;
  port.in_flight_wire = frame.wire;
  if (frame.port >= 0) frame.wire = static_cast<int>(wire_bytes(ports_[frame.port], frame.payload));
  ++port.stats.frames;
  port.stats.wire_bytes += frame.wire;
  port.stats.busy_time += end - start;
  engine_.schedule_at(end, tag(kPortFree, port_id));

  const double head = start + port.latency + port.peer_routing_latency;
  const double tail = end + port.latency + port.peer_routing_latency;
  if (port.peer == message.record.dst) {
    frame.first_byte = head + spec_.node.app_latency;
    engine_.schedule_at(tail, tag(kDeliver, frame_id));
    return;
  }
  frame.tail_ready = tail;
  frame.eligible = port.peer_cuts_through ? head : tail;
  engine_.schedule_at(frame.eligible, tag(kEnqueue, frame_id));
}

void Network::port_free(int port_id) {
  Port& port = ports_[port_id];
  port.busy = false;
  Lane& lane = port.lanes[port.in_flight_lane];
  lane.reserved -= port.in_flight_wire;
  grant(port_id, lane);
  try_start(port_id);
}

void Network::deliver(int frame_id) {
  const Frame frame = frames_[frame_id];
  free_frames_.push_back(frame_id);
  Message& message = messages_[frame.message];
  MessageRecord& record = message.record;
  record.first_byte = std::min(record.first_byte, frame.first_byte);
  const int engines = spec_.node.dma_engines;
  if (message.write_engine < 0) {
    // The message's first frame goes to the write engine that is free first.
    const auto first = write_free_.begin() + record.dst * engines;
    message.write_engine = static_cast<int>(std::min_element(first, first + engines) - first);
  }
  double& write_free = write_free_[record.dst * engines + message.write_engine];
  write_free = std::max(write_free, now() + spec_.node.app_latency) + frame.payload / spec_.node.dma_bandwidth;
  record.done = std::max(record.done, write_free);
  if (++message.frames_done == message.frames_total) {
    record.done = received(record.dst, record.done);
    engine_.schedule_at(record.done, tag(kDone, frame.message));
  }
}

}  // namespace fpgacomm::fabric
