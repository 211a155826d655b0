#include "bench/beff.hpp"

#include <pybind11/stl.h>

#include "bench/ring.hpp"
#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "bindings/size_hook.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

py::dict size_row(const BeffSize& s) {
  py::dict row;
  row["size"] = s.size;
  row["loop_length"] = s.loop_length;
  row["times"] = s.times;
  row["errors"] = s.errors;
  return row;
}

}  // namespace

void bind_beff(py::module_& m) {
  auto options = validated_options_class<BeffOptions>(m, "BeffOptions", "One b_eff sweep's parameters.");
  options.def_property(
      "type", [](const BeffOptions& o) { return beff_type_name(o.type); },
      [](BeffOptions& o, const std::string& name) {
        o.type = alike_on_every_rank([&] { return parse_beff_type(name); });
      },
      "cpu, pcie, kernel or iec");
  options.def_readwrite("sizes", &BeffOptions::sizes)
      .def_readwrite("loop_lengths", &BeffOptions::loop_lengths, "per size; 0: the adaptive rule")
      .def_readwrite("target_time", &BeffOptions::target_time, "the adaptive rule's seconds per measurement")
      .def_readwrite("max_loop_length", &BeffOptions::max_loop_length, "the adaptive rule's ceiling")
      .def_readwrite("repetitions", &BeffOptions::repetitions)
      .def_readwrite("validation_iterations", &BeffOptions::validation_iterations)
      .def_readwrite("ring", &BeffOptions::ring, "the rank at each ring position")
      .def_readwrite("bank", &BeffOptions::bank)
      .def_readwrite("transfer", &BeffOptions::transfer, "chunk_bytes and slots; pcie and kernel always stage");
  m.def(
      "run_beff",
      [](py::object communicator, Device* device, const BeffOptions& options, const py::object& on_size) {
        const Communicator comm(mpi_comm(communicator));
        const SizeHook<BeffSize> hook = python_size_hook<BeffSize>(on_size, &size_row);
        BeffRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_beff(comm, device, options, hook);
        }
        py::list sizes_out;
        for (const BeffSize& s : run.sizes) sizes_out.append(size_row(s));
        py::dict out;
        out["sizes"] = sizes_out;
        out["chunk_bytes"] = run.chunk_bytes;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("options"), py::arg("on_size") = py::none(),
      "One b_eff sweep on the ring; collective over comm. Every rank gets every rank's times. on_size: None, or "
      "called on every rank with each size's row as it ends.");
  m.def("beff_types", &beff_type_names,
        "The names of BeffOptions.type, the core's rings (Python's comm_type adds sim, the simulated ring).");
  m.def("ring_order", &ring_order, py::arg("ranks"), py::arg("random"), py::arg("seed"),
        "The rank at each ring position: rank order, or a permutation drawn from seed.");
  m.def(
      "ring_neighbours",
      [](const std::vector<int>& order, int rank) {
        const RingNeighbours n = ring_neighbours(order, rank);
        return py::make_tuple(n.left, n.right);
      },
      py::arg("order"), py::arg("rank"), "(left, right) neighbour of rank in the ring.");
}

}  // namespace fpgacomm::bindings
