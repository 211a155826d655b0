// One function per part of the core; module.cpp calls them in order.
#pragma once
#include <mpi.h>
#include <pybind11/pybind11.h>

namespace fpgacomm::bindings {

void bind_errors(pybind11::module_& m);
void bind_core(pybind11::module_& m);
void bind_options(pybind11::module_& m);
void bind_cl(pybind11::module_& m);
void bind_comm(pybind11::module_& m);
void bind_bench(pybind11::module_& m);
void bind_collectives(pybind11::module_& m);
void bind_onesided(pybind11::module_& m);
void bind_fabric(pybind11::module_& m);
void bind_beff(pybind11::module_& m);
void bind_gather(pybind11::module_& m);
void bind_overhead(pybind11::module_& m);
void bind_host_copy(pybind11::module_& m);
void bind_testing(pybind11::module_& m);

// The MPI_Comm inside an mpi4py communicator (mpi4py owns it).
MPI_Comm mpi_comm(pybind11::handle communicator);

}  // namespace fpgacomm::bindings
