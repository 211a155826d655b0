// fpgacomm._core: conversions only; the logic lives in the core library.
#include <pybind11/pybind11.h>

#include "bindings/bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "fpgacomm's C++ core (OpenCL devices, buffers, MPI transfers, benchmark loops)";
  m.attr("__version__") = FPGACOMM_VERSION;
  m.attr("git_revision") = FPGACOMM_GIT_REVISION;
  fpgacomm::bindings::bind_errors(m);
  fpgacomm::bindings::bind_core(m);
  fpgacomm::bindings::bind_options(m);
  fpgacomm::bindings::bind_cl(m);
  fpgacomm::bindings::bind_comm(m);
  fpgacomm::bindings::bind_bench(m);
  fpgacomm::bindings::bind_collectives(m);
  fpgacomm::bindings::bind_onesided(m);
  fpgacomm::bindings::bind_fabric(m);
  fpgacomm::bindings::bind_beff(m);
  fpgacomm::bindings::bind_gather(m);
  fpgacomm::bindings::bind_overhead(m);
  fpgacomm::bindings::bind_host_copy(m);
  fpgacomm::bindings::bind_testing(m);
}
