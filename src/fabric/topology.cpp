#include "fabric/topology.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace fpgacomm::fabric {

Topology::Topology(int nodes) : nodes_(nodes) {
  for (int i = 0; i < nodes; ++i) add_device(DeviceRole::node);
}

int Topology::add_device(DeviceRole role) {
  roles_.push_back(role);
  device_ports_.emplace_back();
  return static_cast<int>(roles_.size()) - 1;
}

int Topology::connect(int a, int b, bool trunk, int count, bool bus) {
  // Building a topology of millions of nodes takes seconds: hear interrupts.
  if (++links_made_ % 32768 == 0) check_interrupt();
  const int forward = static_cast<int>(ports_.size());
  const int backward = forward + count;
  for (int i = 0; i < count; ++i) {
    ports_.push_back(PortInfo{a, b, backward + i, trunk, bus});
    device_ports_[a].push_back(forward + i);
  }
  for (int i = 0; i < count; ++i) {
    ports_.push_back(PortInfo{b, a, forward + i, trunk, bus});
    device_ports_[b].push_back(backward + i);
  }
  return forward;
}

void Topology::check_node(int node, const char* what) const {
  if (node < 0 || node >= nodes_) {
    throw UsageError(std::string("fabric: ") + what + " node " + std::to_string(node) + " is not in this fabric of " +
                     std::to_string(nodes_) + " nodes; give 0.." + std::to_string(nodes_ - 1));
  }
}

int Topology::path_links(int src, int dst, int plane) const {
  check_node(src, "source");
  check_node(dst, "destination");
  if (src == dst) return 0;
  route(src, dst, plane);  // O(1): throws for a plane the nodes lack
  return links_between(src, dst, plane);
}

std::vector<int> Topology::distances(int src, int plane) const {
  check_node(src, "source");
  route(src, src == 0 ? 1 : 0, plane);  // throws for a plane the nodes lack
  std::vector<int> links(nodes_, 0);
  for (int dst = 0; dst < nodes_; ++dst) {
    if ((dst & 0xFFFF) == 0) check_interrupt();
    if (dst != src) links[dst] = links_between(src, dst, plane);
  }
  return links;
}

int Topology::node_at(int src, int links, int plane) const {
  const std::vector<int> from = distances(src, plane);
  if (links < 0) {
    links = nodes_;
    for (int dst = 0; dst < nodes_; ++dst) {
      if (dst != src) links = std::min(links, from[dst]);
    }
  }
  for (int dst = 0; dst < nodes_; ++dst) {
    if (dst != src && from[dst] == links) return dst;
  }
  return -1;
}

namespace {

int positive_mod(int a, int n) { return ((a % n) + n) % n; }

// Levels of the fat tree of k-port switches over n nodes: one switch up to
// k nodes, leaf-spine up to k^2/2, three levels up to k^3/4, and each level
// more multiplies that by k/2.
int fat_tree_levels(long long n, int k) {
  if (n <= k) return 1;
  if (n <= 1LL * k * k / 2) return 2;
  int levels = 3;
  for (long long capacity = 1LL * k * k * k / 4; n > capacity; capacity *= k / 2) ++levels;
  return levels;
}

// Direct links between neighbours on a ring; ports/2 parallel links each way.
class Ring : public Topology {
 public:
  Ring(int nodes, int channels) : Topology(nodes), channels_(channels), right_(nodes), left_(nodes) {
    for (int i = 0; i < nodes; ++i) {
      const int next = (i + 1) % nodes;
      right_[i] = connect(i, next, false, channels);
      // The backward ports of a group are consecutive too, so the group
      // towards the left starts at the reverse of the first forward port.
      left_[next] = ports()[right_[i]].reverse;
    }
  }
  PortGroup route(int device, int dst, int) const override {
    check_node(dst, "destination");
    if (device == dst) throw UsageError("fabric: a message from node " + std::to_string(dst) + " to itself");
    const int right = positive_mod(dst - device, nodes());
    return PortGroup{right <= nodes() - right ? right_[device] : left_[device], channels_};
  }
  int links_between(int src, int dst, int) const override {
    const int right = positive_mod(dst - src, nodes());
    return std::min(right, nodes() - right);
  }
  std::string describe() const override {
    return "ring of " + std::to_string(nodes()) + " nodes, " + std::to_string(channels_) + " link(s) to each neighbour";
  }

 private:
  int channels_;
  std::vector<int> right_, left_;
};

// 2-D torus, shortest path along the row first, then along the column.
class Torus : public Topology {
 public:
  Torus(int rows, int cols)
      : Topology(rows * cols),
        rows_(rows),
        cols_(cols),
        east_(rows * cols, -1),
        west_(rows * cols, -1),
        south_(rows * cols, -1),
        north_(rows * cols, -1) {
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const int here = r * cols + c;
        if (cols > 1) {
          const int east = r * cols + (c + 1) % cols;
          east_[here] = connect(here, east, false);
          west_[east] = ports()[east_[here]].reverse;
        }
        if (rows > 1) {
          const int south = ((r + 1) % rows) * cols + c;
          south_[here] = connect(here, south, false);
          north_[south] = ports()[south_[here]].reverse;
        }
      }
    }
  }
  PortGroup route(int device, int dst, int) const override {
    check_node(dst, "destination");
    if (device == dst) throw UsageError("fabric: a message from node " + std::to_string(dst) + " to itself");
    const int dc = positive_mod(dst % cols_ - device % cols_, cols_);
    if (dc != 0) return PortGroup{dc <= cols_ - dc ? east_[device] : west_[device], 1};
    const int dr = positive_mod(dst / cols_ - device / cols_, rows_);
    return PortGroup{dr <= rows_ - dr ? south_[device] : north_[device], 1};
  }
  // Row first, then column, each the short way round.
  int links_between(int src, int dst, int) const override {
    const int dc = positive_mod(dst % cols_ - src % cols_, cols_);
    const int dr = positive_mod(dst / cols_ - src / cols_, rows_);
    return std::min(dc, cols_ - dc) + std::min(dr, rows_ - dr);
  }
  std::string describe() const override { return std::to_string(rows_) + "x" + std::to_string(cols_) + " torus"; }

 private:
  int rows_, cols_;
  std::vector<int> east_, west_, south_, north_;
};

// Switches that know, per destination node, which port leads there.
class SwitchedBase : public Topology {
 protected:
  using Topology::Topology;
  struct SwitchTable {
    std::vector<int> down;  // global port per child
    std::vector<int> up;    // global port per parent
  };
  std::vector<SwitchTable> tables_;  // per device; empty for nodes
  std::vector<int> node_port_;       // node * planes + plane -> its port

  int new_switch(DeviceRole role = DeviceRole::switch_) {
    const int id = add_device(role);
    tables_.resize(devices());
    return id;
  }
  void link_down(int parent, int child, bool trunk) {
    const int port = connect(parent, child, trunk);
    tables_.resize(devices());
    tables_[parent].down.push_back(port);
    if (role(child) == DeviceRole::node) {
      node_port_.push_back(ports()[port].reverse);
    } else {
      tables_[child].up.push_back(ports()[port].reverse);
    }
  }
  PortGroup node_route(int device, int dst, int plane) const {
    check_node(dst, "destination");
    if (device == dst) throw UsageError("fabric: a message from node " + std::to_string(dst) + " to itself");
    if (plane < 0 || plane >= planes()) {
      throw UsageError("fabric: physical port " + std::to_string(plane) + " does not exist; nodes have " +
                       std::to_string(planes()) + " port(s)");
    }
    return PortGroup{node_port_[device * planes() + plane], 1};
  }
};

// One switch per plane (VCSN's dual plane with 2 ports per node).
class Switched : public SwitchedBase {
 public:
  Switched(int nodes, int planes) : SwitchedBase(nodes), planes_(planes) {
    std::vector<int> switches;
    for (int p = 0; p < planes; ++p) switches.push_back(new_switch());
    node_port_.assign(nodes * planes, -1);
    for (int p = 0; p < planes; ++p) {
      for (int i = 0; i < nodes; ++i) {
        const int port = connect(switches[p], i, false);
        tables_.resize(devices());
        tables_[switches[p]].down.push_back(port);
        node_port_[i * planes + p] = ports()[port].reverse;
      }
    }
  }
  int planes() const override { return planes_; }
  int levels() const override { return 1; }
  PortGroup route(int device, int dst, int plane) const override {
    if (role(device) == DeviceRole::node) return node_route(device, dst, plane);
    check_node(dst, "destination");
    return PortGroup{tables_[device].down[dst], 1};
  }
  int links_between(int, int, int) const override { return 2; }
  std::string describe() const override {
    return std::to_string(planes_) + " plane(s) of one switch, " + std::to_string(nodes()) + " nodes";
  }

 private:
  int planes_;
};

// Fat trees of k-port switches, one per plane: one switch up to k nodes,
// leaf-spine up to k^2/2, three levels (pods of k/2 edge and k/2
// aggregation switches under (k/2)^2 cores) up to k^3/4. Upward ports are
// chosen by destination (d-mod-k), which spreads distinct destinations.
class FatTree : public SwitchedBase {
 public:
  FatTree(int nodes, int k, int planes)
      : SwitchedBase(nodes), k_(k), h_(k / 2), planes_(planes), levels_(fat_tree_levels(nodes, k)) {
    block_.assign(levels_ + 1, 1);
    for (int level = 1; level <= levels_; ++level) block_[level] = block_[level - 1] * h_;
    node_port_.assign(nodes * planes, -1);
    for (int p = 0; p < planes; ++p) build_plane(p);
  }
  int planes() const override { return planes_; }
  int levels() const override { return levels_; }

  PortGroup route(int device, int dst, int plane) const override {
    if (role(device) == DeviceRole::node) return node_route(device, dst, plane);
    check_node(dst, "destination");
    const Place& at = places_[device];
    const SwitchTable& table = tables_[device];
    const int h2 = h_ * h_;
    if (levels_ > 3) return deep_route(at, table, dst);
    if (levels_ == 1) return PortGroup{table.down[dst], 1};
    if (levels_ == 2) {
      if (at.level == 1) {
        return PortGroup{dst / h_ == at.index ? table.down[dst % h_] : table.up[dst % h_], 1};
      }
      return PortGroup{table.down[dst / h_], 1};
    }
    const int pod = dst / h2, edge = (dst % h2) / h_;
    if (at.level == 1) {
      return PortGroup{pod == at.pod && edge == at.index ? table.down[dst % h_] : table.up[dst % h_], 1};
    }
    if (at.level == 2) {
      return PortGroup{pod == at.pod ? table.down[edge] : table.up[(dst / h_) % h_], 1};
    }
    return PortGroup{table.down[pod], 1};
  }
  // Up to the lowest switch above both and down again: a shared edge (or
  // leaf) switch, a shared pod, or a core.
  int links_between(int src, int dst, int) const override {
    for (int level = 1; level < levels_; ++level) {
      if (src / block_[level] == dst / block_[level]) return 2 * level;
    }
    return 2 * levels_;
  }
  std::string describe() const override {
    return std::to_string(planes_) + " plane(s) of a " + std::to_string(levels_) + "-level fat tree of " +
           std::to_string(k_) + "-port switches, " + std::to_string(nodes()) + " nodes";
  }

 private:
  struct Place {
    int level = 0, pod = 0, index = 0;
  };
  int k_, h_, planes_, levels_ = 0;
  std::vector<long long> block_;  // nodes under one switch of each level below the top: (k/2)^level
  std::vector<Place> places_;

  // Four levels or more: a switch of level l < L serves a block of
  // (k/2)^l nodes (Place::pod), with (k/2)^(l-1) switches per block
  // (Place::index). Up-port j of switch t leads to switch t + j (k/2)^(l-1)
  // of the parent block; down-port c to switch t mod (k/2)^(l-2) of
  // sub-block c. The top level's (k/2)^(L-1) switches reach every block of
  // level L-1 (up to k of them). A message climbs until its destination is
  // in the block below, taking the up-port named by the destination's digit
  // of that level (d-mod-k), then descends by digits.
  PortGroup deep_route(const Place& at, const SwitchTable& table, int dst) const {
    if (at.level == levels_) return PortGroup{table.down[dst / block_[levels_ - 1]], 1};
    const int digit = static_cast<int>((dst / block_[at.level - 1]) % h_);
    return PortGroup{dst / block_[at.level] == at.pod ? table.down[digit] : table.up[digit], 1};
  }
  void build_deep_plane(int plane) {
    const long long n = nodes();
    // switches[l][block * per_block + t], levels 1 .. L-1; top[t].
    std::vector<std::vector<int>> switches(levels_);
    for (int level = 1; level < levels_; ++level) {
      const long long blocks = (n + block_[level] - 1) / block_[level];
      const long long per_block = block_[level - 1];
      switches[level].resize(blocks * per_block);
      for (long long b = 0; b < blocks; ++b) {
        for (long long t = 0; t < per_block; ++t) {
          switches[level][b * per_block + t] = add_switch(level, static_cast<int>(b), static_cast<int>(t));
        }
      }
    }
    for (long long i = 0; i < n; ++i) attach_node(switches[1][i / h_], static_cast<int>(i), plane);
    for (int level = 2; level < levels_; ++level) {
      const long long per_block = block_[level - 1], per_sub = block_[level - 2];
      const long long subs = static_cast<long long>(switches[level - 1].size()) / per_sub;
      for (long long index = 0; index < static_cast<long long>(switches[level].size()); ++index) {
        const long long b = index / per_block, t = index % per_block;
        for (long long c = 0; c < h_ && b * h_ + c < subs; ++c) {
          link_down(switches[level][index], switches[level - 1][(b * h_ + c) * per_sub + t % per_sub], true);
        }
      }
    }
    const long long per_sub = block_[levels_ - 2];
    const long long subs = static_cast<long long>(switches[levels_ - 1].size()) / per_sub;
    for (long long t = 0; t < block_[levels_ - 1]; ++t) {
      const int top = add_switch(levels_, 0, static_cast<int>(t));
      for (long long c = 0; c < subs; ++c) link_down(top, switches[levels_ - 1][c * per_sub + t % per_sub], true);
    }
  }

  int add_switch(int level, int pod, int index) {
    const int id = new_switch();
    places_.resize(devices());
    places_[id] = Place{level, pod, index};
    return id;
  }
  void attach_node(int sw, int node, int plane) {
    const int port = connect(sw, node, false);
    tables_.resize(devices());
    tables_[sw].down.push_back(port);
    node_port_[node * planes_ + plane] = ports()[port].reverse;
  }
  void build_plane(int plane) {
    const int n = nodes();
    if (levels_ > 3) {
      build_deep_plane(plane);
      return;
    }
    if (levels_ == 1) {
      const int sw = add_switch(1, 0, 0);
      for (int i = 0; i < n; ++i) attach_node(sw, i, plane);
      return;
    }
    if (levels_ == 2) {
      const int leaves = (n + h_ - 1) / h_;
      std::vector<int> leaf(leaves), spine(h_);
      for (int l = 0; l < leaves; ++l) leaf[l] = add_switch(1, 0, l);
      for (int s = 0; s < h_; ++s) spine[s] = add_switch(2, 0, s);
      for (int i = 0; i < n; ++i) attach_node(leaf[i / h_], i, plane);
      for (int s = 0; s < h_; ++s) {
        for (int l = 0; l < leaves; ++l) link_down(spine[s], leaf[l], true);
      }
      return;
    }
    const int h2 = h_ * h_;
    const int pods = (n + h2 - 1) / h2;
    std::vector<std::vector<int>> agg(pods, std::vector<int>(h_));
    for (int p = 0; p < pods; ++p) {
      const int in_pod = std::min(h2, n - p * h2);
      const int edges = (in_pod + h_ - 1) / h_;
      std::vector<int> edge(edges);
      for (int e = 0; e < edges; ++e) edge[e] = add_switch(1, p, e);
      for (int a = 0; a < h_; ++a) agg[p][a] = add_switch(2, p, a);
      for (int j = 0; j < in_pod; ++j) attach_node(edge[j / h_], p * h2 + j, plane);
      for (int a = 0; a < h_; ++a) {
        for (int e = 0; e < edges; ++e) link_down(agg[p][a], edge[e], true);
      }
    }
    for (int a = 0; a < h_; ++a) {
      for (int j = 0; j < h_; ++j) {
        const int core = add_switch(3, 0, a * h_ + j);
        for (int p = 0; p < pods; ++p) link_down(core, agg[p][a], true);
      }
    }
  }
};

// FPGAs behind their hosts' PCIe, hosts on one network switch.
class HostPath : public SwitchedBase {
 public:
  HostPath(int nodes, int per_host) : SwitchedBase(nodes), per_host_(per_host) {
    const int hosts = (nodes + per_host - 1) / per_host;
    std::vector<int> host(hosts);
    for (int h = 0; h < hosts; ++h) host[h] = new_switch(DeviceRole::host);
    for (int i = 0; i < nodes; ++i) link_down(host[i / per_host], i, false);
    const int sw = new_switch();
    for (int h = 0; h < hosts; ++h) link_down(sw, host[h], true);
    switch_ = sw;
  }
  PortGroup route(int device, int dst, int plane) const override {
    if (role(device) == DeviceRole::node) return node_route(device, dst, plane);
    check_node(dst, "destination");
    if (device == switch_) return PortGroup{tables_[device].down[dst / per_host_], 1};
    const int host_index = device - nodes();
    return PortGroup{dst / per_host_ == host_index ? tables_[device].down[dst % per_host_] : tables_[device].up[0], 1};
  }
  int levels() const override { return 1; }
  int links_between(int src, int dst, int) const override { return src / per_host_ == dst / per_host_ ? 2 : 4; }
  std::string describe() const override {
    return std::to_string(nodes()) + " FPGAs, " + std::to_string(per_host_) + " per host, hosts on one network switch";
  }

 private:
  int per_host_;
  int switch_ = 0;
};

// MPI ranks, per_host to a host (rank r on host r / per_host). Inside a host
// a message goes rank -> bus_in -> bus_out -> rank: the links from each rank
// to the bus run at the bus's rate (host_link), the bus is shared by all the
// host's copies, and the receiver's own link (access_link) bounds what one
// rank copies. The receiver is the copier: a shared-memory MPI moves a long
// message by the receiving process's copy (Open MPI's vader reads the
// sender's pages with CMA or XPMEM, ob1's RGET; without single copy it
// copies out of the shared fragments), so the messages arriving at one rank
// at once share its one copy rate, while a rank sending several is not
// slowed by its sends. A frame cuts through into the slower last link, so
// one message still takes size / min(access, host rate). Between
// hosts it goes rank -> NIC -> switch -> NIC -> rank over trunk links: the
// NIC's two links to the switch, one each way, are shared by its host's
// ranks sending and receiving.
class Cluster : public Topology {
 public:
  Cluster(int nodes, int per_host)
      : Topology(nodes),
        per_host_(per_host),
        hosts_((nodes + per_host - 1) / per_host),
        to_bus_(nodes),
        from_bus_(nodes),
        to_nic_(nodes, -1),
        from_nic_(nodes, -1),
        bus_(hosts_),
        nic_up_(hosts_, -1),
        switch_down_(hosts_, -1) {
    std::vector<int> bus_in(hosts_), bus_out(hosts_), nic(hosts_, -1);
    for (int h = 0; h < hosts_; ++h) {
      bus_in[h] = add_device(DeviceRole::host);
      bus_out[h] = add_device(DeviceRole::host);
      bus_[h] = connect(bus_in[h], bus_out[h], false, 1, true);
    }
    for (int r = 0; r < nodes; ++r) {
      to_bus_[r] = connect(r, bus_in[r / per_host], false, 1, true);
      from_bus_[r] = connect(bus_out[r / per_host], r, false);
    }
    if (hosts_ > 1) {
      switch_ = add_device(DeviceRole::switch_);
      for (int h = 0; h < hosts_; ++h) {
        nic[h] = add_device(DeviceRole::host);
        nic_up_[h] = connect(nic[h], switch_, true);
        switch_down_[h] = ports()[nic_up_[h]].reverse;
      }
      for (int r = 0; r < nodes; ++r) {
        to_nic_[r] = connect(r, nic[r / per_host], true);
        from_nic_[r] = ports()[to_nic_[r]].reverse;
      }
    }
    first_bus_ = nodes;
    first_nic_ = hosts_ > 1 ? switch_ + 1 : devices();
  }
  PortGroup route(int device, int dst, int plane) const override {
    check_node(dst, "destination");
    if (device == dst) throw UsageError("fabric: a message from node " + std::to_string(dst) + " to itself");
    if (plane != 0) {
      throw UsageError("fabric: physical port " + std::to_string(plane) +
                       " does not exist; MPI ranks of a cluster have one path (port 0)");
    }
    const int host = dst / per_host_;
    if (device < nodes()) return PortGroup{device / per_host_ == host ? to_bus_[device] : to_nic_[device], 1};
    if (device == switch_) return PortGroup{switch_down_[host], 1};
    if (device >= first_nic_) {
      return PortGroup{device - first_nic_ == host ? from_nic_[dst] : nic_up_[device - first_nic_], 1};
    }
    // bus_in(h) is first_bus_ + 2h, bus_out(h) the next.
    return PortGroup{(device - first_bus_) % 2 == 0 ? bus_[host] : from_bus_[dst], 1};
  }
  int levels() const override { return hosts_ > 1 ? 1 : 0; }
  int links_between(int src, int dst, int) const override {
    return src / per_host_ == dst / per_host_ ? kIntraLinks : kInterLinks;
  }
  std::string describe() const override {
    return "cluster of " + std::to_string(nodes()) + " ranks, " + std::to_string(per_host_) + " per host on " +
           std::to_string(hosts_) + " host(s)" + (hosts_ > 1 ? ", hosts on one network switch" : "");
  }
  static constexpr int kIntraLinks = 3, kInterLinks = 4;

 private:
  int per_host_, hosts_;
  int switch_ = -1, first_bus_ = 0, first_nic_ = 0;
  std::vector<int> to_bus_, from_bus_, to_nic_, from_nic_;  // per rank
  std::vector<int> bus_, nic_up_, switch_down_;             // per host
};

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError("fabric: " + message);
}

// Throws UsageError for a spec build() cannot make.
void check_buildable(const FabricSpec& spec) {
  switch (spec.topology) {
    case TopologyKind::ring:
      require(spec.nodes >= 2, "a ring needs at least 2 nodes, not " + std::to_string(spec.nodes));
      require(spec.ports_per_node >= 2 && spec.ports_per_node % 2 == 0,
              "a ring needs an even number of ports per node (half to each neighbour), not " +
                  std::to_string(spec.ports_per_node));
      return;
    case TopologyKind::torus:
      require(spec.rows >= 1 && spec.cols >= 1, "a torus of " + std::to_string(spec.rows) + "x" +
                                                    std::to_string(spec.cols) +
                                                    " has a side of zero; give rows and cols of at least 1");
      require(spec.rows * spec.cols >= 2, "a 1x1 torus has no links; give at least 2 nodes");
      return;
    case TopologyKind::switched:
      require(spec.nodes >= 2, "a switched fabric needs at least 2 nodes, not " + std::to_string(spec.nodes));
      require(spec.ports_per_node >= 1, "nodes need at least 1 port");
      require(spec.nodes <= spec.switch_ports, std::to_string(spec.nodes) + " nodes do not fit one " +
                                                   std::to_string(spec.switch_ports) +
                                                   "-port switch; use a fat tree (vcsn_fat_tree) or fewer nodes");
      return;
    case TopologyKind::fat_tree:
      require(spec.nodes >= 2, "a fat tree needs at least 2 nodes, not " + std::to_string(spec.nodes));
      require(spec.ports_per_node >= 1, "nodes need at least 1 port");
      require(spec.switch_ports >= 4 && spec.switch_ports % 2 == 0,
              "fat-tree switches need an even number of ports, at least 4, not " + std::to_string(spec.switch_ports));
      return;
    case TopologyKind::host_path:
      require(spec.nodes >= 2, "a host path needs at least 2 FPGAs, not " + std::to_string(spec.nodes));
      require(spec.fpgas_per_host >= 1, "hosts need at least 1 FPGA each");
      return;
    case TopologyKind::cluster:
      require(spec.nodes >= 2, "a cluster needs at least 2 ranks, not " + std::to_string(spec.nodes));
      require(spec.fpgas_per_host >= 1, "hosts need at least 1 rank each");
      return;
  }
  throw UsageError("fabric: unknown topology");
}

// Links of one plane of the fat tree (as FatTree builds it): the nodes' own,
// and for each level l >= 2 the links down into level l - 1, whose
// ceil(n / (k/2)^(l-1)) blocks of (k/2)^(l-1) nodes each hang from
// (k/2)^(l-1) switches of level l.
long long fat_tree_links(long long n, int k, int levels) {
  long long links = n, block = 1;
  for (int level = 2; level <= levels; ++level) {
    block *= k / 2;
    links += block * ((n + block - 1) / block);
  }
  return links;
}

// Ordered pairs of distinct nodes inside blocks of `block` consecutive nodes.
double pairs_within(long long n, long long block) {
  const long long full = n / block, last = n % block;
  return static_cast<double>(full) * block * (block - 1) + static_cast<double>(last) * (last - 1);
}

// Mean path over all ordered pairs: pairs whose lowest common switch is of
// level l (their block of (k/2)^l nodes, all n at the top) are 2l links apart.
double fat_tree_mean_links(long long n, int k, int levels) {
  double total = 0.0, below = 0.0;
  long long block = 1;
  for (int level = 1; level <= levels; ++level) {
    block = level == levels ? n : block * (k / 2);
    const double here = pairs_within(n, block);
    total += 2.0 * level * (here - below);
    below = here;
  }
  return total / pairs_within(n, n);
}

// Nodes on hosts of `per_host` (the last one may hold fewer): ordered
// pairs on one host are `inside` links apart, the others `between`.
double host_mean_links(long long n, long long per_host, int inside, int between) {
  const double pairs = pairs_within(n, n), near = pairs_within(n, per_host);
  return (inside * near + between * (pairs - near)) / pairs;
}

}  // namespace

TopologyShape Topology::shape(const FabricSpec& spec) {
  check_buildable(spec);
  const long long n = spec.nodes;
  switch (spec.topology) {
    case TopologyKind::ring:
      return TopologyShape{n * (spec.ports_per_node / 2), 0, static_cast<int>(n / 2),
                           static_cast<double>(n * n / 4) / static_cast<double>(n - 1)};
    case TopologyKind::torus: {
      const long long rows = spec.rows, cols = spec.cols, nodes = rows * cols;
      return TopologyShape{
          nodes * ((cols > 1) + (rows > 1)), 0, static_cast<int>(cols / 2 + rows / 2),
          static_cast<double>(rows * (cols * cols / 4) + cols * (rows * rows / 4)) / static_cast<double>(nodes - 1)};
    }
    case TopologyKind::switched:
      return TopologyShape{n * spec.ports_per_node, 1, 2, 2.0};
    case TopologyKind::fat_tree: {
      const int levels = fat_tree_levels(n, spec.switch_ports);
      return TopologyShape{spec.ports_per_node * fat_tree_links(n, spec.switch_ports, levels), levels, 2 * levels,
                           fat_tree_mean_links(n, spec.switch_ports, levels)};
    }
    case TopologyKind::host_path: {
      const long long hosts = (n + spec.fpgas_per_host - 1) / spec.fpgas_per_host;
      return TopologyShape{n + hosts, 1, hosts > 1 ? 4 : 2, host_mean_links(n, spec.fpgas_per_host, 2, 4)};
    }
    case TopologyKind::cluster: {
      const long long hosts = (n + spec.fpgas_per_host - 1) / spec.fpgas_per_host;
      // Per rank its links to and from the bus, per host the bus; with
      // several hosts, per rank its link to the NIC and per host the NIC's to the switch.
      return TopologyShape{2 * n + hosts + (hosts > 1 ? n + hosts : 0), hosts > 1 ? 1 : 0,
                           hosts > 1 ? Cluster::kInterLinks : Cluster::kIntraLinks,
                           host_mean_links(n, spec.fpgas_per_host, Cluster::kIntraLinks, Cluster::kInterLinks)};
    }
  }
  throw UsageError("fabric: unknown topology");
}

std::unique_ptr<Topology> Topology::build(const FabricSpec& spec) {
  check_buildable(spec);
  switch (spec.topology) {
    case TopologyKind::ring:
      return std::make_unique<Ring>(spec.nodes, spec.ports_per_node / 2);
    case TopologyKind::torus:
      return std::make_unique<Torus>(spec.rows, spec.cols);
    case TopologyKind::switched:
      return std::make_unique<Switched>(spec.nodes, spec.ports_per_node);
    case TopologyKind::fat_tree:
      return std::make_unique<FatTree>(spec.nodes, spec.switch_ports, spec.ports_per_node);
    case TopologyKind::host_path:
      return std::make_unique<HostPath>(spec.nodes, spec.fpgas_per_host);
    case TopologyKind::cluster:
      return std::make_unique<Cluster>(spec.nodes, spec.fpgas_per_host);
  }
  throw UsageError("fabric: unknown topology");
}

}  // namespace fpgacomm::fabric
