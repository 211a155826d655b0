#include "bench/onesided.hpp"

#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "bindings/size_hook.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

py::dict size_row(const OneSidedTiming& t) {
  py::dict row;
  row["size"] = t.size;
  row["iterations"] = t.iterations;
  row["value"] = t.value;
  row["samples"] = t.samples;
  row["staging_share"] = t.staging_share;
  row["errors"] = t.errors;
  return row;
}

}  // namespace

void bind_onesided(py::module_& m) {
  auto options =
      validated_options_class<OneSidedOptions>(m, "OneSidedOptions", "One OSU one-sided sweep's parameters.");
  options.def_readwrite("test", &OneSidedOptions::test, "one of onesided_tests()");
  text_property(options, "kind", &OneSidedOptions::kind, &mem_kind_code, &parse_mem_kind,
                "the local (origin) buffer of both ranks: H, H!, D, B or P");
  options.def_readwrite("sizes", &OneSidedOptions::sizes)
      .def_readwrite("counts", &OneSidedOptions::counts)
      .def_readwrite("window", &OneSidedOptions::window)
      .def_readwrite("window_creation", &OneSidedOptions::window_creation, "one of window_creations()")
      .def_property(
          "sync", [](const OneSidedOptions& o) { return alike_on_every_rank([&] { return o.sync_or_default(); }); },
          [](OneSidedOptions& o, const std::optional<std::string>& sync) { o.sync = sync.value_or(""); },
          "one of onesided_test_syncs(test); set None for OMB's default for the test, which it then reads")
      .def_readwrite("validation", &OneSidedOptions::validation)
      .def_readwrite("bank", &OneSidedOptions::bank);
  m.def("onesided_tests", &onesided_tests, "OSU Micro-Benchmarks' one-sided tests.");
  m.def("window_creations", &window_creations, "OMB's -w choices, its default first.");
  m.def("onesided_syncs", &onesided_syncs, "OMB's -s choices, its default first.");
  m.def("onesided_test_syncs", &onesided_test_syncs, py::arg("test"),
        "The -s choices of one test, OMB's default for it first.");
  m.def(
      "run_onesided",
      [](py::object communicator, Device* device, const OneSidedOptions& options, const py::object& on_size) {
        const Communicator comm(mpi_comm(communicator));
        const SizeHook<OneSidedTiming> hook = python_size_hook<OneSidedTiming>(on_size, &size_row);
        OneSidedRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_onesided(comm, device, options, hook);
        }
        py::list sizes_out;
        for (const OneSidedTiming& t : run.sizes) sizes_out.append(size_row(t));
        py::dict out;
        out["sizes"] = sizes_out;
        out["sync"] = run.sync;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("options"), py::arg("on_size") = py::none(),
      "One OSU one-sided sweep on 2 ranks; both ranks get the same timings. on_size: None, or called on both "
      "ranks with each size's row as it ends.");
}

}  // namespace fpgacomm::bindings
