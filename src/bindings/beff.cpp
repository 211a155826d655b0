#include <pybind11/stl.h>

#include "bench/beff.hpp"
#include "bench/ring.hpp"
#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_beff(py::module_& m) {
  m.def(
      "run_beff",
      [](py::object communicator, Device* device, const std::string& type, const std::vector<std::uint64_t>& sizes,
         const std::vector<std::uint64_t>& loop_lengths, double target_time, std::uint64_t max_loop_length,
         int repetitions, int validation_iterations, const std::vector<int>& ring, int bank,
         std::uint64_t chunk_bytes, int slots) {
        BeffOptions options;
        options.type = parse_beff_type(type);
        options.sizes = sizes;
        options.loop_lengths = loop_lengths;
        options.target_time = target_time;
        options.max_loop_length = max_loop_length;
        options.repetitions = repetitions;
        options.validation_iterations = validation_iterations;
        options.ring = ring;
        options.bank = bank;
        options.transfer.chunk_bytes = chunk_bytes;
        options.transfer.slots = slots;
        const Communicator comm(mpi_comm(communicator));
        BeffRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_beff(comm, device, options);
        }
        py::list sizes_out;
        for (const BeffSize& s : run.sizes) {
          py::dict row;
          row["size"] = s.size;
          row["loop_length"] = s.loop_length;
          row["times"] = s.times;
          row["errors"] = s.errors;
          sizes_out.append(row);
        }
        py::dict out;
        out["sizes"] = sizes_out;
        out["chunk_bytes"] = run.chunk_bytes;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("type"), py::arg("sizes"), py::arg("loop_lengths"),
      py::arg("target_time"), py::arg("max_loop_length"), py::arg("repetitions"), py::arg("validation_iterations"),
      py::arg("ring"), py::arg("bank"), py::arg("chunk_bytes"), py::arg("slots"),
      "One b_eff sweep on the ring; collective over comm. Every rank gets every rank's times.");
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
