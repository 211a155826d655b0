#include "fabric/stage_groups.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace fpgacomm::fabric {

StageGroups::StageGroups(const Network& network)
    : network_(network),
      topology_(network.topology()),
      ports_(static_cast<int>(network.topology().ports().size())),
      nodes_(network.topology().nodes()) {
  owner_.assign(ports_ + 2 * nodes_, -1);
  owner_stamp_.assign(owner_.size(), 0);
  port_number_.assign(ports_, 0);
  port_stamp_.assign(ports_, 0);
  src_number_.assign(nodes_, 0);
  src_stamp_.assign(nodes_, 0);
  dst_number_.assign(nodes_, 0);
  dst_stamp_.assign(nodes_, 0);
}

int StageGroups::find(int t) {
  while (parent_[t] != t) {
    parent_[t] = parent_[parent_[t]];
    t = parent_[t];
  }
  return t;
}

void StageGroups::claim(int resource, int t) {
  if (owner_stamp_[resource] != stage_stamp_) {
    owner_stamp_[resource] = stage_stamp_;
    owner_[resource] = t;
    return;
  }
  const int a = find(owner_[resource]), b = find(t);
  if (a != b) parent_[std::max(a, b)] = std::min(a, b);
}

void StageGroups::split(const std::vector<StageTransfer>& transfers) {
  transfers_ = transfers;
  ++stage_stamp_;
  const int count = static_cast<int>(transfers.size());
  path_begin_.assign(1, 0);
  hops_.clear();
  parent_.resize(count);
  const auto& ports = topology_.ports();
  for (int t = 0; t < count; ++t) {
    if ((t & 0x3FFF) == 0) check_interrupt();
    const StageTransfer& transfer = transfers[t];
    topology_.check_node(transfer.src, "source");
    topology_.check_node(transfer.dst, "destination");
    parent_[t] = t;
    int device = transfer.src;
    for (int step = 0; device != transfer.dst; ++step) {
      if (step > topology_.devices()) throw Error("fabric: routing from " + std::to_string(transfer.src) + " loops");
      const PortGroup group = topology_.route(device, transfer.dst, transfer.port);
      hops_.push_back(group);
      for (int p = group.first; p < group.first + group.count; ++p) claim(p, t);
      device = ports[group.first].peer;
    }
    path_begin_.push_back(static_cast<int>(hops_.size()));
    claim(ports_ + transfer.src, t);
    claim(ports_ + nodes_ + transfer.dst, t);
  }
  // Groups numbered in order of their first transfer, members in order.
  group_of_root_.assign(count, -1);
  group_begin_.assign(1, 0);
  std::vector<int> group_of(count);
  int groups = 0;
  for (int t = 0; t < count; ++t) {
    int& group = group_of_root_[find(t)];
    if (group < 0) {
      group = groups++;
      group_begin_.push_back(0);
    }
    group_of[t] = group;
    ++group_begin_[group + 1];
  }
  for (int g = 0; g < groups; ++g) group_begin_[g + 1] += group_begin_[g];
  members_.resize(count);
  std::vector<int> fill(group_begin_.begin(), group_begin_.end() - 1);
  for (int t = 0; t < count; ++t) members_[fill[group_of[t]]++] = t;
}

const std::vector<std::int64_t>& StageGroups::key(int group) {
  ++key_stamp_;
  key_.clear();
  numbered_ports_.clear();
  feeds_.clear();
  int sources = 0, destinations = 0;
  const auto number_port = [&](int port) {
    if (port_stamp_[port] != key_stamp_) {
      port_stamp_[port] = key_stamp_;
      port_number_[port] = static_cast<int>(numbered_ports_.size());
      numbered_ports_.push_back(port);
    }
    return port_number_[port];
  };
  const std::int64_t dma_inputs = ports_;  // DMA engine inputs come after every port (Network::frame_ready)
  const int engines = network_.dma_engines();
  key_.push_back(members_end(group) - members_begin(group));
  for (const int* member = members_begin(group); member != members_end(group); ++member) {
    const StageTransfer& transfer = transfers_[*member];
    if (src_stamp_[transfer.src] != key_stamp_) {
      src_stamp_[transfer.src] = key_stamp_;
      src_number_[transfer.src] = sources++;
    }
    if (dst_stamp_[transfer.dst] != key_stamp_) {
      dst_stamp_[transfer.dst] = key_stamp_;
      dst_number_[transfer.dst] = destinations++;
    }
    const int source = src_number_[transfer.src];
    const int first_hop = path_begin_[*member], end_hop = path_begin_[*member + 1];
    key_.insert(key_.end(), {transfer.bytes, transfer.lane, source, dst_number_[transfer.dst], end_hop - first_hop});
    const int channels = first_hop < end_hop ? hops_[first_hop].count : 0;
    for (int h = first_hop; h < end_hop; ++h) {
      const PortGroup& here = hops_[h];
      key_.push_back(here.count);
      for (int p = here.first; p < here.first + here.count; ++p) key_.push_back(number_port(p));
      // Who feeds each port of this hop: the source's DMA engines on the
      // first hop, the previous hop's port of the same channel after it.
      for (int c = 0; c < channels; ++c) {
        const int port = here.first + c % here.count;
        if (h == first_hop) {
          feeds_.push_back(Feed{number_port(port), dma_inputs + std::int64_t{transfer.src} * engines, -source - 1});
        } else {
          const PortGroup& before = hops_[h - 1];
          const int upstream = before.first + c % before.count;
          feeds_.push_back(Feed{number_port(port), upstream, number_port(upstream)});
        }
      }
    }
  }
  key_.push_back(static_cast<std::int64_t>(numbered_ports_.size()));
  for (int port : numbered_ports_) key_.push_back(network_.port_class(port));
  // Where two inputs or more feed one port, round robin serves them in the
  // order of their global numbers: that order is part of the key.
  std::sort(feeds_.begin(), feeds_.end(),
            [](const Feed& a, const Feed& b) { return a.port != b.port ? a.port < b.port : a.input < b.input; });
  feeds_.erase(std::unique(feeds_.begin(), feeds_.end(),
                           [](const Feed& a, const Feed& b) { return a.port == b.port && a.input == b.input; }),
               feeds_.end());
  for (std::size_t i = 0; i < feeds_.size();) {
    std::size_t j = i;
    while (j < feeds_.size() && feeds_[j].port == feeds_[i].port) ++j;
    if (j - i > 1) {
      key_.insert(key_.end(), {-1, feeds_[i].port, static_cast<std::int64_t>(j - i)});
      for (std::size_t k = i; k < j; ++k) key_.push_back(feeds_[k].code);
    }
    i = j;
  }
  return key_;
}

}  // namespace fpgacomm::fabric
