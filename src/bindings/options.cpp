// What several benchmarks' options share: the iteration counts, OMB's large
// message threshold, how staged transfers are pipelined, and the host
// memory a run may hold.
#include "bindings/options.hpp"

#include <pybind11/stl.h>

#include "bench/host_memory.hpp"
#include "bench/iterations.hpp"
#include "bindings/bindings.hpp"
#include "comm/transfer.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_options(py::module_& m) {
  m.attr("LARGE_MESSAGE") = kLargeMessage;
  validated_options_class<IterationCounts>(
      m, "IterationCounts", "Timed and warm-up iterations per size: the large counts above large_threshold bytes.")
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
      .def_readwrite("slots", &TransferOptions::slots, "staging buffers per direction")
      .def_readwrite("fast_to_device", &TransferOptions::fast_to_device,
                     "smallest fast host-to-device copy: shorter staged writes are widened to it (1: none)")
      .def_readwrite("fast_to_host", &TransferOptions::fast_to_host,
                     "smallest fast device-to-host copy: shorter staged reads are widened to it (1: none)");

  m.attr("BYTES_PER_POSTED_MESSAGE") = kBytesPerPostedMessage;
  m.attr("BYTES_PER_SAMPLE") = kBytesPerSample;
  m.def("set_host_memory_limit", &set_host_memory_limit, py::arg("bytes"),
        "Bytes the ranks of one host may hold together in a real run; 0: 3/4 of MemAvailable.");
  m.def("host_memory_limit", &host_memory_limit, "The limit set, or 0 for 3/4 of MemAvailable.");
  m.def("available_host_memory", &available_host_memory, "/proc/meminfo's MemAvailable in bytes, 0 if unknown.");
  m.def(
      "check_host_memory",
      [](py::object communicator, double buffers, double posted, double samples, const std::string& run,
         const std::string& fix, double rows) {
        const Communicator comm(mpi_comm(communicator));
        std::exception_ptr failure;
        try {
          HostMemory memory;
          memory.buffers = buffers;
          memory.posted = posted;
          memory.samples = samples;
          memory.rows = rows;
          check_host_memory(comm, memory, run, fix);
        } catch (...) {
          failure = std::current_exception();
        }
        comm.agree(failure);
      },
      py::arg("comm"), py::arg("buffers"), py::arg("posted"), py::arg("samples"), py::arg("run"), py::arg("fix"),
      py::arg("rows") = 0.0,
      "Collective: the agreed UsageError when this rank's estimate, added over the ranks of each host, passes "
      "the limit.");
}

}  // namespace fpgacomm::bindings
