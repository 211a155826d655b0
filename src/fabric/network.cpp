#include "fabric/network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace fpgacomm::fabric {

Network::Network(const FabricSpec& spec)
    : spec_(spec), topology_((spec.validate(), Topology::build(spec))), rng_(spec.seed) {
  const auto& infos = topology_->ports();
  ports_.resize(infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    Port& port = ports_[i];
    port.device = infos[i].device;
    port.peer = infos[i].peer;
    const Link& link = infos[i].trunk ? spec_.trunk_link : spec_.access_link;
    port.rate = link.data_rate();
    port.latency = link.latency;
    const DeviceSpec& device = device_spec(port.device);
    port.capacity = device.buffer_bytes;
    port.lanes.resize(device.lanes);
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
  engine_queue_.resize(slots);
  write_free_.assign(slots, 0.0);
}

const DeviceSpec& Network::device_spec(int device) const {
  switch (topology_->role(device)) {
    case DeviceRole::node: return spec_.hub;
    case DeviceRole::switch_: return spec_.sw;
    case DeviceRole::host: return spec_.host;
  }
  return spec_.sw;
}

// A device with fewer lanes than the message's lane (a switch without
// priorities) queues it in its last lane.
int Network::lane_at(int device, int lane) const { return std::min(lane, device_spec(device).lanes - 1); }

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
  if (free_messages_.empty()) {
    messages_.emplace_back();
    return static_cast<int>(messages_.size()) - 1;
  }
  const int id = free_messages_.back();
  free_messages_.pop_back();
  messages_[id] = Message{};
  return id;
}

void Network::send(int src, int dst, std::int64_t bytes, double start, int port, int lane, Completion done) {
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
  const int id = new_message();
  Message& message = messages_[id];
  message.record = MessageRecord{src, dst, bytes, start, std::numeric_limits<double>::infinity(), start};
  message.lane = lane;
  message.plane = port;
  message.engine = port % spec_.node.dma_engines;
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
  const std::int64_t max_payload = spec_.framing.max_payload;
  for (std::int64_t left : message.channel_left) message.frames_total += (left + max_payload - 1) / max_payload;
  if (message.frames_total == 0) message.frames_total = 1;  // an empty message is one empty frame
  engine_.schedule_at(start, this, tag(kStart, id));
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
  engine_.schedule_at(std::max(time, now()), this, tag(kTimer, id));
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
      const Message& message = messages_[id];
      auto& queue = engine_queue_[message.record.src * spec_.node.dma_engines + message.engine];
      queue.push_back(static_cast<int>(id));
      if (queue.size() == 1) begin(static_cast<int>(id));
      break;
    }
    case kBegin: begin(static_cast<int>(id)); break;
    case kFrameReady: frame_ready(static_cast<int>(id)); break;
    case kEnqueue: {
      Frame& frame = frames_[id];
      Port& port = ports_[frame.port];
      frame.enqueued = now();
      port.lanes[lane_at(port.device, messages_[frame.message].lane)].frames.push_back(static_cast<int>(id));
      try_start(frame.port);
      break;
    }
    case kPortFree: port_free(static_cast<int>(id)); break;
    case kDeliver: deliver(static_cast<int>(id)); break;
    case kDone: {
      Message& message = messages_[id];
      const MessageRecord record = message.record;
      Completion done = std::move(message.on_done);
      free_messages_.push_back(static_cast<int>(id));
      --live_messages_;
      if (done) done(record);
      break;
    }
    case kWakePort: try_start(static_cast<int>(id)); break;
    case kTimer: {
      std::function<void()> action = std::move(timers_[id]);
      free_timers_.push_back(static_cast<int>(id));
      action();
      break;
    }
  }
}

// The DMA engine starts reading the message: after the user logic hands it
// over (Ta) and the memory answers the first request. An empty message (a
// short active message, an acknowledgement) reads no memory.
void Network::begin(int id) {
  const double read = messages_[id].record.bytes > 0 ? spec_.node.dma_latency : 0.0;
  engine_.schedule_in(spec_.node.app_latency + read, this, tag(kFrameReady, id));
}

// The DMA engine has the head of the next frame; it needs room in the
// output lane before it goes on.
void Network::frame_ready(int id) {
  Message& message = messages_[id];
  const int channel = message.next_channel;
  const std::int64_t payload = std::min<std::int64_t>(message.channel_left[channel], spec_.framing.max_payload);
  const int port_id = message.group.first + channel;
  Port& port = ports_[port_id];
  Lane& lane = port.lanes[lane_at(port.device, message.lane)];
  const double wire = static_cast<double>(spec_.framing.wire_bytes(payload));
  if (lane.reserved + wire > port.capacity) {
    port.waiters.push_back(-1 - id);
    return;
  }
  lane.reserved += wire;
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
  engine_.schedule_at(frame.eligible, this, tag(kEnqueue, frame_id));

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
    engine_.schedule_at(frame.tail_ready, this, tag(kFrameReady, id));
    return;
  }
  // Read completely: the engine takes the next message once this read ends.
  auto& queue = engine_queue_[message.record.src * spec_.node.dma_engines + message.engine];
  queue.pop_front();
  if (!queue.empty()) engine_.schedule_at(frame.tail_ready, this, tag(kBegin, queue.front()));
}

void Network::try_start(int port_id) {
  Port& port = ports_[port_id];
  if (port.busy) return;
  const int lanes = static_cast<int>(port.lanes.size());
  const bool round_robin = device_spec(port.device).arbitration == Arbitration::round_robin;
  for (int k = 0; k < lanes; ++k) {
    const int lane = round_robin ? (port.rr + k) % lanes : k;
    if (port.lanes[lane].frames.empty()) continue;
    const int frame_id = port.lanes[lane].frames.front();
    Frame& frame = frames_[frame_id];
    const Message& message = messages_[frame.message];
    int next = -1;  // the frame is delivered at the peer
    if (port.peer != message.record.dst) {
      const PortGroup group = topology_->route(port.peer, message.record.dst, message.plane);
      next = group.first + frame.channel % group.count;
      Port& next_port = ports_[next];
      Lane& next_lane = next_port.lanes[lane_at(next_port.device, message.lane)];
      if (next_lane.reserved + frame.wire > next_port.capacity) {
        if (std::find(next_port.waiters.begin(), next_port.waiters.end(), port_id) == next_port.waiters.end()) {
          next_port.waiters.push_back(port_id);
        }
        continue;
      }
      next_lane.reserved += frame.wire;
    }
    port.lanes[lane].frames.pop_front();
    port.rr = (lane + 1) % lanes;
    frame.port = next;
    transmit(port_id, lane, frame_id);
    return;
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
  // to resend has come back over the link.
  const double error = spec_.framing.frame_error_probability(frame.payload);
  if (error > 0.0) {
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    while (draw(rng_) < error) {
      ++port.stats.retransmissions;
      start = end + 2.0 * port.latency;
      end = start + serialization;
    }
  }
  port.busy = true;
  port.in_flight_lane = lane;
  port.in_flight_wire = frame.wire;
  ++port.stats.frames;
  port.stats.wire_bytes += frame.wire;
  port.stats.busy_time += end - start;
  engine_.schedule_at(end, this, tag(kPortFree, port_id));

  const DeviceSpec& next = device_spec(port.peer);
  const double head = start + port.latency + next.routing_latency;
  const double tail = end + port.latency + next.routing_latency;
  if (port.peer == message.record.dst) {
    frame.first_byte = head + spec_.node.app_latency;
    engine_.schedule_at(tail, this, tag(kDeliver, frame_id));
    return;
  }
  frame.tail_ready = tail;
  frame.eligible = next.forwarding == Forwarding::cut_through ? head : tail;
  engine_.schedule_at(frame.eligible, this, tag(kEnqueue, frame_id));
}

void Network::port_free(int port_id) {
  Port& port = ports_[port_id];
  port.busy = false;
  port.lanes[port.in_flight_lane].reserved -= port.in_flight_wire;
  wake(port);
  try_start(port_id);
}

void Network::wake(Port& port) {
  for (std::int64_t waiter : port.waiters) {
    if (waiter >= 0) {
      engine_.schedule_at(now(), this, tag(kWakePort, waiter));
    } else {
      engine_.schedule_at(now(), this, tag(kFrameReady, -1 - waiter));
    }
  }
  port.waiters.clear();
}

void Network::deliver(int frame_id) {
  const Frame frame = frames_[frame_id];
  free_frames_.push_back(frame_id);
  Message& message = messages_[frame.message];
  MessageRecord& record = message.record;
  record.first_byte = std::min(record.first_byte, frame.first_byte);
  double& write_free = write_free_[record.dst * spec_.node.dma_engines + message.engine];
  write_free = std::max(write_free, now() + spec_.node.app_latency) + frame.payload / spec_.node.dma_bandwidth;
  record.done = std::max(record.done, write_free);
  if (++message.frames_done == message.frames_total) {
    engine_.schedule_at(record.done, this, tag(kDone, frame.message));
  }
}

}  // namespace fpgacomm::fabric
