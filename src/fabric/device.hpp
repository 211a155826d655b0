// Parameters of the things that hold and forward frames: the router (hub)
// inside each node, switches, hosts, and the node's own data movers.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

namespace fpgacomm::fabric {

enum class Forwarding {
  store_and_forward,  // a frame leaves only once its tail has arrived
  cut_through,        // a frame leaves once its head is routed
};

enum class Arbitration {
  round_robin,      // the lanes of an output take turns
  strict_priority,  // the lowest-numbered non-empty lane always goes first
};

Forwarding parse_forwarding(const std::string& name);    // "store_and_forward" | "cut_through"
Arbitration parse_arbitration(const std::string& name);  // "round_robin" | "strict_priority"
std::string to_string(Forwarding forwarding);
std::string to_string(Arbitration arbitration);

// A switch, a hub (a node's router) or a host on the path.
struct DeviceSpec {
  double routing_latency = 0.0;  // Tr: from a frame's arrival to its being routed
  Forwarding forwarding = Forwarding::cut_through;
  Arbitration arbitration = Arbitration::round_robin;
  int lanes = 1;                                                  // FIFOs per output: priority levels or virtual ports
  double buffer_bytes = std::numeric_limits<double>::infinity();  // per lane

  void validate(const std::string& what, double largest_frame_bytes) const;
};

// What a node adds around its router: the user logic, and DMA engines that
// read the message from on-board memory and write it at the receiver.
struct NodeSpec {
  double app_latency = 0.0;                                        // Ta: user logic <-> router, paid at each end
  int dma_engines = 1;                                             // read/write pairs working independently
  double dma_bandwidth = std::numeric_limits<double>::infinity();  // bytes/s per engine
  double dma_latency = 0.0;                                        // from a read request to its first data
  // A host's MPI software costs per message (LogGP's o and g; the cluster
  // preset): the sender's overhead before the message leaves, the
  // receiver's after its last byte arrived, the least time between two
  // messages' starts (and two receptions' ends) at one node, and the
  // rendezvous of long messages.
  double send_overhead = 0.0;
  double recv_overhead = 0.0;
  double gap = 0.0;
  std::int64_t eager_threshold = std::numeric_limits<std::int64_t>::max();  // bytes; longer: rendezvous
  double rendezvous_latency = 0.0;                                          // added to a rendezvous message's start
  bool has_message_costs() const { return send_overhead > 0.0 || recv_overhead > 0.0 || gap > 0.0; }

  void validate() const;
};

}  // namespace fpgacomm::fabric
