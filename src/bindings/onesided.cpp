#include <pybind11/stl.h>

#include "bench/onesided.hpp"
#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_onesided(py::module_& m) {
  m.def(
      "run_onesided",
      [](py::object communicator, Device* device, const std::string& test, const std::string& kind,
         const std::vector<std::uint64_t>& sizes, int iterations, int warmup, int iterations_large, int warmup_large,
         std::uint64_t large_threshold, int window, const std::string& window_creation, const std::string& sync,
         bool validate, int bank) {
        OneSidedOptions options;
        options.test = test;
        options.kind = parse_mem_kind(kind);
        options.sizes = sizes;
        options.counts = {iterations, warmup, iterations_large, warmup_large, large_threshold};
        options.window = window;
        options.window_creation = window_creation;
        options.sync = sync;
        options.validate = validate;
        options.bank = bank;
        const Communicator comm(mpi_comm(communicator));
        OneSidedRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_onesided(comm, device, options);
        }
        py::list sizes_out;
        for (const OneSidedTiming& t : run.sizes) {
          py::dict row;
          row["size"] = t.size;
          row["iterations"] = t.iterations;
          row["value"] = t.value;
          row["samples"] = t.samples;
          row["staging_share"] = t.staging_share;
          row["errors"] = t.errors;
          sizes_out.append(row);
        }
        return sizes_out;
      },
      py::arg("comm"), py::arg("device"), py::arg("test"), py::arg("kind"), py::arg("sizes"), py::arg("iterations"),
      py::arg("warmup"), py::arg("iterations_large"), py::arg("warmup_large"), py::arg("large_threshold"),
      py::arg("window"), py::arg("window_creation"), py::arg("sync"), py::arg("validate"), py::arg("bank"),
      "One OSU one-sided sweep on 2 ranks; both ranks get the same timings.");
}

}  // namespace fpgacomm::bindings
