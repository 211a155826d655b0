#include <pybind11/stl.h>

#include "bench/devbw.hpp"
#include "bench/pt2pt.hpp"
#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "bindings/size_hook.hpp"
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

py::dict size_row(const SizeTiming& t, bool timeline) {
  py::dict row;
  row["size"] = t.size;
  row["window"] = t.window;
  row["iterations"] = t.iterations;
  row["value"] = t.value;
  row["samples"] = t.samples;
  row["errors"] = t.errors;
  if (timeline) row["timeline"] = timeline_rows(t.timeline);
  return row;
}

}  // namespace

void bind_bench(py::module_& m) {
  auto options = validated_options_class<Pt2ptOptions>(m, "Pt2ptOptions", "One OSU point-to-point sweep's parameters.");
  options.def_readwrite("test", &Pt2ptOptions::test, "latency, multi_lat, bw, bibw or mbw_mr");
  text_property(options, "send_kind", &Pt2ptOptions::send_kind, &mem_kind_code, &parse_mem_kind,
                "rank 0's buffers (the first half's in multi-pair tests): H, H!, D, B or P");
  text_property(options, "recv_kind", &Pt2ptOptions::recv_kind, &mem_kind_code, &parse_mem_kind,
                "rank 1's buffers (the second half's)");
  text_property(options, "datatype", &Pt2ptOptions::datatype, &datatype_name, &parse_datatype,
                "OMB's -T: mpi_char, mpi_int or mpi_float");
  options.def_readwrite("sizes", &Pt2ptOptions::sizes)
      .def_readwrite("counts", &Pt2ptOptions::counts)
      .def_readwrite("window", &Pt2ptOptions::window)
      .def_readwrite("validation", &Pt2ptOptions::validation)
      .def_readwrite("validation_warmup", &Pt2ptOptions::validation_warmup,
                     "OMB's -u: with validation, untimed repetitions before each timed operation")
      .def_readwrite("pairs", &Pt2ptOptions::pairs, "mbw_mr's -p: pairs taking part; None: every rank")
      .def_readwrite("vary_window", &Pt2ptOptions::vary_window, "mbw_mr's -V: each size at every varied_windows()")
      .def_readwrite("print_rate", &Pt2ptOptions::print_rate, "mbw_mr's -R: whether its text shows the message rate")
      .def_readwrite("multiple_buffers", &Pt2ptOptions::multiple_buffers)
      .def_readwrite("touch", &Pt2ptOptions::touch)
      .def_readwrite("bank", &Pt2ptOptions::bank)
      .def_readwrite("timeline", &Pt2ptOptions::timeline)
      .def_readwrite("transfer", &Pt2ptOptions::transfer);
  m.def("pt2pt_tests", &pt2pt_tests, "OSU Micro-Benchmarks' point-to-point tests.");
  m.def("varied_windows", &varied_windows, "The windows of mbw_mr -V (OSU Micro-Benchmarks' WINDOW_SIZES).");
  m.attr("VALIDATION_WARMUP") = kValidationWarmup;
  m.attr("MAX_VALIDATION_WARMUP") = kMaxValidationWarmup;
  m.def(
      "run_pt2pt",
      [](py::object communicator, DeviceOps* device, const Pt2ptOptions& options, const py::object& on_size) {
        const Communicator comm(mpi_comm(communicator));
        auto row = [timeline = options.timeline](const SizeTiming& t) { return size_row(t, timeline); };
        const SizeHook<SizeTiming> hook = python_size_hook<SizeTiming>(on_size, row);
        Pt2ptRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_pt2pt(comm, device, options, hook);
        }
        py::list sizes_out;
        for (const SizeTiming& t : run.sizes) sizes_out.append(row(t));
        py::dict out;
        out["sizes"] = sizes_out;
        out["pairs"] = run.pairs;
        out["send_route"] = run.send_route;
        out["recv_route"] = run.recv_route;
        out["chunk_bytes"] = run.chunk_bytes;
        out["slots"] = run.slots;
        out["fast_to_device"] = run.fast_to_device;
        out["fast_to_host"] = run.fast_to_host;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("options"), py::arg("on_size") = py::none(),
      "One OSU point-to-point sweep; collective over comm. Every rank gets the same timings; with timeline, "
      "each size also carries this rank's staged chunks of its last timed window. on_size: None, or called on "
      "every rank with each size's row as it ends.");
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
