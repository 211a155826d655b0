#include "bench/host_copy.hpp"

#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_host_copy(py::module_& m) {
  m.def(
      "host_copy_rate",
      [](int threads, std::uint64_t block, double seconds) {
        py::gil_scoped_release release;  // the copying threads are C++'s; watchdogs may run
        return host_copy_rate(threads, block, seconds);
      },
      py::arg("threads"), py::arg("block"), py::arg("seconds"),
      "Bytes per second copied by `threads` threads at once, each copying a `block` of its own for `seconds`.");
  m.def(
      "host_pass_rate",
      [](int threads, std::uint64_t block, double seconds) {
        py::gil_scoped_release release;
        return host_pass_rate(threads, block, seconds);
      },
      py::arg("threads"), py::arg("block"), py::arg("seconds"),
      "Bytes per second that `threads` threads in a chain pass on together for `seconds`, each copying the "
      "`block` its neighbour wrote the round before.");
}

}  // namespace fpgacomm::bindings
