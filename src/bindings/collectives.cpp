#include "bench/collectives.hpp"

#include <pybind11/stl.h>

#include "bench/collective_table.hpp"
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

// The facts of each collective (bench/collective_table.hpp), read-only.
void bind_collective_table(py::module_& m) {
  py::class_<Collective>(m, "Collective",
                         "One OSU collective's facts, as the timed loop reads them (bench/collective_table.hpp).")
      .def_readonly("name", &Collective::name, "OSU Micro-Benchmarks' test without osu_")
      .def_readonly("title", &Collective::title, "OMB's title before ' Latency Test'")
      .def_readonly("summary", &Collective::summary, "one line: what it does")
      .def_readonly("mpi_call", &Collective::mpi_call)
      .def_readonly("rooted", &Collective::rooted)
      .def_readonly("reduces", &Collective::reduces, "sums elements (MPI_SUM)")
      .def_readonly("omb_lacks", &Collective::omb_lacks,
                    "the options of OMB's collectives that OMB 7.4 does not give this test")
      .def_property_readonly("moves_data", &moves_data, "whether any rank's buffer holds data (not the barrier's)")
      .def_property_readonly("holds_every_rank", &holds_every_rank,
                             "whether some rank's buffer holds a message of every rank (OMB's -M caps at M / ranks)")
      .def(
          "nccl_bytes", [](const Collective& c, std::uint64_t size, int ranks) { return nccl_bytes(c, size, ranks); },
          py::arg("size"), py::arg("ranks"),
          "nccl-tests' bytes (algbw's numerator) of OMB's per-rank size; None where no data moves.")
      .def(
          "busbw_factor", [](const Collective& c, int ranks) { return bus_factor(c, ranks); }, py::arg("ranks"),
          "nccl-tests' bus bandwidth factor (busbw / algbw) on `ranks` ranks; None where no data moves.")
      .def("__repr__", [](const Collective& c) { return "<Collective " + c.name + ">"; });
  m.def("collectives", &collectives, py::return_value_policy::reference,
        "Every OSU collective's facts, in OSU Micro-Benchmarks' order.");
  m.def("collective", &collective, py::arg("name"), py::return_value_policy::reference,
        "The facts of collective `name`; UsageError for an unknown one.");
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
  bind_collective_table(m);
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
