// The graph of a fabric and its routing function. Devices 0..nodes-1 are
// the nodes (FPGAs); switches and hosts follow. Every link is a pair of
// output ports, one per direction.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabric/spec.hpp"

namespace fpgacomm::fabric {

enum class DeviceRole { node, switch_, host };

// What Topology::build will make of a spec, from each topology's closed
// form, known before anything is built (the resource estimates use it).
struct TopologyShape {
  std::int64_t links = 0;   // links (pairs of output ports), all planes
  int levels = 0;           // switch levels a path crosses at most (0 for direct networks)
  int longest_path = 0;     // links between the two farthest nodes
  double mean_links = 0.0;  // links between two distinct nodes, on average over all pairs
};

struct PortInfo {
  int device = 0;      // the device this output port belongs to
  int peer = 0;        // the device at the other end of its link
  int reverse = 0;     // the port of the same link in the other direction
  bool trunk = false;  // a switch-side link (trunk_link) rather than an access link
  bool bus = false;    // a host's memory bus (host_link, cluster only)
};

// Parallel ports towards the same next device (channels of one neighbour);
// a frame takes first + channel % count.
struct PortGroup {
  int first = -1;
  int count = 0;
};

class Topology {
 public:
  virtual ~Topology() = default;
  // Builds the topology the spec names; throws UsageError for impossible sizes.
  static std::unique_ptr<Topology> build(const FabricSpec& spec);
  // The shape build() would give, in O(levels): throws UsageError as build() does.
  static TopologyShape shape(const FabricSpec& spec);

  int nodes() const { return nodes_; }
  int devices() const { return static_cast<int>(roles_.size()); }
  DeviceRole role(int device) const { return roles_[device]; }
  const std::vector<PortInfo>& ports() const { return ports_; }
  const std::vector<int>& ports_of(int device) const { return device_ports_[device]; }
  // Source node's physical ports a message may leave by (the planes).
  virtual int planes() const { return 1; }
  // Switch levels a path crosses at most (0 for direct networks).
  virtual int levels() const { return 0; }

  // The output ports of `device` towards node `dst`, for a message that left
  // its source by physical port `plane`. Unroutable input throws UsageError.
  virtual PortGroup route(int device, int dst, int plane) const = 0;
  // Links crossed from node src to node dst (0 when src == dst), by the
  // topology's closed form: O(1), never walking the path.
  int path_links(int src, int dst, int plane) const;
  // path_links from src to every node: O(n).
  std::vector<int> distances(int src, int plane) const;
  // The lowest-numbered node `links` links from src (links < 0: the
  // nearest other node), or -1 where none is: O(n).
  int node_at(int src, int links, int plane) const;
  virtual std::string describe() const = 0;
  // Throws UsageError unless `node` is one of the fabric's nodes; `what`
  // names its role ("source", "destination").
  void check_node(int node, const char* what) const;

 protected:
  explicit Topology(int nodes);
  // path_links for two distinct nodes of the fabric, which route() follows.
  virtual int links_between(int src, int dst, int plane) const = 0;
  int add_device(DeviceRole role);
  // Adds `count` parallel links between a and b; returns the first port
  // from a to b (the others follow it in a's and the port list).
  int connect(int a, int b, bool trunk, int count = 1, bool bus = false);

 private:
  int nodes_;
  std::vector<DeviceRole> roles_;
  std::vector<PortInfo> ports_;
  std::vector<std::vector<int>> device_ports_;
  std::int64_t links_made_ = 0;
};

}  // namespace fpgacomm::fabric
