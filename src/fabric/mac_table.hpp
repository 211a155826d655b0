// VCSN's virtual ports (the VCSN paper section 3.4): each physical port of a node
// carries several virtual ports, multiplexed onto it by the MUX (the
// router's lanes, round robin) and demultiplexed at the receiver by the
// DMUX. The host writes each node's MAC table: which virtual port, by MAC
// address, every local virtual port sends to. The encoder puts that address
// in the Ethernet header, so what a virtual port sends reaches exactly the
// virtual port its entry names.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/spec.hpp"

namespace fpgacomm::fabric {

struct VirtualPort {
  int node = 0;
  int port = 0;   // physical port (plane)
  int vport = 0;  // virtual port on it
};

// A locally administered unicast address per virtual port,
// 02:NN:NN:NN:PP:VV (node, physical port, virtual port).
std::uint64_t mac_address(const VirtualPort& port);
std::string mac_to_string(std::uint64_t address);

class MacTable {
 public:
  // Checks every entry of spec.mac_table against the fabric's nodes, ports
  // and virtual ports; throws UsageError naming the bad entry.
  MacTable(const FabricSpec& spec, int planes);

  // The virtual port that `source` sends to.
  const VirtualPort& destination(const VirtualPort& source) const;

 private:
  int nodes_, planes_, vports_;
  std::vector<VirtualPort> destination_;  // per source virtual port
  std::vector<bool> connected_;

  int index(const VirtualPort& port) const { return (port.node * planes_ + port.port) * vports_ + port.vport; }
  bool exists(const VirtualPort& port) const;
  std::string name(const VirtualPort& port) const;
};

}  // namespace fpgacomm::fabric
