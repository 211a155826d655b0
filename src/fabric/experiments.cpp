#include "fabric/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "fabric/network.hpp"
#include "fabric/stage_groups.hpp"

namespace fpgacomm::fabric {

PingPongResult ping_pong(const FabricSpec& spec, int src, int dst, std::int64_t bytes, int iterations) {
  if (iterations < 1) throw UsageError("fabric: ping-pong needs at least 1 iteration");
  Network network(spec);
  PingPongResult result;
  result.links = network.topology().path_links(src, dst, 0);
  int left = iterations;
  // Each completion sends the next message back, as a ping-pong does.
  std::function<void(const MessageRecord&)> pong = [&](const MessageRecord& record) {
    if (record.src == src && left == iterations) {
      result.first_byte = record.first_byte - record.start;
      result.one_way = record.done - record.start;
    }
    if (record.src == dst && --left == 0) return;
    network.send(record.dst, record.src, bytes, record.done, 0, 0, pong);
  };
  network.send(src, dst, bytes, 0.0, 0, 0, pong);
  network.run();
  result.half_round_trip = network.now() / (2.0 * iterations);
  result.events = network.engine().events_processed();
  return result;
}

StreamResult stream(const FabricSpec& spec, int src, int dst, std::int64_t bytes, int port) {
  Network network(spec);
  StreamResult result;
  network.send(src, dst, bytes, 0.0, port, 0,
               [&](const MessageRecord& record) { result.time = record.done - record.start; });
  network.run();
  result.bandwidth = static_cast<double>(bytes) / result.time;
  result.events = network.engine().events_processed();
  return result;
}

StreamResult one_sided(const FabricSpec& spec, int initiator, int target, std::int64_t bytes, bool get,
                       double handler_latency) {
  if (!(handler_latency >= 0.0)) throw UsageError("fabric: the handler latency must be 0 or more");
  Network network(spec);
  StreamResult result;
  auto finish = [&](const MessageRecord& record) {
    result.time = record.done;
    result.bandwidth = static_cast<double>(bytes) / record.done;
  };
  if (get) {
    network.send(initiator, target, 0, 0.0, 0, 0, [&](const MessageRecord& request) {
      network.send(target, initiator, bytes, request.done + handler_latency, 0, 0, finish);
    });
  } else {
    network.send(initiator, target, bytes, 0.0, 0, 0, finish);
  }
  network.run();
  result.events = network.engine().events_processed();
  return result;
}

VirtualStreamsResult virtual_streams(const FabricSpec& spec, const std::vector<VirtualTransfer>& transfers) {
  Network network(spec);
  VirtualStreamsResult result;
  result.arrivals.resize(transfers.size());
  for (std::size_t t = 0; t < transfers.size(); ++t) {
    const VirtualTransfer& transfer = transfers[t];
    // A virtual link stays on its plane: it arrives on the same physical port number.
    const int plane = transfer.source.port;
    network.send_virtual(transfer.source, transfer.bytes, 0.0, [&result, t, plane](const MessageRecord& record) {
      VirtualArrival& arrival = result.arrivals[t];
      arrival.destination = VirtualPort{record.dst, plane, record.dst_vport};
      arrival.time = record.done - record.start;
      arrival.bandwidth = static_cast<double>(record.bytes) / arrival.time;
    });
  }
  network.run();
  result.events = network.engine().events_processed();
  return result;
}

std::vector<BeffPoint> beff_ring(const FabricSpec& spec, const std::vector<std::int64_t>& sizes) {
  // The ring is the ranks' order (node i's neighbours are i - 1 and i + 1),
  // on whatever topology joins them, as HPCC FPGA's b_eff runs over MPI.
  if (spec.nodes < 3) {
    throw UsageError(
        "fabric: the b_eff ring needs at least 3 nodes, so that each has distinct left and right "
        "neighbours");
  }
  std::vector<BeffPoint> points;
  for (std::int64_t bytes : sizes) {
    Network network(spec);
    BeffPoint point;
    point.bytes = bytes;
    const int n = spec.nodes;
    for (int i = 0; i < n; ++i) {
      for (int neighbour : {(i + 1) % n, (i + n - 1) % n}) {
        network.send(i, neighbour, bytes, 0.0, 0, 0, [&](const MessageRecord& record) {
          point.time = std::max(point.time, record.done - record.start);
        });
      }
    }
    network.run();
    point.pair_bandwidth = static_cast<double>(bytes) / point.time;
    point.events = network.engine().events_processed();
    points.push_back(point);
  }
  return points;
}

namespace {

struct KeyHash {
  std::size_t operator()(const std::vector<std::int64_t>& key) const {
    std::uint64_t h = key.size();
    for (std::int64_t value : key) {
      h = (h ^ static_cast<std::uint64_t>(value)) * 0x9E3779B97F4A7C15ULL;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};

// One group's simulated outcome: completion per member, in order.
struct Outcome {
  std::vector<double> done;
  double last = 0.0;
  std::uint64_t events = 0;     // of the full simulation
  std::uint64_t simulated = 0;  // processed (the rest fast-forwarded)
  int id = 0;                   // in order of simulation
};

bool same_but_count(const TransferRun& a, const TransferRun& b) {
  return a.src == b.src && a.src_step == b.src_step && a.dst == b.dst && a.dst_step == b.dst_step &&
         a.bytes == b.bytes && a.port == b.port && a.lane == b.lane;
}

// What a stage grouped in full leaves for the stages after it: its runs and,
// per run and transfer, the group it fell in. A pipelined chain drains one
// transfer per stage: the next stage is the same runs, some shorter. Its
// groups are then the recorded ones less the transfers dropped, as long as
// each of those was a group of its own (a group that loses a member may
// split; a group that keeps all of them keeps its key, which depends on its
// members alone). So such a stage costs O(runs + transfers dropped), not
// O(transfers): a gather of n nodes groups O(n) transfers, not O(n^2).
class StageCarry {
 public:
  void record(const std::vector<TransferRun>& runs, const StageGroups& groups, const std::vector<int>& outcome_ids,
              std::size_t outcomes) {
    runs_ = runs;
    std::int64_t transfers = 0;
    for (const TransferRun& run : runs) transfers += run.count;
    std::vector<int> group_of_flat(transfers);
    group_size_.assign(groups.groups(), 0);
    group_outcome_ = outcome_ids;
    counts_.assign(outcomes, 0);
    for (int g = 0; g < groups.groups(); ++g) {
      for (const int* member = groups.members_begin(g); member != groups.members_end(g); ++member) {
        group_of_flat[*member] = g;
      }
      group_size_[g] = static_cast<int>(groups.members_end(g) - groups.members_begin(g));
      ++counts_[outcome_ids[g]];
    }
    group_of_.resize(runs.size());
    std::size_t flat = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      group_of_[r].assign(group_of_flat.begin() + flat, group_of_flat.begin() + flat + runs[r].count);
      flat += runs[r].count;
    }
    alive_ = groups.groups();
    valid_ = true;
  }
  // Whether `runs` are the recorded ones with some shortened, dropping only
  // groups of one transfer; if so, drops those groups.
  bool shrink_to(const std::vector<TransferRun>& runs) {
    if (!valid_ || runs.size() != runs_.size()) return false;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (!same_but_count(runs[r], runs_[r]) || runs[r].count < 0 || runs[r].count > runs_[r].count) return false;
      for (int i = runs[r].count; i < runs_[r].count; ++i) {
        if (group_size_[group_of_[r][i]] != 1) return false;
      }
    }
    for (std::size_t r = 0; r < runs.size(); ++r) {
      for (int i = runs[r].count; i < runs_[r].count; ++i) {
        --counts_[group_outcome_[group_of_[r][i]]];
        --alive_;
      }
      group_of_[r].resize(runs[r].count);
      runs_[r].count = runs[r].count;
    }
    return true;
  }
  // Groups alive per outcome id, and in all.
  const std::vector<std::int64_t>& counts() const { return counts_; }
  std::int64_t groups() const { return alive_; }

 private:
  bool valid_ = false;
  std::vector<TransferRun> runs_;
  std::vector<std::vector<int>> group_of_;
  std::vector<int> group_size_, group_outcome_;
  std::vector<std::int64_t> counts_;
  std::int64_t alive_ = 0;
};

int node_mod(std::int64_t value, int nodes) { return static_cast<int>(((value % nodes) + nodes) % nodes); }

void expand(const std::vector<TransferRun>& runs, const Topology& topology, std::vector<StageTransfer>* out) {
  out->clear();
  const int nodes = topology.nodes();
  for (const TransferRun& run : runs) {
    if (run.count < 0) throw UsageError("fabric: a run of " + std::to_string(run.count) + " transfers; give 0 or more");
    // A run's first transfer names real nodes: only what follows wraps round.
    topology.check_node(run.src, "source");
    topology.check_node(run.dst, "destination");
    for (int i = 0; i < run.count; ++i) {
      if ((i & 0xFFFF) == 0) check_interrupt();
      out->push_back(StageTransfer{node_mod(run.src + std::int64_t{i} * run.src_step, nodes),
                                   node_mod(run.dst + std::int64_t{i} * run.dst_step, nodes), run.bytes, run.port,
                                   run.lane});
    }
  }
}

// Simulates `members` of `transfers` alone, from an empty network at time 0.
Outcome simulate(Network& network, const std::vector<StageTransfer>& transfers, const int* begin, const int* end) {
  network.begin_stage();
  const std::uint64_t before = network.engine().events_processed();
  const std::uint64_t simulated_before = network.engine().events_simulated();
  Outcome outcome;
  outcome.done.assign(end - begin, 0.0);
  for (const int* member = begin; member != end; ++member) {
    const StageTransfer& t = transfers[*member];
    double* slot = &outcome.done[member - begin];
    network.send(t.src, t.dst, t.bytes, 0.0, t.port, t.lane,
                 [slot](const MessageRecord& record) { *slot = record.done - record.start; });
  }
  network.run();
  for (double done : outcome.done) outcome.last = std::max(outcome.last, done);
  outcome.events = network.engine().events_processed() - before;
  outcome.simulated = network.engine().events_simulated() - simulated_before;
  return outcome;
}

bool draws_random_numbers(const FabricSpec& spec) {
  return spec.framing.bit_error_rate > 0.0 || (spec.trunk_framing && spec.trunk_framing->bit_error_rate > 0.0);
}

}  // namespace

ScheduleResult run_schedule(const FabricSpec& spec, const std::vector<std::vector<TransferRun>>& stages,
                            const ScheduleOptions& options) {
  Network network(spec);
  network.enable_fast_forward(options.fast_forward);
  const HostCosts& host = spec.host_costs;
  const int servers = host.servers(spec.nodes);
  ScheduleResult result;
  result.reused = options.reuse && !draws_random_numbers(spec);
  if (options.reuse && !result.reused) {
    result.note = "simulated in full: bit errors draw from one random stream that every transfer shares";
  }
  double clock = 0.0;
  if (options.reconfigure) {
    clock += host.topology_reconfiguration + host.barrier(servers, host.topology_reconfiguration);
  }
  clock += host.crossbar_setup + host.barrier(servers, host.crossbar_setup);
  result.setup = clock;
  // The interrupt tells the host that the stage's writes are done; the
  // next stage's crossbar is set up before the barrier that ends this one.
  const auto close_stage = [&](std::size_t s, StageTiming&& stage) {
    const double setup_next = s + 1 < stages.size() ? host.crossbar_setup : 0.0;
    const double before_barrier = host.interrupt + setup_next;
    stage.control = before_barrier + host.barrier(servers, stage.transfer + before_barrier);
    clock += stage.transfer + stage.control;
    result.stages.push_back(std::move(stage));
  };
  StageGroups groups(network);
  std::unordered_map<std::vector<std::int64_t>, Outcome, KeyHash> seen;
  std::vector<const Outcome*> outcomes;  // by id
  std::vector<int> outcome_of_group;
  // Carrying groups over is for the times alone (every transfer's own time
  // needs its stage expanded anyway).
  StageCarry carry;
  const bool carry_over = result.reused && !options.keep_done;
  std::vector<StageTransfer> transfers;
  std::vector<int> everyone;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    check_interrupt();
    StageTiming stage;
    stage.start = clock;
    if (carry_over && carry.shrink_to(stages[s])) {
      for (const TransferRun& run : stages[s]) {
        stage.transfers += run.count;
        stage.bytes += run.count * run.bytes;
      }
      for (std::size_t id = 0; id < outcomes.size(); ++id) {
        if (carry.counts()[id] == 0) continue;
        stage.transfer = std::max(stage.transfer, outcomes[id]->last);
        result.events += static_cast<std::uint64_t>(carry.counts()[id]) * outcomes[id]->events;
      }
      result.groups += carry.groups();
      close_stage(s, std::move(stage));
      continue;
    }
    expand(stages[s], network.topology(), &transfers);
    stage.transfers = static_cast<std::int64_t>(transfers.size());
    for (const StageTransfer& t : transfers) stage.bytes += t.bytes;
    if (options.keep_done) stage.done.assign(transfers.size(), 0.0);
    if (!result.reused) {
      everyone.resize(transfers.size());
      for (std::size_t t = 0; t < transfers.size(); ++t) everyone[t] = static_cast<int>(t);
      const Outcome outcome = simulate(network, transfers, everyone.data(), everyone.data() + everyone.size());
      stage.transfer = outcome.last;
      if (options.keep_done) stage.done = outcome.done;
      result.events += outcome.events;
      result.events_simulated += outcome.simulated;
      result.groups += 1;
      result.distinct_groups += 1;
    } else {
      groups.split(transfers);
      outcome_of_group.resize(groups.groups());
      for (int g = 0; g < groups.groups(); ++g) {
        if ((g & 0xFFF) == 0) check_interrupt();
        const auto& key = groups.key(g);
        auto found = seen.find(key);
        if (found == seen.end()) {
          Outcome outcome = simulate(network, transfers, groups.members_begin(g), groups.members_end(g));
          result.events_simulated += outcome.simulated;
          outcome.id = static_cast<int>(outcomes.size());
          found = seen.emplace(key, std::move(outcome)).first;
          outcomes.push_back(&found->second);  // elements of an unordered_map stay where they are
        }
        const Outcome& outcome = found->second;
        outcome_of_group[g] = outcome.id;
        stage.transfer = std::max(stage.transfer, outcome.last);
        result.events += outcome.events;
        if (options.keep_done) {
          const int* member = groups.members_begin(g);
          for (std::size_t k = 0; k < outcome.done.size(); ++k) stage.done[member[k]] = outcome.done[k];
        }
      }
      result.groups += groups.groups();
      if (carry_over) carry.record(stages[s], groups, outcome_of_group, outcomes.size());
    }
    close_stage(s, std::move(stage));
  }
  if (result.reused) result.distinct_groups = seen.size();
  result.total = clock;
  result.fast_forwards = network.fast_forwards();
  result.mean_depth = network.engine().mean_depth();
  return result;
}

TrafficResult uniform_traffic(const FabricSpec& spec, double rate, std::int64_t packets_per_node,
                              std::int64_t payload) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    throw UsageError("fabric: packet rate " + std::to_string(rate) + " per second; give a positive rate");
  }
  if (packets_per_node < 1) throw UsageError("fabric: give at least 1 packet per node");
  Network network(spec);
  const int n = network.topology().nodes();
  TrafficResult result;
  std::mt19937_64 rng(spec.seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<int> other(0, n - 2);
  double latency_sum = 0.0;
  std::uint64_t links_sum = 0;
  std::vector<std::int64_t> left(n, packets_per_node);
  // Each node's next packet is drawn when its previous one is sent, so the
  // random stream is consumed in simulated-time order.
  std::function<void(int)> emit = [&](int src) {
    int dst = other(rng);
    if (dst >= src) ++dst;
    links_sum += network.topology().path_links(src, dst, 0);
    network.send(src, dst, payload, network.now(), 0, 0, [&](const MessageRecord& record) {
      latency_sum += record.done - record.start;
      ++result.packets;
      result.duration = std::max(result.duration, record.done);
    });
    if (--left[src] > 0) network.at(network.now() + gap(rng), [&emit, src] { emit(src); });
  };
  for (int i = 0; i < n; ++i) network.at(gap(rng), [&emit, i] { emit(i); });
  network.run();
  double wait_sum = 0.0, frames = 0.0;
  for (std::size_t p = 0; p < network.topology().ports().size(); ++p) {
    wait_sum += network.port_stats(static_cast<int>(p)).wait_sum;
    frames += static_cast<double>(network.port_stats(static_cast<int>(p)).frames);
  }
  result.mean_latency = latency_sum / static_cast<double>(result.packets);
  result.mean_wait = wait_sum / frames;
  result.mean_links = static_cast<double>(links_sum) / static_cast<double>(result.packets);
  result.throughput = static_cast<double>(result.packets) * static_cast<double>(payload) / result.duration;
  result.events = network.engine().events_processed();
  return result;
}

namespace {

// Student's t quantile for a two-sided 95 % interval (Cornish-Fisher
// expansion around the normal quantile; within 0.1 % from 10 degrees of freedom).
double t_quantile_975(int degrees) {
  const double z = 1.959963984540054, v = degrees;
  return z + (z * z * z + z) / (4 * v) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

}  // namespace

QueueResult single_queue(double rho, std::uint64_t packets, bool exponential_lengths, std::uint64_t seed, int batches) {
  if (!(rho > 0.0 && rho < 1.0)) {
    throw UsageError("fabric: load rho " + std::to_string(rho) + " has no steady state; give 0 < rho < 1");
  }
  if (batches < 10 || packets < 100ULL * static_cast<std::uint64_t>(batches)) {
    throw UsageError("fabric: the queue validation needs at least 10 batches of 100 packets");
  }
  // A link of 1 GB/s without coding or framing overhead: the service time is
  // the packet length in nanoseconds, mean 10 us.
  FabricSpec spec;
  spec.topology = TopologyKind::ring;
  spec.nodes = 2;
  spec.ports_per_node = 2;
  spec.access_link = Link{8e9, 1, LineCoding::none, 0.0};
  spec.trunk_link = spec.access_link;
  spec.framing = Framing{"queue", 0, 0, 0, 1 << 30, 1, 0, 0.0};
  spec.seed = seed;
  const double mean_bytes = 10000.0;
  Network network(spec);
  std::vector<double> waits;
  waits.reserve(packets);
  network.record_waits(network.node_port(0, 0), &waits);

  std::mt19937_64 rng(seed);
  const double service_mean = mean_bytes / spec.access_link.data_rate();
  std::exponential_distribution<double> gap(rho / service_mean);
  std::exponential_distribution<double> length(1.0 / mean_bytes);
  std::uint64_t sent = 0;
  std::function<void()> arrive = [&] {
    // Lengths are whole bytes; rounding to the nearest keeps the mean.
    const auto bytes = exponential_lengths ? std::max<std::int64_t>(1, std::llround(length(rng)))
                                           : static_cast<std::int64_t>(mean_bytes);
    network.send(0, 1, bytes, network.now(), 0, 0, nullptr);
    if (++sent < packets) network.at(network.now() + gap(rng), arrive);
  };
  network.at(0.0, arrive);
  network.run();

  // Batch means after a warm-up of 1 % of the packets.
  const std::size_t warm = waits.size() / 100;
  const std::size_t per_batch = (waits.size() - warm) / batches;
  std::vector<double> means(batches, 0.0);
  for (int b = 0; b < batches; ++b) {
    for (std::size_t i = 0; i < per_batch; ++i) means[b] += waits[warm + b * per_batch + i];
    means[b] /= static_cast<double>(per_batch);
  }
  double mean = 0.0;
  for (double m : means) mean += m;
  mean /= batches;
  double variance = 0.0;
  for (double m : means) variance += (m - mean) * (m - mean);
  variance /= batches - 1;

  QueueResult result;
  result.packets = waits.size();
  result.service_mean = service_mean;
  result.mean_wait = mean;
  result.ci_half_width = t_quantile_975(batches - 1) * std::sqrt(variance / batches);
  result.batches = batches;
  result.events = network.engine().events_processed();
  return result;
}

}  // namespace fpgacomm::fabric
