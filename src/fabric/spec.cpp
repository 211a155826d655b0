#include "fabric/spec.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace fpgacomm::fabric {

TopologyKind topology_kind(const std::string& name) {
  std::string names;
  for (const auto& [kind, known] : kTopologyNames) {
    if (name == known) return kind;
    names += std::string(names.empty() ? "" : ", ") + known;
  }
  throw UsageError("fabric: unknown topology '" + name + "'; use one of " + names);
}

std::string topology_name(TopologyKind kind) {
  for (const auto& [known, name] : kTopologyNames)
    if (kind == known) return name;
  throw Error("fabric: a topology without a name");
}

void FabricSpec::validate() const {
  framing.validate();
  if (trunk_framing) trunk_framing->validate();
  access_link.validate("the access link");
  trunk_link.validate("the trunk link");
  if (topology == TopologyKind::cluster) host_link.validate("the host link (memory bus)");
  // A buffer holds at least one chunk, on whichever segment frames it longest.
  const double largest_frame = static_cast<double>(
      std::max(framing.chunk_wire_bytes(chunk_bytes()), segment_framing(true).chunk_wire_bytes(chunk_bytes())));
  hub.validate("the nodes' router", largest_frame);
  sw.validate("the switches'", largest_frame);
  host.validate("the hosts'", largest_frame);
  node.validate();
  host_costs.validate();
  if (virtual_ports_per_port < 1) {
    throw UsageError("fabric: virtual_ports_per_port must be at least 1, not " +
                     std::to_string(virtual_ports_per_port));
  }
  for (const LinkScale& scale : link_scales) {
    if (!(scale.factor > 0.0) || !std::isfinite(scale.factor)) {
      throw UsageError("fabric: a link scaled by " + std::to_string(scale.factor) +
                       " has no bandwidth; give a positive factor");
    }
  }
}

}  // namespace fpgacomm::fabric
