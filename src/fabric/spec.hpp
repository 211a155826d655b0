// Everything that describes one simulated fabric. The Python presets fill
// it in (with the papers' numbers and where they come from); the simulator
// only reads it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fabric/device.hpp"
#include "fabric/framing.hpp"
#include "fabric/host.hpp"
#include "fabric/link.hpp"

namespace fpgacomm::fabric {

enum class TopologyKind {
  ring,       // 1-D ring of direct links (DCN); ports/2 parallel links per neighbour
  torus,      // 2-D torus of direct links (CusComNet), routed by row then column
  switched,   // one switch per node port: 1 port = one switch, 2 = VCSN's dual plane
  fat_tree,   // a fat tree of k-port switches per node port
  host_path,  // FPGA -> PCIe -> host -> network switch -> host -> PCIe -> FPGA
  cluster,    // MPI ranks on hosts: shared memory inside a host, NICs and a switch between hosts
};

// Each topology's name, as presets and platform files give it: the one list of them.
inline constexpr std::pair<TopologyKind, const char*> kTopologyNames[] = {
    {TopologyKind::ring, "ring"},         {TopologyKind::torus, "torus"},         {TopologyKind::switched, "switched"},
    {TopologyKind::fat_tree, "fat_tree"}, {TopologyKind::host_path, "host_path"}, {TopologyKind::cluster, "cluster"},
};

// The topology of that name; a UsageError naming every topology for any other.
TopologyKind topology_kind(const std::string& name);
std::string topology_name(TopologyKind kind);

// One link made slower (or faster), in both directions: the link that
// leaves `device` through its `port`-th port.
struct LinkScale {
  int device = 0;
  int port = 0;
  double factor = 1.0;
};

// One entry of a node's MAC table (VCSN, the VCSN paper section 3.4): what
// virtual port `vport` of physical port `port` of `node` sends goes to the
// virtual port whose MAC address is `destination` (see mac_table.hpp).
struct MacEntry {
  int node = 0, port = 0, vport = 0;
  std::uint64_t destination = 0;
};

struct FabricSpec {
  TopologyKind topology = TopologyKind::ring;
  int nodes = 2;
  int rows = 0, cols = 0;          // torus only
  int ports_per_node = 1;          // physical network ports of a node
  int switch_ports = 0;            // switched and fat_tree: ports of one switch
  int virtual_ports_per_port = 1;  // VCSN: virtual ports multiplexed on one physical port
  int fpgas_per_host = 2;          // host_path and cluster: nodes (FPGAs, ranks) per host

  Link access_link;  // node <-> its neighbour or first switch (PCIe on host_path, shared memory on cluster)
  Link trunk_link;   // switch <-> switch, host <-> network switch (cluster: rank <-> NIC <-> switch)
  Link host_link;    // cluster only: a host's memory bus, shared by its ranks' shared-memory copies
  // Each segment frames its own way: `framing` on access links (PCIe on
  // host_path), `trunk_framing` on trunk links, the same as `framing` when
  // unset. Messages move as chunks of the largest maximum payload of the
  // two; a segment with smaller frames carries a chunk as several frames.
  Framing framing;
  std::optional<Framing> trunk_framing;
  DeviceSpec hub;   // the router inside each node
  DeviceSpec sw;    // switches
  DeviceSpec host;  // hosts on host_path
  NodeSpec node;
  HostCosts host_costs;
  std::vector<LinkScale> link_scales;
  std::vector<MacEntry> mac_table;  // VCSN's virtual links; empty elsewhere
  std::uint64_t seed = 1;

  const Framing& segment_framing(bool trunk) const { return trunk && trunk_framing ? *trunk_framing : framing; }
  // Payload bytes of the unit the simulator moves: one frame of the
  // segment with the largest frames.
  std::int64_t chunk_bytes() const {
    return trunk_framing ? std::max(framing.max_payload, trunk_framing->max_payload) : framing.max_payload;
  }

  // Throws UsageError naming the first impossible parameter and its fix.
  void validate() const;
};

}  // namespace fpgacomm::fabric
