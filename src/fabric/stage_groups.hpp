// Exact reuse of identical work within a staged schedule. After a barrier a
// stage starts from an empty network, and most of its transfers never meet:
// a transfer only interacts with another through an output port (its FIFOs,
// credits and arbitration), its source's read engines or its destination's
// write engines. StageGroups splits a stage into groups that share none of
// these and describes each by a key that survives relabelling: per transfer
// its bytes, lane and path, with ports, sources and destinations numbered in
// order of first appearance; per port its class (rate, latency, framing,
// buffer, lanes, the kinds of device at both ends); and, where two inputs
// compete for one port, the order round robin serves them in. Groups with
// equal keys take bit-identical times from the same start, so each distinct
// group needs simulating only once (docs/FABRIC.md, "Exact reuse").
#pragma once
#include <cstdint>
#include <vector>

#include "fabric/network.hpp"
#include "fabric/topology.hpp"

namespace fpgacomm::fabric {

struct StageTransfer {
  int src = 0, dst = 0;
  std::int64_t bytes = 0;
  int port = 0;  // physical port (plane) at the source
  int lane = 0;  // virtual port on it, or priority level
};

class StageGroups {
 public:
  explicit StageGroups(const Network& network);

  // Splits one stage; throws UsageError for a transfer that cannot be routed.
  void split(const std::vector<StageTransfer>& transfers);
  int groups() const { return static_cast<int>(group_begin_.size()) - 1; }
  // Indices into the stage's transfers, in their order.
  const int* members_begin(int group) const { return members_.data() + group_begin_[group]; }
  const int* members_end(int group) const { return members_.data() + group_begin_[group + 1]; }
  // The group's key (valid until the next call).
  const std::vector<std::int64_t>& key(int group);

 private:
  int find(int t);
  void claim(int resource, int t);

  const Network& network_;
  const Topology& topology_;
  int ports_ = 0, nodes_ = 0;
  std::vector<StageTransfer> transfers_;  // the stage split last
  // Per transfer: its path, one port group per hop, flat.
  std::vector<int> path_begin_;
  std::vector<PortGroup> hops_;
  std::vector<int> parent_;
  // Per resource (ports, then read engines per node, then write engines per
  // node): the transfer that claimed it first in this stage.
  std::vector<int> owner_;
  std::vector<std::uint32_t> owner_stamp_;
  std::uint32_t stage_stamp_ = 0;
  std::vector<int> group_of_root_, group_begin_, members_;
  // Numbering in order of first appearance, while one key is built.
  std::vector<int> port_number_, src_number_, dst_number_;
  std::vector<std::uint32_t> port_stamp_, src_stamp_, dst_stamp_;
  std::uint32_t key_stamp_ = 0;
  std::vector<int> numbered_ports_;
  struct Feed {
    int port;            // the fed port's number in the key
    std::int64_t input;  // the input's global number, which round robin orders by
    std::int64_t code;   // the input in the key: a port number, or -(source number) - 1 for DMA
  };
  std::vector<Feed> feeds_;
  std::vector<std::int64_t> key_;
};

}  // namespace fpgacomm::fabric
