#include "bench/overhead.hpp"

#include <pybind11/stl.h>

#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_overhead(py::module_& m) {
  m.def(
      "run_overhead",
      [](py::object communicator, const std::vector<std::uint64_t>& sizes, const IterationCounts& counts) {
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
      py::arg("comm"), py::arg("sizes"), py::arg("counts"),
      "LogGP's send and receive overheads per size (2 ranks, host buffers); both ranks get every timing.");
}

}  // namespace fpgacomm::bindings
