#include <pybind11/stl.h>

#include "bench/gather.hpp"
#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

// (peer, first position, blocks) per message.
using Triples = std::vector<std::tuple<int, std::uint64_t, std::uint64_t>>;

std::vector<GatherMove> moves_of(const Triples& triples) {
  std::vector<GatherMove> moves;
  for (const auto& [peer, first, blocks] : triples) moves.push_back({peer, first, blocks});
  return moves;
}

}  // namespace

void bind_gather(py::module_& m) {
  m.def(
      "run_gather",
      [](py::object communicator, Device* device, const std::vector<std::pair<Triples, Triples>>& stages,
         const std::string& mpi_collective, int root, const std::vector<std::uint64_t>& holds,
         const std::vector<std::uint64_t>& checks, const std::string& kind, const std::vector<std::uint64_t>& sizes,
         int iterations, int warmup, int iterations_large, int warmup_large, std::uint64_t large_threshold,
         bool barrier, bool validate, int device_sharers, int barrier_reference,
         int bank) {
        GatherOptions options;
        for (const auto& [sends, recvs] : stages) options.stages.push_back({moves_of(sends), moves_of(recvs)});
        options.mpi_collective = mpi_collective;
        options.root = root;
        options.holds = holds;
        options.checks = checks;
        options.kind = parse_mem_kind(kind);
        options.sizes = sizes;
        options.counts = {iterations, warmup, iterations_large, warmup_large, large_threshold};
        options.barrier = barrier;
        options.validate = validate;
        options.device_sharers = device_sharers;
        options.barrier_reference = barrier_reference;
        options.bank = bank;
        const Communicator comm(mpi_comm(communicator));
        GatherRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_gather(comm, device, options);
        }
        py::list sizes_out;
        for (const GatherTiming& t : run.sizes) {
          py::dict row;
          row["size"] = t.size;
          row["setup"] = t.setup;
          row["transfer"] = t.transfer;
          row["barrier"] = t.barrier;
          row["totals"] = t.totals;
          row["errors"] = t.errors;
          sizes_out.append(row);
        }
        py::dict out;
        out["sizes"] = sizes_out;
        out["barrier_reference"] = run.barrier_reference;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("stages"), py::arg("mpi_collective"), py::arg("root"),
      py::arg("holds"), py::arg("checks"), py::arg("kind"), py::arg("sizes"), py::arg("iterations"),
      py::arg("warmup"), py::arg("iterations_large"), py::arg("warmup_large"), py::arg("large_threshold"),
      py::arg("barrier"), py::arg("validate"), py::arg("device_sharers"),
      py::arg("barrier_reference"), py::arg("bank"),
      "This rank's part of a gather schedule: stages of (sends, receives), each a list of (peer, first "
      "position, blocks); collective over comm. Every rank gets the same timings.");
}

}  // namespace fpgacomm::bindings
