#include <pybind11/stl.h>

#include "bench/devbw.hpp"
#include "bench/pt2pt.hpp"
#include "bindings/bindings.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

py::list timeline_rows(const std::vector<ChunkTimes>& chunks) {
  py::list rows;
  for (const ChunkTimes& c : chunks) {
    py::dict row;
    row["direction"] = c.send ? "send" : "recv";
    row["chunk"] = c.index;
    row["offset"] = c.offset;
    row["bytes"] = c.bytes;
    row["copy_enqueued"] = c.copy_enqueued;
    row["copy_done"] = c.copy_done;
    row["mpi_posted"] = c.mpi_posted;
    row["mpi_done"] = c.mpi_done;
    row["queued_to_submit"] = c.queued_to_submit;
    row["submit_to_start"] = c.submit_to_start;
    row["start_to_end"] = c.start_to_end;
    rows.append(row);
  }
  return rows;
}

}  // namespace

void bind_bench(py::module_& m) {
  m.def(
      "run_pt2pt",
      [](py::object communicator, Device* device, const std::string& test, const std::string& send_kind,
         const std::string& recv_kind, const std::vector<std::uint64_t>& sizes, int iterations, int warmup,
         int iterations_large, int warmup_large, std::uint64_t large_threshold, int window, bool validate,
         bool multiple_buffers, bool touch, int bank, const std::string& path, std::uint64_t chunk_bytes, int slots,
         bool timeline, const std::string& datatype) {
        Pt2ptOptions options;
        options.test = test;
        options.send_kind = parse_mem_kind(send_kind);
        options.recv_kind = parse_mem_kind(recv_kind);
        options.sizes = sizes;
        options.iterations = iterations;
        options.warmup = warmup;
        options.iterations_large = iterations_large;
        options.warmup_large = warmup_large;
        options.large_threshold = large_threshold;
        options.datatype = parse_datatype(datatype);
        options.window = window;
        options.validate = validate;
        options.multiple_buffers = multiple_buffers;
        options.touch = touch;
        options.bank = bank;
        options.transfer = {parse_path(path), chunk_bytes, slots};
        options.timeline = timeline;
        const Communicator comm(mpi_comm(communicator));
        Pt2ptRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_pt2pt(comm, device, options);
        }
        py::list sizes_out;
        for (const SizeTiming& t : run.sizes) {
          py::dict row;
          row["size"] = t.size;
          row["iterations"] = t.iterations;
          row["value"] = t.value;
          row["samples"] = t.samples;
          row["errors"] = t.errors;
          if (timeline) row["timeline"] = timeline_rows(t.timeline);
          sizes_out.append(row);
        }
        py::dict out;
        out["sizes"] = sizes_out;
        out["pairs"] = run.pairs;
        out["send_route"] = run.send_route;
        out["recv_route"] = run.recv_route;
        out["chunk_bytes"] = run.chunk_bytes;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("test"), py::arg("send_kind"), py::arg("recv_kind"),
      py::arg("sizes"), py::arg("iterations"), py::arg("warmup"), py::arg("iterations_large"),
      py::arg("warmup_large"), py::arg("large_threshold"), py::arg("window"), py::arg("validate"),
      py::arg("multiple_buffers"), py::arg("touch"), py::arg("bank"), py::arg("path"), py::arg("chunk_bytes"),
      py::arg("slots"), py::arg("timeline") = false, py::arg("datatype") = "mpi_char",
      "One OSU point-to-point sweep; collective over comm. Every rank gets the same timings; with timeline, "
      "each size also carries this rank's staged chunks of its last timed window.");
  m.def(
      "copy_time",
      [](Device& device, const std::string& direction, const std::string& host_kind, std::uint64_t nbytes,
         std::uint64_t chunk, int repetitions) {
        if (direction != "h2d" && direction != "d2h")
          throw UsageError("copy direction must be h2d or d2h, got '" + direction + "'");
        py::gil_scoped_release release;
        return copy_time(device, direction == "h2d", parse_mem_kind(host_kind), nbytes, chunk, repetitions);
      },
      py::arg("device"), py::arg("direction"), py::arg("host_kind"), py::arg("nbytes"), py::arg("chunk"),
      py::arg("repetitions") = 5,
      "Best seconds to copy nbytes host<->device in blocking chunks (the serial staging of one message).");
  m.def(
      "copy_samples",
      [](Device& device, const std::string& direction, const std::string& host_kind, std::uint64_t nbytes,
         int iterations, int warmup) {
        if (direction != "h2d" && direction != "d2h")
          throw UsageError("copy direction must be h2d or d2h, got '" + direction + "'");
        const MemKind kind = parse_mem_kind(host_kind);
        CopySamples samples;
        {
          py::gil_scoped_release release;
          samples = copy_samples(device, direction == "h2d", kind, nbytes, iterations, warmup);
        }
        return py::make_tuple(samples.host_seconds, samples.device_seconds);
      },
      py::arg("device"), py::arg("direction"), py::arg("host_kind"), py::arg("nbytes"), py::arg("iterations"),
      py::arg("warmup"),
      "Per-iteration (host clock, device profiling) seconds of one blocking copy of nbytes host<->device.");
}

}  // namespace fpgacomm::bindings
