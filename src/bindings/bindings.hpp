// One function per part of the core; module.cpp calls them in order.
#pragma once
#include <pybind11/pybind11.h>

namespace fpgacomm::bindings {
void bind_errors(pybind11::module_& m);
void bind_fabric(pybind11::module_& m);
}
