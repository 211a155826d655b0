// What runs on a simulated fabric: the same measurements fpgacomm makes on
// real hardware (ping-pong, streaming bandwidth, the b_eff ring, staged
// schedules) plus random traffic and the queueing validation. Each builds a
// fresh Network from the spec, so results depend on nothing but the spec.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/mac_table.hpp"
#include "fabric/spec.hpp"

namespace fpgacomm::fabric {

struct PingPongResult {
  int links = 0;                 // links between the two nodes
  double first_byte = 0.0;       // one way: first byte at the receiver's user logic
  double one_way = 0.0;          // one way: last byte in the receiver's memory
  double half_round_trip = 0.0;  // mean over the iterations, as OSU reports latency
  std::uint64_t events = 0;
};
PingPongResult ping_pong(const FabricSpec& spec, int src, int dst, std::int64_t bytes, int iterations);

struct StreamResult {
  double time = 0.0;  // from the request to the last byte in the receiver's memory
  double bandwidth = 0.0;
  std::uint64_t events = 0;
};
// One message of `bytes` from src to dst out of physical port `port`.
StreamResult stream(const FabricSpec& spec, int src, int dst, std::int64_t bytes, int port);

// FSHMEM's one-sided operations (the FSHMEM paper section III-A): a PUT is one long
// active message to the target; a GET is a short request (header only)
// answered, after the target's handler turns it round, by a long reply.
// The time runs from the command to the last byte in memory at the end.
StreamResult one_sided(const FabricSpec& spec, int initiator, int target, std::int64_t bytes, bool get,
                       double handler_latency);

// VCSN's virtual links: each transfer leaves by a virtual port at time 0
// and goes wherever its node's MAC table points it.
struct VirtualTransfer {
  VirtualPort source;
  std::int64_t bytes = 0;
};
struct VirtualArrival {
  VirtualPort destination;  // where the DMUX delivered it
  double time = 0.0;        // to its last byte in the receiver's memory
  double bandwidth = 0.0;
};
struct VirtualStreamsResult {
  std::vector<VirtualArrival> arrivals;  // per transfer, in order
  std::uint64_t events = 0;
};
VirtualStreamsResult virtual_streams(const FabricSpec& spec, const std::vector<VirtualTransfer>& transfers);

struct BeffPoint {
  std::int64_t bytes = 0;
  double time = 0.0;            // slowest of all nodes' exchanges with both neighbours
  double pair_bandwidth = 0.0;  // b(L) of one kernel pair: L / time
  std::uint64_t events = 0;
};
// Every node sends L bytes to both ring neighbours at once, per size.
std::vector<BeffPoint> beff_ring(const FabricSpec& spec, const std::vector<std::int64_t>& sizes);

// `count` transfers by one rule (a pipelined chain is one run, whatever
// its length): the i-th goes from node src + i*src_step to node
// dst + i*dst_step, both mod the fabric's nodes. src and dst themselves must
// be nodes of the fabric; a single transfer is a run of 1.
struct TransferRun {
  int count = 1;
  int src = 0, src_step = 0;
  int dst = 0, dst_step = 0;
  std::int64_t bytes = 0;
  int port = 0;  // physical port (plane) at the source
  int lane = 0;  // virtual port on it, or priority level
};
struct StageTiming {
  double start = 0.0;
  double transfer = 0.0;  // from the stage's start to its last transfer's completion
  double control = 0.0;   // interrupt, next crossbar set-up and barrier after it
  std::int64_t bytes = 0;
  std::int64_t transfers = 0;
  std::vector<double> done;  // per transfer, in order: completion after the stage's start (when kept)
};
struct ScheduleOptions {
  bool reconfigure = false;  // VCSN: write the MAC tables first
  // Simulate each distinct group of independent transfers once (StageGroups)
  // and reuse its times; false simulates every stage in full. The times are
  // bit-identical either way.
  bool reuse = true;
  bool keep_done = true;  // keep every transfer's completion (StageTiming::done)
  // Jump through the steady state of long streams by whole periods
  // (Network::enable_fast_forward); bit-identical either way.
  bool fast_forward = true;
};
struct ScheduleResult {
  double setup = 0.0;  // topology reconfiguration, first crossbar set-up, their barriers
  std::vector<StageTiming> stages;
  double total = 0.0;
  std::uint64_t events = 0;            // of the full simulation (the same with reuse)
  std::uint64_t events_simulated = 0;  // processed: fewer with reuse and fast-forward
  double mean_depth = 0.0;             // events queued, on average, when the next was taken
  std::uint64_t groups = 0;            // independent groups over all stages
  std::uint64_t distinct_groups = 0;   // simulated (all of them without reuse)
  std::uint64_t fast_forwards = 0;     // jumps through steady states
  bool reused = false;
  std::string note;  // why reuse was asked for and not done
};
// Runs stages one after another, with the host's control costs between
// them (the VCSN paper eq. 7's procedure): topology reconfiguration when
// `reconfigure` (VCSN), crossbar set-up, and a barrier after each step.
// Each stage starts from an empty network on a clock of its own (after a
// barrier nothing is in flight), so stage times do not depend on when the
// stage began.
ScheduleResult run_schedule(const FabricSpec& spec, const std::vector<std::vector<TransferRun>>& stages,
                            const ScheduleOptions& options);

struct TrafficResult {
  std::uint64_t packets = 0;
  double mean_latency = 0.0;  // request to arrival in memory
  double mean_wait = 0.0;     // per frame and hop, queued before its transmission
  double mean_links = 0.0;
  double throughput = 0.0;  // delivered payload bytes per second, whole fabric
  double duration = 0.0;
  std::uint64_t events = 0;
};
// Each node sends packets of `payload` bytes to uniformly chosen other
// nodes, at Poisson times of `rate` packets per second.
TrafficResult uniform_traffic(const FabricSpec& spec, double rate, std::int64_t packets_per_node, std::int64_t payload);

struct QueueResult {
  std::uint64_t packets = 0;
  double service_mean = 0.0;
  double mean_wait = 0.0;
  double ci_half_width = 0.0;  // 95 % batch-means confidence interval
  int batches = 0;
  std::uint64_t events = 0;
};
// One output port fed by Poisson arrivals at load `rho`, packet lengths
// exponential (M/M/1) or fixed (M/D/1), an unbounded FIFO.
QueueResult single_queue(double rho, std::uint64_t packets, bool exponential_lengths, std::uint64_t seed, int batches);

}  // namespace fpgacomm::fabric
