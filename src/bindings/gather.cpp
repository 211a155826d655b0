#include "bench/gather.hpp"

#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "bindings/size_hook.hpp"

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

py::dict size_row(const GatherTiming& t) {
  py::dict row;
  row["size"] = t.size;
  row["setup"] = t.setup;
  row["transfer"] = t.transfer;
  row["barrier"] = t.barrier;
  row["totals"] = t.totals;
  row["errors"] = t.errors;
  return row;
}

Triples triples_of(const std::vector<GatherMove>& moves) {
  Triples triples;
  for (const GatherMove& move : moves) triples.emplace_back(move.peer, move.first, move.blocks);
  return triples;
}

}  // namespace

void bind_gather(py::module_& m) {
  auto options = validated_options_class<GatherOptions>(
      m, "GatherOptions", "This rank's part of a gather schedule and the sweep's parameters.");
  options.def_property(
      "stages",
      [](const GatherOptions& o) {
        std::vector<std::pair<Triples, Triples>> stages;
        for (const GatherStage& stage : o.stages) stages.emplace_back(triples_of(stage.sends), triples_of(stage.recvs));
        return stages;
      },
      [](GatherOptions& o, const std::vector<std::pair<Triples, Triples>>& stages) {
        o.stages.clear();
        for (const auto& [sends, recvs] : stages) o.stages.push_back({moves_of(sends), moves_of(recvs)});
      },
      "per stage (sends, receives), each a list of (peer, first position, blocks)");
  options
      .def_readwrite("mpi_collective", &GatherOptions::mpi_collective,
                     "gather, scatter or allgather: one MPI_*v stage instead of stages")
      .def_readwrite("root", &GatherOptions::root)
      .def_readwrite("holds", &GatherOptions::holds, "positions this rank holds before the first stage")
      .def_readwrite("checks", &GatherOptions::checks, "positions it must hold, intact, after the last");
  text_property(options, "kind", &GatherOptions::kind, &mem_kind_code, &parse_mem_kind,
                "the buffer's memory kind: H, H!, D, B or P");
  options.def_readwrite("sizes", &GatherOptions::sizes, "bytes per node")
      .def_readwrite("counts", &GatherOptions::counts)
      .def_readwrite("barrier", &GatherOptions::barrier, "control: an MPI_Barrier closes every stage, else local")
      .def_readwrite("validation", &GatherOptions::validation)
      .def_readwrite("device_sharers", &GatherOptions::device_sharers)
      .def_readwrite("barrier_reference", &GatherOptions::barrier_reference)
      .def_readwrite("bank", &GatherOptions::bank)
      .def_readwrite("transfer", &GatherOptions::transfer);
  m.def(
      "run_gather",
      [](py::object communicator, Device* device, const GatherOptions& options, const py::object& on_size) {
        const Communicator comm(mpi_comm(communicator));
        const SizeHook<GatherTiming> hook = python_size_hook<GatherTiming>(on_size, &size_row);
        GatherRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_gather(comm, device, options, hook);
        }
        py::list sizes_out;
        for (const GatherTiming& t : run.sizes) sizes_out.append(size_row(t));
        py::dict out;
        out["sizes"] = sizes_out;
        out["barrier_reference"] = run.barrier_reference;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("options"), py::arg("on_size") = py::none(),
      "This rank's part of a gather schedule; collective over comm. Every rank gets the same timings. on_size: "
      "None, or called on every rank with each size's row as it ends.");
}

}  // namespace fpgacomm::bindings
