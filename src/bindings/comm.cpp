#include <mpi4py/mpi4py.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "comm/calibration.hpp"
#include "comm/transfer.hpp"
#include "core/error.hpp"
#include "core/launch_hint.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

MPI_Comm mpi_comm(py::handle communicator) {
  static const bool imported = [] {
    if (import_mpi4py() < 0) throw py::error_already_set();
    return true;
  }();
  (void)imported;
  if (!PyObject_TypeCheck(communicator.ptr(), &PyMPIComm_Type))
    throw UsageError("expected an mpi4py communicator (mpi4py.MPI.Comm)");
  return *PyMPIComm_Get(communicator.ptr());
}

namespace {

// A Python-facing endpoint for sending buffers between ranks. Each call
// first tells the peer how its buffer moves (one small message), so both
// sides cut the wire the same way; the benchmarks do this once per run.
class PyTransfers {
 public:
  // Collective: see Transfers.
  PyTransfers(py::object communicator, DeviceOps* device, const std::string& path, std::uint64_t chunk, int slots,
              std::uint64_t fast_to_device, std::uint64_t fast_to_host)
      : communicator_(communicator),
        comm_(mpi_comm(communicator)),
        transfers_(comm_, device, TransferOptions{parse_path(path), chunk, slots, fast_to_device, fast_to_host}) {}

  void send(Buffer& buffer, int dest, int tag, std::int64_t nbytes) {
    const std::uint64_t bytes = nbytes < 0 ? buffer.bytes() : static_cast<std::uint64_t>(nbytes);
    const Route peer = exchange_route(comm_, dest, transfers_.route_of(buffer));
    transfers_.send(buffer, bytes, dest, tag, peer);
  }

  void recv(Buffer& buffer, int source, int tag, std::int64_t nbytes, std::uint64_t room) {
    const std::uint64_t bytes = nbytes < 0 ? buffer.bytes() : static_cast<std::uint64_t>(nbytes);
    const Route peer = exchange_route(comm_, source, transfers_.route_of(buffer));
    transfers_.recv(buffer, bytes, source, tag, peer, room);
  }

  std::string route(const Buffer& buffer) const { return route_name(transfers_.route_of(buffer)); }

 private:
  py::object communicator_;  // keeps the mpi4py communicator alive
  Communicator comm_;
  Transfers transfers_;
};

}  // namespace

void bind_comm(py::module_& m) {
  m.def("mpi_library_version", &mpi_library_version, "MPI_Get_library_version's text, without its terminator.");
  m.def("mpi_control_variable", &mpi_control_variable, py::arg("name"),
        "An integer MPI_T control variable as text (an enumeration's by its value's name); '' where there is none.");
  m.def("run_it_with", &run_it_with, py::arg("ranks"),
        "'run it with mpirun -np RANKS', with srun's form where Slurm is present (a job, or srun on the PATH).");
  m.def(
      "host_names", [](py::object communicator) { return Communicator(mpi_comm(communicator)).host_names(); },
      py::arg("comm"));
  m.def(
      "agree",
      [](py::object communicator, const std::string& failure, bool usage) {
        const Communicator comm(mpi_comm(communicator));
        std::exception_ptr error;
        if (!failure.empty())
          error = usage ? std::make_exception_ptr(UsageError(failure)) : std::make_exception_ptr(Error(failure));
        py::gil_scoped_release release;
        comm.agree(error);
      },
      py::arg("comm"), py::arg("failure") = "", py::arg("usage") = true,
      "Collective verdict: if any rank passes a failure, every rank raises the lowest failing rank's error.");

  py::class_<PyTransfers>(m, "Transfers")
      .def(py::init<py::object, DeviceOps*, std::string, std::uint64_t, int, std::uint64_t, std::uint64_t>(),
           py::arg("comm"), py::arg("device"), py::arg("path") = "auto", py::arg("chunk_bytes") = 0,
           py::arg("slots") = TransferOptions{}.slots, py::arg("fast_to_device") = 1, py::arg("fast_to_host") = 1,
           py::keep_alive<1, 3>())
      .def("send", &PyTransfers::send, py::arg("buffer"), py::arg("dest"), py::arg("tag") = 0, py::arg("nbytes") = -1,
           py::call_guard<py::gil_scoped_release>())
      .def("recv", &PyTransfers::recv, py::arg("buffer"), py::arg("source"), py::arg("tag") = 0, py::arg("nbytes") = -1,
           py::arg("room") = 0, py::call_guard<py::gil_scoped_release>(),
           "room: bytes of the buffer a widened staged copy may overwrite past the message (0: none)")
      .def("route", &PyTransfers::route, py::arg("buffer"));
  m.def(
      "measure_copies",
      [](py::object communicator, Device& device, const std::vector<std::uint64_t>& sizes, int repetitions,
         bool copies) {
        const Communicator comm(mpi_comm(communicator));
        std::vector<CopySample> samples;
        {
          py::gil_scoped_release release;
          samples = measure_copies(comm, device, sizes, repetitions, copies);
        }
        py::list out;
        for (const CopySample& sample : samples) {
          py::dict row;
          row["bytes"] = sample.bytes;
          row["to_device"] = sample.to_device;
          row["to_host"] = sample.to_host;
          out.append(row);
        }
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("sizes"), py::arg("repetitions"), py::arg("copies") = true,
      "Collective: this rank's median copy seconds per size, ranks taking turns on their devices (copies "
      "False: this rank's turns copy nothing), as rows {bytes, to_device, to_host}.");
  m.def(
      "measure_pipeline",
      [](py::object communicator, Device& device, std::uint64_t bytes, int messages,
         const std::vector<TransferOptions>& candidates, int repetitions, bool stages) {
        const Communicator comm(mpi_comm(communicator));
        py::gil_scoped_release release;
        return measure_pipeline(comm, device, bytes, messages, candidates, repetitions, stages);
      },
      py::arg("comm"), py::arg("device"), py::arg("bytes"), py::arg("messages"), py::arg("candidates"),
      py::arg("repetitions"), py::arg("stages") = true,
      "Collective: median seconds of the staged engine moving a window of `messages` messages of `bytes` from "
      "rank 0 to rank 1 with each candidate TransferOptions (chunk, slots), candidates taking turns in every "
      "repetition.");
  m.attr("MAX_WIRE_CHUNK") = kMaxWireChunk;
  m.def("default_chunk_bytes", &default_chunk_bytes, py::arg("device"),
        "The measured default pipelining chunk for a device (None: no device).");
}

}  // namespace fpgacomm::bindings
