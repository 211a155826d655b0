#include <pybind11/pybind11.h>

#include "bindings/bindings.hpp"

namespace fpgacomm::bindings {
void bind_errors(pybind11::module_& m) { (void)m; }
}
