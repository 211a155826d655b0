#include "fabric/mac_table.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace fpgacomm::fabric {

namespace {

constexpr std::uint64_t kLocallyAdministered = std::uint64_t{0x02} << 40;
constexpr std::uint64_t kNodeLimit = std::uint64_t{1} << 24;

}  // namespace

std::uint64_t mac_address(const VirtualPort& port) {
  return kLocallyAdministered | (static_cast<std::uint64_t>(port.node) << 16) |
         (static_cast<std::uint64_t>(port.port) << 8) | static_cast<std::uint64_t>(port.vport);
}

std::string mac_to_string(std::uint64_t address) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", static_cast<unsigned>((address >> 40) & 0xff),
                static_cast<unsigned>((address >> 32) & 0xff), static_cast<unsigned>((address >> 24) & 0xff),
                static_cast<unsigned>((address >> 16) & 0xff), static_cast<unsigned>((address >> 8) & 0xff),
                static_cast<unsigned>(address & 0xff));
  return text;
}

MacTable::MacTable(const FabricSpec& spec, int planes)
    : nodes_(spec.nodes), planes_(planes), vports_(spec.virtual_ports_per_port) {
  if (static_cast<std::uint64_t>(nodes_) >= kNodeLimit || planes_ > 256 || vports_ > 256) {
    throw UsageError("fabric: MAC addresses hold fewer than 2^24 nodes and 256 ports and virtual ports");
  }
  const std::size_t slots = static_cast<std::size_t>(nodes_) * planes_ * vports_;
  destination_.resize(slots);
  connected_.assign(slots, false);
  std::vector<int> sender(slots, -1);  // per destination: the entry that sends to it
  for (std::size_t e = 0; e < spec.mac_table.size(); ++e) {
    const MacEntry& entry = spec.mac_table[e];
    const VirtualPort source{entry.node, entry.port, entry.vport};
    if (!exists(source)) {
      throw UsageError("fabric: MAC table entry " + std::to_string(e) + " is for " + name(source) +
                       ", which this fabric does not have (" + std::to_string(nodes_) + " nodes, " +
                       std::to_string(planes_) + " port(s) of " + std::to_string(vports_) + " virtual port(s))");
    }
    const std::uint64_t address = entry.destination;
    const VirtualPort target{static_cast<int>((address >> 16) & 0xffffff), static_cast<int>((address >> 8) & 0xff),
                             static_cast<int>(address & 0xff)};
    if ((address & ~((std::uint64_t{1} << 40) - 1)) != kLocallyAdministered || !exists(target)) {
      throw UsageError("fabric: MAC table entry for " + name(source) + " sends to unknown MAC " +
                       mac_to_string(address) +
                       ": no virtual port of this fabric has it; use "
                       "fabric.mac_address(node, port, vport)");
    }
    if (target.port != source.port) {
      throw UsageError("fabric: " + name(source) + " cannot reach " + name(target) + ": physical port " +
                       std::to_string(source.port) +
                       " is on another plane; "
                       "connect virtual ports of the same physical port number");
    }
    if (target.node == source.node) {
      throw UsageError("fabric: " + name(source) + " is connected to its own node; give another node");
    }
    const int slot = index(target);
    if (sender[slot] >= 0 && sender[slot] != index(source)) {
      // The VCSN paper section 3.4: the congestion control needs one sender per virtual port.
      throw UsageError("fabric: two virtual ports send to " + name(target) +
                       "; VCSN connects one virtual port to one other at a time");
    }
    sender[slot] = index(source);
    destination_[index(source)] = target;
    connected_[index(source)] = true;
  }
}

bool MacTable::exists(const VirtualPort& port) const {
  return port.node >= 0 && port.node < nodes_ && port.port >= 0 && port.port < planes_ && port.vport >= 0 &&
         port.vport < vports_;
}

std::string MacTable::name(const VirtualPort& port) const {
  return "virtual port " + std::to_string(port.vport) + " of port " + std::to_string(port.port) + " of node " +
         std::to_string(port.node);
}

const VirtualPort& MacTable::destination(const VirtualPort& source) const {
  if (!exists(source)) {
    throw UsageError("fabric: there is no " + name(source) + " in this fabric (" + std::to_string(planes_) +
                     " port(s) of " + std::to_string(vports_) + " virtual port(s) per node)");
  }
  if (!connected_[index(source)]) {
    throw UsageError("fabric: " + name(source) +
                     " has no entry in its node's MAC table; "
                     "connect it to a virtual port first (Fabric.connect)");
  }
  return destination_[index(source)];
}

}  // namespace fpgacomm::fabric
