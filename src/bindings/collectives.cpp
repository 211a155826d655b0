#include <pybind11/stl.h>

#include "bench/collectives.hpp"
#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_collectives(py::module_& m) {
  m.def(
      "run_collective",
      [](py::object communicator, Device* device, const std::string& op, const std::string& kind,
         const std::vector<std::uint64_t>& sizes, int iterations, int warmup, int iterations_large, int warmup_large,
         std::uint64_t large_threshold, const std::string& datatype, int root, bool validate, int bank) {
        CollectiveOptions options;
        options.op = op;
        options.kind = parse_mem_kind(kind);
        options.sizes = sizes;
        options.counts = {iterations, warmup, iterations_large, warmup_large, large_threshold};
        options.datatype = parse_datatype(datatype);
        options.root = root;
        options.validate = validate;
        options.bank = bank;
        const Communicator comm(mpi_comm(communicator));
        CollectiveRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_collective(comm, device, options);
        }
        py::list sizes_out;
        for (const CollectiveTiming& t : run.sizes) {
          py::dict row;
          row["size"] = t.size;
          row["iterations"] = t.iterations;
          row["samples"] = t.samples;
          row["rank_means"] = t.rank_means;
          row["staging"] = t.staging;
          row["errors"] = t.errors;
          sizes_out.append(row);
        }
        py::dict out;
        out["sizes"] = sizes_out;
        out["datatype"] = datatype_name(options.datatype);
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("op"), py::arg("kind"), py::arg("sizes"), py::arg("iterations"),
      py::arg("warmup"), py::arg("iterations_large"), py::arg("warmup_large"), py::arg("large_threshold"),
      py::arg("datatype"), py::arg("root"), py::arg("validate"), py::arg("bank"),
      "One OSU collective sweep; collective over comm. Every rank gets the same timings.");
}

}  // namespace fpgacomm::bindings
