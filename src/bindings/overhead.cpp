#include <pybind11/stl.h>

#include "bench/overhead.hpp"
#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_overhead(py::module_& m) {
  m.def(
      "run_overhead",
      [](py::object communicator, const std::vector<std::uint64_t>& sizes, int iterations, int warmup,
         int iterations_large, int warmup_large, std::uint64_t large_threshold) {
        const IterationCounts counts{iterations, warmup, iterations_large, warmup_large, large_threshold};
        const Communicator comm(mpi_comm(communicator));
        std::vector<OverheadTiming> timings;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          timings = run_overhead(comm, sizes, counts);
        }
        py::list out;
        for (const OverheadTiming& t : timings) {
          py::dict row;
          row["size"] = t.size;
          row["iterations"] = t.iterations;
          row["send"] = t.send;
          row["receive"] = t.receive;
          out.append(row);
        }
        return out;
      },
      py::arg("comm"), py::arg("sizes"), py::arg("iterations"), py::arg("warmup"), py::arg("iterations_large"),
      py::arg("warmup_large"), py::arg("large_threshold"),
      "LogGP's send and receive overheads per size (2 ranks, host buffers); both ranks get every timing.");
}

}  // namespace fpgacomm::bindings
