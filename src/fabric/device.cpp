#include "fabric/device.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fpgacomm::fabric {

Forwarding parse_forwarding(const std::string& name) {
  if (name == "store_and_forward") return Forwarding::store_and_forward;
  if (name == "cut_through") return Forwarding::cut_through;
  throw UsageError("fabric: unknown forwarding mode '" + name + "'; use store_and_forward or cut_through");
}

Arbitration parse_arbitration(const std::string& name) {
  if (name == "round_robin") return Arbitration::round_robin;
  if (name == "strict_priority") return Arbitration::strict_priority;
  throw UsageError("fabric: unknown arbitration '" + name + "'; use round_robin or strict_priority");
}

std::string to_string(Forwarding forwarding) {
  return forwarding == Forwarding::cut_through ? "cut_through" : "store_and_forward";
}

std::string to_string(Arbitration arbitration) {
  return arbitration == Arbitration::round_robin ? "round_robin" : "strict_priority";
}

void DeviceSpec::validate(const std::string& what, double largest_frame_bytes) const {
  if (!(routing_latency >= 0.0) || !std::isfinite(routing_latency)) {
    throw UsageError("fabric: " + what + " routing latency " + std::to_string(routing_latency) +
                     " s; give a finite value of 0 or more");
  }
  if (lanes < 1) {
    throw UsageError("fabric: " + what + " has " + std::to_string(lanes) + " lanes; give at least 1");
  }
  if (!(buffer_bytes >= largest_frame_bytes)) {
    throw UsageError("fabric: " + what + " buffer of " + std::to_string(buffer_bytes) +
                     " bytes is smaller than one packet (" + std::to_string(largest_frame_bytes) +
                     " bytes on the wire); give a buffer of at least one packet");
  }
}

void NodeSpec::validate() const {
  if (!(app_latency >= 0.0) || !std::isfinite(app_latency) || !(dma_latency >= 0.0) || !std::isfinite(dma_latency)) {
    throw UsageError("fabric: node latencies must be finite and 0 or more");
  }
  if (dma_engines < 1) {
    throw UsageError("fabric: a node needs at least 1 DMA engine, not " + std::to_string(dma_engines));
  }
  if (!(dma_bandwidth > 0.0)) {
    throw UsageError("fabric: DMA bandwidth " + std::to_string(dma_bandwidth) +
                     " B/s; give a positive bandwidth (zero bandwidth moves no data)");
  }
  const std::pair<const char*, double> costs[] = {{"send_overhead", send_overhead},
                                                  {"recv_overhead", recv_overhead},
                                                  {"gap", gap},
                                                  {"rendezvous_latency", rendezvous_latency}};
  for (const auto& [name, value] : costs) {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      throw UsageError(std::string("fabric: ") + name + " " + std::to_string(value) +
                       " s; give a finite time of 0 or more");
    }
  }
  if (eager_threshold < 0) {
    throw UsageError("fabric: eager_threshold " + std::to_string(eager_threshold) + " B; give 0 or more bytes");
  }
}

}  // namespace fpgacomm::fabric
