#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "comm/datatype.hpp"
#include "core/interrupt.hpp"
#include "core/mapping.hpp"
#include "core/sizes.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_core(py::module_& m) {
  m.def("parse_size", &parse_size, py::arg("text"));
  m.def(
      "parse_size_range",
      [](const std::string& spec, std::uint64_t min, std::uint64_t max) {
        const SizeRange range = parse_size_range(spec, {min, max});
        return py::make_tuple(range.min, range.max);
      },
      py::arg("spec"), py::arg("default_min"), py::arg("default_max"));
  m.def(
      "doubling_sizes",
      [](std::uint64_t min, std::uint64_t max) {
        return doubling_sizes({min, max});
      },
      py::arg("min"), py::arg("max"));
  m.def("datatype_names", &datatype_names, "OSU Micro-Benchmarks' -T choices, lower case.");
  m.def(
      "datatype_bytes", [](const std::string& name) { return datatype_bytes(parse_datatype(name)); }, py::arg("name"),
      "Bytes of one element of a -T datatype.");
  m.def("parse_device_map", &parse_device_map, py::arg("spec"), py::arg("source"));
  m.def("install_interrupt_handler", &install_interrupt_handler,
        "SIGINT, SIGTERM, SIGHUP and SIGALRM (the time limit) stop the core's loops (Interrupted) as well as reaching "
        "Python's handlers.");
  m.def(
      "pending_interrupt", [] { return pending_interrupt.load(); },
      "The first interrupting signal's number, 0 while none came.");
  m.def("claim_interrupt", &claim_interrupt,
        "True for the first caller only: a loop throwing Interrupted and Python's handler raising it claim the "
        "interrupt, so that one signal raises once.");
  m.def("signal_name", &signal_name, py::arg("signal"));
  m.def("interrupt_text", &interrupt_text, py::arg("signal"),
        "What ended the run: 'time limit (--timeout)', or the signal as received ('interrupted by SIGINT (Ctrl-C)').");
  m.def("node_local_rank", &node_local_rank, py::arg("hosts"), py::arg("rank"));
  m.def("device_index", &device_index, py::arg("local_rank"), py::arg("device_count"), py::arg("map"),
        py::arg("source"));
}

}  // namespace fpgacomm::bindings
