// fpgacomm._core.fabric: the simulator's specs as plain classes and its
// experiments as functions returning dicts. Conversions only.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "core/error.hpp"
#include "fabric/engine.hpp"
#include "fabric/experiments.hpp"
#include "fabric/mac_table.hpp"
#include "fabric/topology.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

namespace {

using namespace fpgacomm::fabric;

// Each item of a stage is one transfer, (src, dst, bytes[, port[, lane]]),
// or a run of them, (count, src, src_step, dst, dst_step, bytes, port, lane).
std::vector<std::vector<TransferRun>> to_stages(const std::vector<std::vector<py::tuple>>& stages) {
  std::vector<std::vector<TransferRun>> out;
  for (const auto& stage : stages) {
    std::vector<TransferRun> runs;
    for (const py::tuple& item : stage) {
      TransferRun run;
      if (item.size() == 8) {
        run.count = item[0].cast<int>();
        run.src = item[1].cast<int>();
        run.src_step = item[2].cast<int>();
        run.dst = item[3].cast<int>();
        run.dst_step = item[4].cast<int>();
        run.bytes = item[5].cast<std::int64_t>();
        run.port = item[6].cast<int>();
        run.lane = item[7].cast<int>();
      } else if (item.size() >= 3 && item.size() <= 5) {
        run.src = item[0].cast<int>();
        run.dst = item[1].cast<int>();
        run.bytes = item[2].cast<std::int64_t>();
        if (item.size() > 3) run.port = item[3].cast<int>();
        if (item.size() > 4) run.lane = item[4].cast<int>();
      } else {
        throw UsageError(
            "fabric: a transfer is (src, dst, bytes[, port[, lane]]) and a run of them (count, src, "
            "src_step, dst, dst_step, bytes, port, lane), got " +
            std::to_string(item.size()) + " items");
      }
      runs.push_back(run);
    }
    out.push_back(std::move(runs));
  }
  return out;
}

// Runs a simulation without holding the GIL; the dicts are built after.
template <class F>
auto without_gil(F run) {
  py::gil_scoped_release release;
  return run();
}

}  // namespace

void bind_fabric(py::module_& m) {
  py::module_ f = m.def_submodule("fabric", "Packet-level discrete-event simulator of FPGA networks");

  py::class_<Link>(f, "Link")
      .def(py::init<>())
      .def_readwrite("lane_rate", &Link::lane_rate, "line bits per second per lane")
      .def_readwrite("lanes", &Link::lanes)
      .def_property(
          "coding", [](const Link& l) { return to_string(l.coding); },
          [](Link& l, const std::string& name) { l.coding = parse_line_coding(name); })
      .def_readwrite("latency", &Link::latency, "seconds, first bit sent to first bit received")
      .def_property_readonly("data_rate", &Link::data_rate, "bytes per second after line coding");

  py::class_<Framing>(f, "Framing")
      .def(py::init<>())
      .def_readwrite("name", &Framing::name)
      .def_readwrite("header_bytes", &Framing::header_bytes)
      .def_readwrite("trailer_bytes", &Framing::trailer_bytes)
      .def_readwrite("gap_bytes", &Framing::gap_bytes)
      .def_readwrite("max_payload", &Framing::max_payload)
      .def_readwrite("payload_unit", &Framing::payload_unit)
      .def_readwrite("min_payload", &Framing::min_payload)
      .def_readwrite("bit_error_rate", &Framing::bit_error_rate)
      .def("wire_bytes", &Framing::wire_bytes);

  py::class_<DeviceSpec>(f, "DeviceSpec")
      .def(py::init<>())
      .def_readwrite("routing_latency", &DeviceSpec::routing_latency)
      .def_property(
          "forwarding", [](const DeviceSpec& d) { return to_string(d.forwarding); },
          [](DeviceSpec& d, const std::string& name) { d.forwarding = parse_forwarding(name); })
      .def_property(
          "arbitration", [](const DeviceSpec& d) { return to_string(d.arbitration); },
          [](DeviceSpec& d, const std::string& name) { d.arbitration = parse_arbitration(name); })
      .def_readwrite("lanes", &DeviceSpec::lanes)
      .def_readwrite("buffer_bytes", &DeviceSpec::buffer_bytes);

  py::class_<NodeSpec>(f, "NodeSpec")
      .def(py::init<>())
      .def_readwrite("app_latency", &NodeSpec::app_latency)
      .def_readwrite("dma_engines", &NodeSpec::dma_engines)
      .def_readwrite("dma_bandwidth", &NodeSpec::dma_bandwidth)
      .def_readwrite("dma_latency", &NodeSpec::dma_latency)
      .def_readwrite("send_overhead", &NodeSpec::send_overhead, "seconds of the sender's software per message")
      .def_readwrite("recv_overhead", &NodeSpec::recv_overhead, "seconds of the receiver's software per message")
      .def_readwrite("gap", &NodeSpec::gap, "least seconds between two messages' starts from one node")
      .def_readwrite("eager_threshold", &NodeSpec::eager_threshold, "bytes; longer messages go by rendezvous")
      .def_readwrite("rendezvous_latency", &NodeSpec::rendezvous_latency,
                     "seconds added to a rendezvous message's start");

  py::class_<HostCosts>(f, "HostCosts")
      .def(py::init<>())
      .def_readwrite("crossbar_setup", &HostCosts::crossbar_setup)
      .def_readwrite("topology_reconfiguration", &HostCosts::topology_reconfiguration)
      .def_readwrite("interrupt", &HostCosts::interrupt)
      .def_readwrite("barrier_per_round", &HostCosts::barrier_per_round)
      .def_readwrite("barrier_base", &HostCosts::barrier_base)
      .def_readwrite("barrier_extra_long", &HostCosts::barrier_extra_long)
      .def_readwrite("barrier_extra_short", &HostCosts::barrier_extra_short)
      .def_readwrite("long_work_threshold", &HostCosts::long_work_threshold)
      .def_readwrite("fpgas_per_server", &HostCosts::fpgas_per_server)
      .def("barrier", &HostCosts::barrier, py::arg("servers"), py::arg("work"));

  py::class_<FabricSpec>(f, "FabricSpec")
      .def(py::init<>())
      .def_property(
          "topology", [](const FabricSpec& s) { return topology_name(s.topology); },
          [](FabricSpec& s, const std::string& name) { s.topology = topology_kind(name); })
      .def_readwrite("nodes", &FabricSpec::nodes)
      .def_readwrite("rows", &FabricSpec::rows)
      .def_readwrite("cols", &FabricSpec::cols)
      .def_readwrite("ports_per_node", &FabricSpec::ports_per_node)
      .def_readwrite("switch_ports", &FabricSpec::switch_ports)
      .def_readwrite("virtual_ports_per_port", &FabricSpec::virtual_ports_per_port)
      .def_readwrite("fpgas_per_host", &FabricSpec::fpgas_per_host)
      .def_readwrite("access_link", &FabricSpec::access_link)
      .def_readwrite("trunk_link", &FabricSpec::trunk_link)
      .def_readwrite("host_link", &FabricSpec::host_link, "a host's memory bus (cluster only)")
      .def_readwrite("framing", &FabricSpec::framing, "framing of the access links")
      .def_readwrite("trunk_framing", &FabricSpec::trunk_framing,
                     "framing of the trunk links; None: the same as framing")
      .def_readwrite("hub", &FabricSpec::hub)
      .def_readwrite("sw", &FabricSpec::sw)
      .def_readwrite("host", &FabricSpec::host)
      .def_readwrite("node", &FabricSpec::node)
      .def_readwrite("host_costs", &FabricSpec::host_costs)
      .def_readwrite("seed", &FabricSpec::seed)
      .def(
          "scale_link",
          [](FabricSpec& s, int device, int port, double factor) {
            s.link_scales.push_back(LinkScale{device, port, factor});
          },
          py::arg("device"), py::arg("port"), py::arg("factor"),
          "Multiply the rate of the link leaving `device` by its `port`-th port (both directions)")
      .def(
          "add_mac_entry",
          [](FabricSpec& s, int node, int port, int vport, std::uint64_t destination) {
            s.mac_table.push_back(MacEntry{node, port, vport, destination});
          },
          py::arg("node"), py::arg("port"), py::arg("vport"), py::arg("destination"),
          "Point virtual port `vport` of physical port `port` of `node` at the MAC address `destination`")
      .def_property_readonly(
          "mac_table",
          [](const FabricSpec& s) {
            py::list entries;
            for (const MacEntry& e : s.mac_table) {
              entries.append(py::make_tuple(e.node, e.port, e.vport, mac_to_string(e.destination)));
            }
            return entries;
          },
          "(node, port, vport, destination MAC) per entry")
      .def_property_readonly(
          "link_scales",
          [](const FabricSpec& s) {
            py::list scales;
            for (const LinkScale& l : s.link_scales) scales.append(py::make_tuple(l.device, l.port, l.factor));
            return scales;
          },
          "(device, port, factor) per slowed link")
      .def("chunk_bytes", &FabricSpec::chunk_bytes, "payload bytes the simulator moves as one frame")
      .def("validate", &FabricSpec::validate);

  f.def(
      "mac_address",
      [](int node, int port, int vport) {
        return mac_address(VirtualPort{node, port, vport});
      },
      py::arg("node"), py::arg("port"), py::arg("vport"), "the MAC address of a virtual port, as an integer");
  f.def("mac_to_string", &mac_to_string, py::arg("address"));

  f.def(
      "describe",
      [](const FabricSpec& spec) {
        spec.validate();
        const auto topology = without_gil([&] { return Topology::build(spec); });
        return py::dict(py::arg("topology") = topology->describe(), py::arg("nodes") = topology->nodes(),
                        py::arg("devices") = topology->devices(), py::arg("levels") = topology->levels(),
                        py::arg("planes") = topology->planes(),
                        py::arg("links") = static_cast<std::int64_t>(topology->ports().size() / 2));
      },
      py::arg("spec"));
  f.def(
      "shape",
      [](const FabricSpec& spec) {
        const TopologyShape shape = Topology::shape(spec);
        return py::dict(py::arg("links") = shape.links, py::arg("levels") = shape.levels,
                        py::arg("longest_path") = shape.longest_path, py::arg("mean_links") = shape.mean_links);
      },
      py::arg("spec"),
      "links, switch levels, longest path and mean path length (links) of the topology the spec builds, from "
      "its closed form, without building it");
  f.def(
      "distances",
      [](const FabricSpec& spec, int src, int port) {
        spec.validate();
        return without_gil([&] { return Topology::build(spec)->distances(src, port); });
      },
      py::arg("spec"), py::arg("src") = 0, py::arg("port") = 0, "links crossed from src to every node");
  f.def(
      "node_at",
      [](const FabricSpec& spec, int links, int src, int port) {
        spec.validate();
        return without_gil([&] {
          const auto topology = Topology::build(spec);
          const int node = topology->node_at(src, links, port);
          return std::make_pair(node, node < 0 ? -1 : topology->path_links(src, node, port));
        });
      },
      py::arg("spec"), py::arg("links"), py::arg("src") = 0, py::arg("port") = 0,
      "(node, links): the lowest-numbered node `links` links from src (links < 0: the nearest), or (-1, -1)");
  f.def(
      "ping_pong",
      [](const FabricSpec& spec, int src, int dst, std::int64_t bytes, int iterations) {
        const PingPongResult r = without_gil([&] { return ping_pong(spec, src, dst, bytes, iterations); });
        return py::dict(py::arg("links") = r.links, py::arg("first_byte") = r.first_byte,
                        py::arg("one_way") = r.one_way, py::arg("half_round_trip") = r.half_round_trip,
                        py::arg("events") = r.events);
      },
      py::arg("spec"), py::arg("src"), py::arg("dst"), py::arg("bytes"), py::arg("iterations") = 1);
  f.def(
      "stream",
      [](const FabricSpec& spec, int src, int dst, std::int64_t bytes, int port) {
        const StreamResult r = without_gil([&] { return stream(spec, src, dst, bytes, port); });
        return py::dict(py::arg("time") = r.time, py::arg("bandwidth") = r.bandwidth, py::arg("events") = r.events);
      },
      py::arg("spec"), py::arg("src"), py::arg("dst"), py::arg("bytes"), py::arg("port") = 0);
  f.def(
      "one_sided",
      [](const FabricSpec& spec, int initiator, int target, std::int64_t bytes, bool get, double handler) {
        const StreamResult r = without_gil([&] { return one_sided(spec, initiator, target, bytes, get, handler); });
        return py::dict(py::arg("time") = r.time, py::arg("bandwidth") = r.bandwidth, py::arg("events") = r.events);
      },
      py::arg("spec"), py::arg("initiator"), py::arg("target"), py::arg("bytes"), py::arg("get"),
      py::arg("handler_latency") = 0.0);
  f.def(
      "virtual_streams",
      [](const FabricSpec& spec, const std::vector<std::tuple<int, int, int, std::int64_t>>& items) {
        std::vector<VirtualTransfer> transfers;
        for (const auto& [node, port, vport, bytes] : items) {
          transfers.push_back(VirtualTransfer{VirtualPort{node, port, vport}, bytes});
        }
        const VirtualStreamsResult r = without_gil([&] { return virtual_streams(spec, transfers); });
        py::list arrivals;
        for (const VirtualArrival& a : r.arrivals) {
          arrivals.append(py::dict(py::arg("dst") = a.destination.node, py::arg("dst_port") = a.destination.port,
                                   py::arg("dst_vport") = a.destination.vport, py::arg("time") = a.time,
                                   py::arg("bandwidth") = a.bandwidth));
        }
        return py::dict(py::arg("arrivals") = arrivals, py::arg("events") = r.events);
      },
      py::arg("spec"), py::arg("transfers"), "(node, port, vport, bytes) per transfer, all started at time 0");
  f.def(
      "beff_ring",
      [](const FabricSpec& spec, const std::vector<std::int64_t>& sizes) {
        const std::vector<BeffPoint> points = without_gil([&] { return beff_ring(spec, sizes); });
        py::list out;
        for (const BeffPoint& p : points) {
          out.append(py::dict(py::arg("bytes") = p.bytes, py::arg("time") = p.time,
                              py::arg("pair_bandwidth") = p.pair_bandwidth, py::arg("events") = p.events));
        }
        return out;
      },
      py::arg("spec"), py::arg("sizes"));
  f.def(
      "run_schedule",
      [](const FabricSpec& spec, const std::vector<std::vector<py::tuple>>& stages, bool reconfigure, bool reuse,
         bool details, bool fast_forward) {
        const auto runs = to_stages(stages);
        const ScheduleOptions options{reconfigure, reuse, details, fast_forward};
        const ScheduleResult r = without_gil([&] { return run_schedule(spec, runs, options); });
        py::list rows;
        for (const StageTiming& s : r.stages) {
          py::dict row(py::arg("start") = s.start, py::arg("transfer") = s.transfer, py::arg("control") = s.control,
                       py::arg("bytes") = s.bytes, py::arg("transfers") = s.transfers);
          if (details) row["done"] = s.done;
          rows.append(row);
        }
        return py::dict(py::arg("setup") = r.setup, py::arg("stages") = rows, py::arg("total") = r.total,
                        py::arg("events") = r.events, py::arg("events_simulated") = r.events_simulated,
                        py::arg("groups") = r.groups, py::arg("distinct_groups") = r.distinct_groups,
                        py::arg("reused") = r.reused, py::arg("note") = r.note, py::arg("mean_depth") = r.mean_depth,
                        py::arg("fast_forwards") = r.fast_forwards);
      },
      py::arg("spec"), py::arg("stages"), py::arg("reconfigure"), py::arg("reuse") = true, py::arg("details") = true,
      py::arg("fast_forward") = true,
      "Stages of transfers, each (src, dst, bytes[, port[, lane]]) or a run (count, src, src_step, dst, dst_step, "
      "bytes, port, lane); reuse: simulate each distinct group of independent transfers once; details: every "
      "transfer's completion per stage (\"done\"); fast_forward: jump through long streams' steady state by "
      "whole periods");
  f.def(
      "uniform_traffic",
      [](const FabricSpec& spec, double rate, std::int64_t packets_per_node, std::int64_t payload) {
        const TrafficResult r = without_gil([&] { return uniform_traffic(spec, rate, packets_per_node, payload); });
        return py::dict(py::arg("packets") = r.packets, py::arg("mean_latency") = r.mean_latency,
                        py::arg("mean_wait") = r.mean_wait, py::arg("mean_links") = r.mean_links,
                        py::arg("throughput") = r.throughput, py::arg("duration") = r.duration,
                        py::arg("events") = r.events);
      },
      py::arg("spec"), py::arg("rate"), py::arg("packets_per_node"), py::arg("payload"));
  f.def(
      "single_queue",
      [](double rho, std::uint64_t packets, bool exponential, std::uint64_t seed, int batches) {
        const QueueResult r = without_gil([&] { return single_queue(rho, packets, exponential, seed, batches); });
        return py::dict(py::arg("packets") = r.packets, py::arg("service_mean") = r.service_mean,
                        py::arg("mean_wait") = r.mean_wait, py::arg("ci_half_width") = r.ci_half_width,
                        py::arg("batches") = r.batches, py::arg("events") = r.events);
      },
      py::arg("rho"), py::arg("packets"), py::arg("exponential_lengths"), py::arg("seed") = 1, py::arg("batches") = 50);
  f.def("heap_baseline_rate", &heap_baseline_rate, py::arg("operations"), py::arg("pending"),
        py::call_guard<py::gil_scoped_release>(),
        "push-and-pop operations per second of a bare binary heap of simulator events");
}

}  // namespace fpgacomm::bindings
