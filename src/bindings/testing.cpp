// fpgacomm._core.testing: what only the tests use, kept out of the public
// module. Nothing here changes how a run measures: a test attaches a fault
// to a communicator of its own and runs the ordinary benchmarks over it.
#include <pybind11/pybind11.h>

#include <memory>

#include "bench/beff.hpp"
#include "bench/pattern.hpp"
#include "bindings/bindings.hpp"
#include "comm/receive_fault.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

// Calls `fault(buffer, offset, nbytes)` from the runners, which run without
// the GIL; the communicator may drop it on any thread that frees it.
ReceiveFault python_fault(py::function fault) {
  std::shared_ptr<py::function> held(new py::function(std::move(fault)), [](py::function* f) {
    py::gil_scoped_acquire acquire;
    delete f;
  });
  return [held](Buffer& buffer, std::uint64_t offset, std::uint64_t bytes) {
    py::gil_scoped_acquire acquire;
    (*held)(py::cast(&buffer, py::return_value_policy::reference), offset, bytes);
  };
}

}  // namespace

void bind_testing(py::module_& m) {
  py::module_ testing = m.def_submodule(
      "testing",
      "Test-only facilities: receive faults that prove validation catches broken data, and the patterns "
      "the validation expects.");
  testing.def(
      "attach_receive_fault",
      [](py::object communicator, py::function fault) {
        attach_receive_fault(Communicator(mpi_comm(communicator)), python_fault(std::move(fault)));
      },
      py::arg("comm"), py::arg("fault"),
      "Every benchmark run over comm (give it a duplicate of your own) calls fault(buffer, offset, nbytes) on each "
      "region its validation reads, on this rank, after the timed part of each iteration; freeing comm drops it.");
  testing.def("pattern_byte", &pattern_byte, py::arg("index"), py::arg("size"), py::arg("iteration"), py::arg("stream"),
              "Byte `index` of the point-to-point, collective and gather validation pattern.");
  testing.def("beff_stamp", &beff_stamp, py::arg("sender"), py::arg("direction"), py::arg("sequence"),
              "The stamp b_eff puts in the first and last bytes of a message.");
  testing.def("beff_message_byte", &beff_message_byte, py::arg("index"), py::arg("size"), py::arg("stamp"),
              "Byte `index` of a stamped b_eff message.");
}

}  // namespace fpgacomm::bindings
