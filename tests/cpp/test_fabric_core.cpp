// The simulator's parts on their own: event order, framing arithmetic, line
// coding, routing, MAC addresses, and the errors for impossible input.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "core/error.hpp"
#include "fabric/engine.hpp"
#include "fabric/experiments.hpp"
#include "fabric/fast_forward.hpp"
#include "fabric/framing.hpp"
#include "fabric/link.hpp"
#include "fabric/mac_table.hpp"
#include "fabric/network.hpp"
#include "fabric/stage_groups.hpp"
#include "fabric/topology.hpp"

using namespace fpgacomm;
using namespace fpgacomm::fabric;

namespace {

struct Recorder : EventHandler {
  std::vector<std::uint64_t> seen;
  void handle(std::uint64_t tag) override { seen.push_back(tag); }
};

void test_engine_orders_by_time_then_schedule_order() {
  Recorder recorder;
  Engine engine(&recorder);
  engine.schedule_at(2.0, 1);
  engine.schedule_at(1.0, 2);
  engine.schedule_at(2.0, 3);  // same time as tag 1: after it
  engine.schedule_at(1.0, 4);
  engine.run();
  CHECK((recorder.seen == std::vector<std::uint64_t>{2, 4, 1, 3}));
  CHECK(engine.now() == 2.0);
  CHECK(engine.events_processed() == 4);
  CHECK_THROWS(Error, engine.schedule_at(1.0, 5), "before the current time");
  // Taken from a queue of 4, 3, 2 and 1 events.
  CHECK(engine.mean_depth() == 2.5);
  engine.restart();
  CHECK(engine.now() == 0.0);
  engine.schedule_at(0.5, 6);
  CHECK_THROWS(Error, engine.restart(), "1 events pending");
  // -0.0 is the time 0, before 0.5 (its bits alone would order it last).
  engine.schedule_at(-0.0, 7);
  engine.run();
  CHECK((recorder.seen == std::vector<std::uint64_t>{2, 4, 1, 3, 7, 6}));
}

void test_framing_pads_and_splits() {
  // VCSN: 64-byte units, jumbo payload 9152, 42 bytes around it (the VCSN paper, eq. 2).
  const Framing vcsn{"vcsn", 26, 4, 12, 9152, 64, 64, 0.0};
  CHECK(vcsn.wire_bytes(1) == 106);  // the 64/106 least efficient case
  CHECK(vcsn.wire_bytes(0) == 106);
  CHECK(vcsn.wire_bytes(9152) == 9194);  // the 9152/9194 best case
  const auto frames = vcsn.split(20000);
  CHECK((frames == std::vector<std::int64_t>{9152, 9152, 1696}));
  CHECK((vcsn.split(0) == std::vector<std::int64_t>{0}));
  CHECK(vcsn.frame_error_probability(9152) == 0.0);
  Framing noisy = vcsn;
  noisy.bit_error_rate = 1e-6;
  CHECK(std::abs(noisy.frame_error_probability(0) - (1 - std::pow(1 - 1e-6, 8 * 94))) < 1e-12);
  Framing bad = vcsn;
  bad.payload_unit = 100;
  CHECK_THROWS(UsageError, bad.validate(), "divides the maximum payload");
}

// A segment with smaller frames carries a chunk as several frames, each
// padded and framed: PCIe TLPs of 256 bytes under a 4 KiB InfiniBand packet.
void test_chunks_on_a_segment_with_smaller_frames() {
  const Framing tlp{"tlp", 26, 0, 0, 256, 4, 0, 0.0};
  CHECK(tlp.chunk_wire_bytes(4096) == 16 * 282);
  CHECK(tlp.chunk_wire_bytes(4097) == 16 * 282 + 26 + 4);  // the last byte rides in a dword of its own
  CHECK(tlp.chunk_wire_bytes(0) == 26);
  std::int64_t framed = 0;
  for (std::int64_t payload : tlp.split(1000)) framed += tlp.wire_bytes(payload);
  CHECK(tlp.chunk_wire_bytes(1000) == framed);
}

void test_mac_addresses_and_table_errors() {
  // 02:NN:NN:NN:PP:VV, node 258 = 0x000102.
  CHECK(mac_address(VirtualPort{258, 1, 3}) == 0x020001020103ULL);
  CHECK(mac_to_string(mac_address(VirtualPort{258, 1, 3})) == "02:00:01:02:01:03");
  CHECK(mac_to_string(0x020000050100ULL) == "02:00:00:05:01:00");
  FabricSpec spec;
  spec.topology = TopologyKind::switched;
  spec.nodes = 4;
  spec.ports_per_node = 2;
  spec.virtual_ports_per_port = 2;
  spec.mac_table = {MacEntry{0, 1, 1, mac_address(VirtualPort{3, 1, 0})}};
  const MacTable table(spec, 2);
  const VirtualPort& to = table.destination(VirtualPort{0, 1, 1});
  CHECK(to.node == 3 && to.port == 1 && to.vport == 0);
  CHECK_THROWS(UsageError, table.destination(VirtualPort{0, 0, 0}), "no entry in its node's MAC table");
  spec.mac_table.push_back(MacEntry{1, 0, 0, 0x0200000a0000ULL});  // node 10 of 4
  CHECK_THROWS(UsageError, MacTable(spec, 2), "unknown MAC 02:00:00:0a:00:00");
}

void test_line_coding_rates() {
  // 4 lanes of 25.78125 Gbaud: 100 Gb/s of data with 64B/66B (Ethernet).
  const Link ethernet{25.78125e9, 4, LineCoding::b64b66, 0.0};
  CHECK(std::abs(ethernet.data_rate() - 12.5e9) < 1.0);
  CHECK(std::abs(coding_efficiency(LineCoding::b8b10) - 0.8) < 1e-15);
  CHECK(parse_line_coding("64b67b") == LineCoding::b64b67);
  CHECK_THROWS(UsageError, parse_line_coding("4b5b"), "unknown line coding");
  const Link dead{0.0, 4, LineCoding::none, 0.0};
  CHECK_THROWS(UsageError, dead.validate("the access link"), "zero bandwidth");
}

FabricSpec plain(TopologyKind kind, int nodes) {
  FabricSpec spec;
  spec.topology = kind;
  spec.nodes = nodes;
  spec.ports_per_node = kind == TopologyKind::ring ? 2 : 1;
  spec.switch_ports = 36;
  spec.access_link = Link{8e9, 1, LineCoding::none, 1e-7};
  spec.trunk_link = spec.access_link;
  spec.host_link = spec.access_link;
  spec.framing = Framing{"plain", 0, 0, 0, 1000, 1, 0, 0.0};
  return spec;
}

void test_torus_routes_row_then_column() {
  FabricSpec spec = plain(TopologyKind::torus, 0);
  spec.rows = 4;
  spec.cols = 5;
  const auto torus = Topology::build(spec);
  CHECK(torus->path_links(0, 2, 0) == 2);   // along the row
  CHECK(torus->path_links(0, 3, 0) == 2);   // the short way round: 0 -> 4 -> 3
  CHECK(torus->path_links(0, 12, 0) == 4);  // (2, 2): two across, two down
  CHECK(torus->path_links(0, 19, 0) == 2);  // (3, 4): wraps both ways
  // The first hop towards (2, 2) is along the row, to (0, 1).
  CHECK(torus->ports()[torus->route(0, 12, 0).first].peer == 1);
  spec.rows = 0;
  CHECK_THROWS(UsageError, Topology::build(spec), "side of zero");
  spec.rows = 4;
  CHECK_THROWS(UsageError, torus->route(0, 20, 0), "not in this fabric");
}

void test_fat_tree_levels_and_paths() {
  FabricSpec spec = plain(TopologyKind::fat_tree, 36);
  CHECK(Topology::build(spec)->levels() == 1);
  spec.nodes = 648;  // k^2/2
  auto two = Topology::build(spec);
  CHECK(two->levels() == 2);
  CHECK(two->path_links(0, 17, 0) == 2);  // same leaf
  CHECK(two->path_links(0, 18, 0) == 4);  // leaf, spine, leaf
  spec.nodes = 1024;
  auto three = Topology::build(spec);
  CHECK(three->levels() == 3);
  CHECK(three->path_links(0, 1, 0) == 2);
  CHECK(three->path_links(0, 20, 0) == 4);    // same pod
  CHECK(three->path_links(0, 1000, 0) == 6);  // through a core
  spec.nodes = 11665;                         // one more than k^3/4: a fourth level
  auto four = Topology::build(spec);
  CHECK(four->levels() == 4);
  CHECK(four->path_links(0, 1000, 0) == 6);   // within a block of (k/2)^3 nodes
  CHECK(four->path_links(0, 11664, 0) == 8);  // through the top
  CHECK(four->describe().find("4-level fat tree of 36-port switches") != std::string::npos);
}

// path_links' closed form against the route followed hop by hop, every pair.
void test_path_lengths_match_the_routes() {
  std::vector<FabricSpec> specs;
  for (int nodes : {2, 3, 8, 9}) specs.push_back(plain(TopologyKind::ring, nodes));
  FabricSpec torus = plain(TopologyKind::torus, 0);
  for (auto [rows, cols] : {std::pair{1, 5}, std::pair{4, 5}, std::pair{6, 3}}) {
    torus.rows = rows;
    torus.cols = cols;
    specs.push_back(torus);
  }
  FabricSpec tree = plain(TopologyKind::fat_tree, 0);
  tree.switch_ports = 4;
  tree.ports_per_node = 2;
  for (int nodes : {3, 7, 13, 16, 17, 29, 32, 33, 50}) {  // 1 to 5 levels
    tree.nodes = nodes;
    specs.push_back(tree);
  }
  FabricSpec hosts = plain(TopologyKind::host_path, 7);
  hosts.fpgas_per_host = 2;
  specs.push_back(hosts);
  specs.push_back(plain(TopologyKind::switched, 5));
  FabricSpec cluster = plain(TopologyKind::cluster, 7);
  for (int per_host : {1, 3, 7, 9}) {  // one rank per host, a partial last host, one host
    cluster.fpgas_per_host = per_host;
    specs.push_back(cluster);
  }
  for (const FabricSpec& spec : specs) {
    const auto topology = Topology::build(spec);
    const TopologyShape shape = Topology::shape(spec);
    CHECK(shape.links == static_cast<std::int64_t>(topology->ports().size() / 2));
    CHECK(shape.levels == topology->levels());
    for (int plane = 0; plane < topology->planes(); ++plane) {
      for (int src = 0; src < topology->nodes(); ++src) {
        const std::vector<int> from = topology->distances(src, plane);
        for (int dst = 0; dst < topology->nodes(); ++dst) {
          int walked = 0;
          for (int device = src; device != dst; ++walked) {
            device = topology->ports()[topology->route(device, dst, plane).first].peer;
          }
          CHECK(topology->path_links(src, dst, plane) == walked);
          CHECK(from[dst] == walked);
        }
      }
    }
  }
}

// A binade's worth of a reader's sums at once gives the loop's own doubles.
void test_repeated_sums_match_the_loop() {
  using fast_forward::add_while_below;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> start(0.0, 3.0), exponent(-12.0, 8.0), length(0.0, 1.0);
  const double steps[] = {9152.0 / 19.2e9, 3968.0 / 19.2e9, 1.0 / 3.0, 0x1p-30, 0x1.8p-40, 1e-7};
  for (int trial = 0; trial < 300; ++trial) {
    const double step = steps[trial % 6];
    const double first = start(rng) * std::pow(2.0, exponent(rng)) + (trial % 7 == 0 ? 0.0 : step);
    const double until = first + length(rng) * step * 200000.0;
    const std::int64_t most = trial % 3 == 0 ? 1000 : 500000;
    double looped = first;
    std::int64_t loops = 0;
    while (loops < most && looped < until) {
      looped += step;
      ++loops;
    }
    double jumped = first;
    CHECK(add_while_below(jumped, step, until, most) == loops);
    CHECK(jumped == looped);
    CHECK(fast_forward::add_repeatedly(first, step, loops) == looped);
  }
}

void test_errors_for_impossible_input() {
  FabricSpec spec = plain(TopologyKind::ring, 1);
  CHECK_THROWS(UsageError, Network{spec}, "at least 2 nodes");
  spec.nodes = 4;
  spec.hub.buffer_bytes = 500;  // frames are up to 1000 bytes
  CHECK_THROWS(UsageError, Network{spec}, "smaller than one packet");
  spec.hub.buffer_bytes = 1e9;
  spec.node.dma_bandwidth = 0.0;
  CHECK_THROWS(UsageError, Network{spec}, "zero bandwidth");
  spec.node.dma_bandwidth = 1e10;
  Network network(spec);
  CHECK_THROWS(UsageError, network.send(0, 7, 10, 0.0, 0, 0, nullptr), "not in this fabric");
  CHECK_THROWS(UsageError, network.send(2, 2, 10, 0.0, 0, 0, nullptr), "to itself");
  CHECK_THROWS(UsageError, network.send(0, 1, 10, 0.0, 0, 3, nullptr), "lane 3 does not exist");
}

// Frames leave back to back; the time of a stream is the serialisation of
// every frame plus one link latency.
void test_stream_is_serialisation_plus_latency() {
  FabricSpec spec = plain(TopologyKind::ring, 4);
  spec.framing = Framing{"f", 10, 6, 0, 1000, 1, 0, 0.0};
  const StreamResult result = stream(spec, 0, 1, 10000, 0);
  const double expected = 10 * 1016 / 1e9 + 1e-7;
  CHECK(std::abs(result.time - expected) < 1e-15);
}

// A host's MPI costs: the sender's overhead before the message, the
// receiver's after it, the gap between one node's messages, and the
// rendezvous past the eager threshold.
void test_message_costs() {
  FabricSpec spec = plain(TopologyKind::cluster, 4);
  spec.fpgas_per_host = 2;
  spec.node.send_overhead = 1e-6;
  spec.node.recv_overhead = 2e-6;
  spec.node.gap = 3e-6;
  spec.node.eager_threshold = 1000;
  spec.node.rendezvous_latency = 5e-6;
  // Between hosts: 4 links of 1e-7 s, 1000 bytes at 1 GB/s.
  PingPongResult r = ping_pong(spec, 0, 2, 1000, 1);
  CHECK(std::abs(r.one_way - (1e-6 + 4e-7 + 1e-6 + 2e-6)) < 1e-15);
  r = ping_pong(spec, 0, 2, 1001, 1);
  CHECK(std::abs(r.one_way - (1e-6 + 5e-6 + 4e-7 + 1.001e-6 + 2e-6)) < 1e-15);
  // The second empty message of node 0 starts max(o_s, g) = 3 us after the first.
  Network network(spec);
  std::vector<double> done;
  for (int dst : {1, 1}) network.send(0, dst, 0, 0.0, 0, 0, [&](const MessageRecord& m) { done.push_back(m.done); });
  network.run();
  CHECK(done.size() == 2 && std::abs(done[1] - done[0] - 3e-6) < 1e-15);
  spec.node.gap = -1.0;
  CHECK_THROWS(UsageError, Network{spec}, "gap");
}

// Bounded buffers hold the sender back instead of losing frames; the
// stream still arrives whole and no faster.
void test_bounded_buffers_apply_backpressure() {
  FabricSpec spec = plain(TopologyKind::ring, 8);
  spec.hub.buffer_bytes = 2000;  // two frames
  spec.hub.forwarding = Forwarding::store_and_forward;
  spec.link_scales = {LinkScale{2, 0, 0.25}};  // node 2 -> 3 is four times slower
  const StreamResult slow = stream(spec, 0, 4, 100000, 0);
  CHECK(slow.bandwidth < 0.26e9 && slow.bandwidth > 0.24e9);
}

// Transfers that share a port or a DMA engine form one group; a group and
// its relabelled twin have one key, a slower link or another lane does not.
void test_stage_groups_split_and_key() {
  FabricSpec spec = plain(TopologyKind::ring, 12);
  spec.link_scales = {LinkScale{9, 1, 0.5}};  // node 9 -> 10 (its second port) is slower
  Network network(spec);
  StageGroups groups(network);
  // 1->2 and 2->3 share nothing (read and write engines are apart); 4->6
  // and 5->6 share node 6's write engines and the link 5->6.
  groups.split({{1, 2, 100, 0, 0},
                {4, 6, 100, 0, 0},
                {2, 3, 100, 0, 0},
                {5, 6, 100, 0, 0},
                {9, 10, 100, 0, 0},
                {7, 8, 100, 0, 0},
                {8, 9, 100, 0, 0}});
  CHECK(groups.groups() == 6);
  CHECK((std::vector<int>(groups.members_begin(1), groups.members_end(1)) == std::vector<int>{1, 3}));
  const auto key_of = [&](int g) { return groups.key(g); };
  CHECK(key_of(0) == key_of(2));  // 1->2 and 2->3
  CHECK(key_of(0) == key_of(4));  // 7->8
  CHECK(key_of(0) != key_of(3));  // 9->10 crosses the slower link
  CHECK(key_of(0) != key_of(1));
  std::vector<std::int64_t> pair = key_of(1);
  groups.split({{0, 2, 100, 0, 0}, {1, 2, 100, 0, 0}, {3, 4, 100, 0, 0}});
  CHECK(groups.groups() == 2 && key_of(0) == pair);
  CHECK_THROWS(UsageError, groups.split({{0, 12, 100, 0, 0}}), "not in this fabric");
}

}  // namespace

int main() {
  test_engine_orders_by_time_then_schedule_order();
  test_framing_pads_and_splits();
  test_chunks_on_a_segment_with_smaller_frames();
  test_mac_addresses_and_table_errors();
  test_line_coding_rates();
  test_torus_routes_row_then_column();
  test_fat_tree_levels_and_paths();
  test_path_lengths_match_the_routes();
  test_repeated_sums_match_the_loop();
  test_errors_for_impossible_input();
  test_stream_is_serialisation_plus_latency();
  test_bounded_buffers_apply_backpressure();
  test_message_costs();
  test_stage_groups_split_and_key();
  return check::failures;
}
