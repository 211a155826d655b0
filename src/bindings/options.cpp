// What several benchmarks' options share: the iteration counts, OMB's large
// message threshold and how staged transfers are pipelined.
#include <pybind11/stl.h>

#include "bench/iterations.hpp"
#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "comm/transfer.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_options(py::module_& m) {
  m.attr("LARGE_MESSAGE") = kLargeMessage;
  validated_options_class<IterationCounts>(m, "IterationCounts",
                                 "Timed and warm-up iterations per size: the large counts above large_threshold bytes.")
      .def_readwrite("iterations", &IterationCounts::iterations)
      .def_readwrite("warmup", &IterationCounts::warmup)
      .def_readwrite("iterations_large", &IterationCounts::iterations_large)
      .def_readwrite("warmup_large", &IterationCounts::warmup_large)
      .def_readwrite("large_threshold", &IterationCounts::large_threshold)
      .def("timed", &IterationCounts::timed, py::arg("size"))
      .def("untimed", &IterationCounts::untimed, py::arg("size"));

  auto transfer = options_class<TransferOptions>(
      m, "TransferOptions", "How device buffers reach MPI (--path) and how staged ones are pipelined.");
  text_property(transfer, "path", &TransferOptions::path, &path_name, &parse_path, "auto, staged or mapped");
  transfer.def_readwrite("chunk_bytes", &TransferOptions::chunk_bytes, "0: the device's default")
      .def_readwrite("slots", &TransferOptions::slots, "staging buffers per direction");
}

}  // namespace fpgacomm::bindings
