// fpgacomm._sycl: the SYCL devices, in a module of its own so that only a
// run that asks for SYCL loads libsycl. Its Device is a subclass of
// fpgacomm._core.DeviceOps, so the core's benchmark loops and transfer
// engine take it as they take an OpenCL device.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sycl_api/device.hpp"

namespace py = pybind11;
using namespace fpgacomm;

PYBIND11_MODULE(_sycl, m) {
  m.doc() = "fpgacomm's SYCL devices (USM memory and copies, no kernels)";
  // DeviceInfo, DeviceOps and the error classes are _core's.
  py::module_::import("fpgacomm._core");
  m.attr("runtime_version") = sycl_api::runtime_version();
  m.def("all_devices", &sycl_api::all_devices, "Every SYCL device, in the runtime's order.");
  m.def("select_devices", &sycl_api::select_devices, py::arg("platform") = "", py::arg("device") = "",
        py::arg("type") = "auto", "The SYCL devices a run may use (sycl_api/device.hpp).");
  py::class_<sycl_api::Device, DeviceOps>(m, "Device")
      .def(py::init<const DeviceInfo&>(), py::arg("info"))
      .def("finish", &sycl_api::Device::finish);
}
