#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "cl/buffer.hpp"
#include "core/error.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

py::array_t<std::uint8_t> as_bytes(const py::array& array) {
  if (!(array.flags() & py::array::c_style))
    throw UsageError("the array must be C-contiguous; pass numpy.ascontiguousarray(a)");
  return py::array_t<std::uint8_t>({array.nbytes()}, {1}, static_cast<const std::uint8_t*>(array.data()), array);
}

}  // namespace

void bind_cl(py::module_& m) {
  py::class_<DeviceInfo>(m, "DeviceInfo")
      .def_readonly("platform_index", &DeviceInfo::platform_index)
      .def_readonly("device_index", &DeviceInfo::device_index)
      .def_readonly("platform_name", &DeviceInfo::platform_name)
      .def_readonly("platform_vendor", &DeviceInfo::platform_vendor)
      .def_readonly("platform_version", &DeviceInfo::platform_version)
      .def_readonly("name", &DeviceInfo::name)
      .def_readonly("vendor", &DeviceInfo::vendor)
      .def_readonly("type", &DeviceInfo::type)
      .def_readonly("version", &DeviceInfo::version)
      .def_readonly("driver_version", &DeviceInfo::driver_version)
      .def_readonly("extensions", &DeviceInfo::extensions)
      .def_readonly("global_mem_bytes", &DeviceInfo::global_mem_bytes)
      .def_readonly("max_alloc_bytes", &DeviceInfo::max_alloc_bytes)
      .def_readonly("host_unified_memory", &DeviceInfo::host_unified_memory)
      .def_readonly("emulated", &DeviceInfo::emulated)
      .def_readonly("api", &DeviceInfo::api)
      .def_readonly("backend", &DeviceInfo::backend)
      .def_readonly("usm_device_allocations", &DeviceInfo::usm_device_allocations)
      .def("label", &DeviceInfo::label)
      .def("__repr__", [](const DeviceInfo& d) { return "<DeviceInfo " + d.label() + ">"; });

  m.def(
      "mem_kind_name", [](const std::string& code) { return mem_kind_name(parse_mem_kind(code)); }, py::arg("code"),
      "The kind's name; raises UsageError for an unknown code.");
  m.def(
      "mem_kind_codes",
      [](bool host_only) {
        std::vector<std::string> codes;
        for (MemKind kind : mem_kinds())
          if (!host_only || !is_device_kind(kind)) codes.push_back(mem_kind_code(kind));
        return codes;
      },
      py::arg("host_only") = false, "H, H!, D, B, P: the codes of every memory kind, or of the host kinds.");
  m.def("all_devices", &all_devices, "Every device of every OpenCL platform.");
  m.def(
      "select_devices",
      [](const std::string& platform, const std::string& device, const std::string& type) {
        return select_devices({platform, device, type});
      },
      py::arg("platform") = "", py::arg("device") = "", py::arg("type") = "auto");

  // The device interface both APIs implement: fpgacomm._sycl registers its
  // Device as another subclass, so the benchmark loops take either.
  py::class_<DeviceOps>(m, "DeviceOps")
      .def_property_readonly("info", &DeviceOps::info)
      .def(
          "probe_kind",
          [](DeviceOps& device, const std::string& kind, int bank) {
            const KindSupport support = probe_kind(device, parse_mem_kind(kind), bank);
            return py::make_tuple(support.supported, support.reason);
          },
          py::arg("kind"), py::arg("bank") = 0);
  py::class_<Device, DeviceOps>(m, "Device")
      .def(py::init<DeviceInfo, std::string, std::string>(), py::arg("info"), py::arg("kernel_dir"),
           py::arg("binary") = "")
      .def(
          "touch", [](Device& device, Buffer& buffer) { device.touch(buffer.mem()); }, py::arg("buffer"))
      .def("finish", &Device::finish);

  py::class_<Buffer>(m, "Buffer")
      .def(py::init([](DeviceOps* device, const std::string& kind, std::uint64_t nbytes, int bank) {
             return std::make_unique<Buffer>(device, parse_mem_kind(kind), nbytes, bank);
           }),
           py::arg("device"), py::arg("kind"), py::arg("nbytes"), py::arg("bank") = 0,
           py::keep_alive<1, 2>())  // the buffer keeps its device open
      .def_property_readonly("kind", [](const Buffer& b) { return mem_kind_code(b.kind()); })
      .def_property_readonly("nbytes", &Buffer::bytes)
      .def_property_readonly("is_host", [](const Buffer& b) { return b.host_data() != nullptr; })
      .def(
          "array",
          [](py::object self) {
            Buffer& buffer = self.cast<Buffer&>();
            if (!buffer.host_data())
              throw UsageError(mem_kind_name(buffer.kind()) +
                               " is not host memory and has no array view; use read() and write()");
            return py::array_t<std::uint8_t>({buffer.bytes()}, {1}, buffer.host_data(), self);
          },
          "A NumPy view of host memory (H, H!), without a copy; it keeps the buffer alive.")
      .def(
          "write",
          [](Buffer& buffer, const py::array& data, std::uint64_t offset) {
            auto bytes = as_bytes(data);
            buffer.write(bytes.data(), static_cast<std::uint64_t>(bytes.size()), offset);
          },
          py::arg("data"), py::arg("offset") = 0, "Copy a NumPy array's bytes into the buffer.")
      .def(
          "read",
          [](const Buffer& buffer, std::uint64_t nbytes, std::uint64_t offset) {
            py::array_t<std::uint8_t> out(static_cast<py::ssize_t>(nbytes));
            buffer.read(out.mutable_data(), nbytes, offset);
            return out;
          },
          py::arg("nbytes"), py::arg("offset") = 0, "Copy bytes out of the buffer into a new uint8 array.")
      .def("fill_zero", &Buffer::fill_zero);
}

}  // namespace fpgacomm::bindings
