// Everything that describes one simulated fabric. The Python presets fill
// it in (with the seeds' numbers and where they come from); the simulator
// only reads it.
#pragma once
#include <cstdint>
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
};

// One link made slower (or faster), in both directions: the link that
// leaves `device` through its `port`-th port.
struct LinkScale {
  int device = 0;
  int port = 0;
  double factor = 1.0;
};

struct FabricSpec {
  TopologyKind topology = TopologyKind::ring;
  int nodes = 2;
  int rows = 0, cols = 0;         // torus only
  int ports_per_node = 1;         // physical network ports of a node
  int switch_ports = 0;           // switched and fat_tree: ports of one switch
  int virtual_ports_per_port = 1; // VCSN: virtual ports multiplexed on one physical port
  int fpgas_per_host = 2;         // host_path only

  Link access_link;  // node <-> its neighbour or first switch (PCIe on host_path)
  Link trunk_link;   // switch <-> switch, host <-> network switch
  Framing framing;
  DeviceSpec hub;    // the router inside each node
  DeviceSpec sw;     // switches
  DeviceSpec host;   // hosts on host_path
  NodeSpec node;
  HostCosts host_costs;
  std::vector<LinkScale> link_scales;
  std::uint64_t seed = 1;

  // Throws UsageError naming the first impossible parameter and its fix.
  void validate() const;
};

}  // namespace fpgacomm::fabric
