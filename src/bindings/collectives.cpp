#include "bench/collectives.hpp"

#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "bindings/options.hpp"
#include "bindings/size_hook.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

py::dict size_row(const CollectiveTiming& t) {
  py::dict row;
  row["size"] = t.size;
  row["iterations"] = t.iterations;
  row["samples"] = t.samples;
  row["rank_means"] = t.rank_means;
  row["staging"] = t.staging;
  row["errors"] = t.errors;
  return row;
}

}  // namespace

void bind_collectives(py::module_& m) {
  auto options =
      validated_options_class<CollectiveOptions>(m, "CollectiveOptions", "One OSU collective sweep's parameters.");
  options.def_readwrite("op", &CollectiveOptions::op, "one of collective_ops()");
  text_property(options, "kind", &CollectiveOptions::kind, &mem_kind_code, &parse_mem_kind,
                "every buffer of every rank: H, H!, D, B or P");
  text_property(options, "datatype", &CollectiveOptions::datatype, &datatype_name, &parse_datatype,
                "OMB's -T: mpi_char, mpi_int or mpi_float");
  options.def_readwrite("sizes", &CollectiveOptions::sizes)
      .def_readwrite("counts", &CollectiveOptions::counts)
      .def_readwrite("root", &CollectiveOptions::root, "None: rank 0 where the collective has a root")
      .def_readwrite("validation", &CollectiveOptions::validation)
      .def_readwrite("validation_warmup", &CollectiveOptions::validation_warmup,
                     "OMB's -u: with validation, untimed calls before each timed one")
      .def_readwrite("bank", &CollectiveOptions::bank);
  m.def("collective_ops", &collective_ops, "OSU Micro-Benchmarks' blocking collectives.");
  m.def("rooted_collective_ops", &rooted_collective_ops, "The collectives with a root.");
  m.def(
      "run_collective",
      [](py::object communicator, DeviceOps* device, const CollectiveOptions& options, const py::object& on_size) {
        const Communicator comm(mpi_comm(communicator));
        const SizeHook<CollectiveTiming> hook = python_size_hook<CollectiveTiming>(on_size, &size_row);
        CollectiveRun run;
        {
          py::gil_scoped_release release;  // no Python in the timed loop; watchdogs may run
          run = run_collective(comm, device, options, hook);
        }
        py::list sizes_out;
        for (const CollectiveTiming& t : run.sizes) sizes_out.append(size_row(t));
        py::dict out;
        out["sizes"] = sizes_out;
        out["datatype"] = datatype_name(options.datatype);
        out["root"] = run.root;
        out["route"] = run.route;
        return out;
      },
      py::arg("comm"), py::arg("device"), py::arg("options"), py::arg("on_size") = py::none(),
      "One OSU collective sweep; collective over comm. Every rank gets the same timings. on_size: None, or "
      "called on every rank with each size's row as it ends.");
}

}  // namespace fpgacomm::bindings
