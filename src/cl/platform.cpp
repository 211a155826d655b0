#include "cl/platform.hpp"

#include <algorithm>
#include <cctype>

#include "core/c_text.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

// A string property of a platform or device: ask for the size, then the text.
template <class Object, class Query>
std::string info_string(cl_int (*get_info)(Object, Query, std::size_t, void*, std::size_t*), Object object, Query what,
                        const char* routine) {
  std::size_t size = 0;
  cl_check(get_info(object, what, 0, nullptr, &size), routine);
  std::string value(size, '\0');
  cl_check(get_info(object, what, size, value.data(), nullptr), routine);
  return c_text(value.data(), value.size());
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  return info_string(clGetPlatformInfo, platform, what, "clGetPlatformInfo");
}

std::string device_string(cl_device_id device, cl_device_info what) {
  return info_string(clGetDeviceInfo, device, what, "clGetDeviceInfo");
}

template <class T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  cl_check(clGetDeviceInfo(device, what, sizeof(value), &value, nullptr), "clGetDeviceInfo");
  return value;
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "fpga";  // FPGAs report themselves as accelerators
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  return "other";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Keeps the devices that `wanted` accepts, if any does; else leaves all.
template <class Predicate>
void prefer(std::vector<DeviceInfo>& devices, Predicate wanted) {
  if (std::any_of(devices.begin(), devices.end(), wanted))
    devices.erase(std::remove_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return !wanted(d); }),
                  devices.end());
}

bool is_index(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string choices(const std::vector<DeviceInfo>& devices) {
  std::string text;
  for (const auto& d : devices)
    text += "\n  " + d.label() + " on '" + d.platform_name + "' (" + d.type + (d.emulated ? ", emulated" : "") + ")";
  return text.empty() ? " none (is an OpenCL ICD installed? see README.md)" : text;
}

}  // namespace

bool DeviceInfo::has_extension(const std::string& extension) const {
  const std::string padded = " " + extensions + " ";
  return padded.find(" " + extension + " ") != std::string::npos;
}

// Intel's emulator names itself in its platform ("Intel(R) FPGA Emulation
// Platform for OpenCL(TM)") and older SDKs in the device ("Emulated Device").
bool names_an_emulator(const DeviceInfo& d) {
  return (lower(d.platform_name) + " " + lower(d.name)).find("emulat") != std::string::npos;
}

std::string DeviceInfo::label() const {
  if (api == "sycl") return "SYCL device " + std::to_string(device_index) + " '" + name + "'";
  return "platform " + std::to_string(platform_index) + " device " + std::to_string(device_index) + " '" + name + "'";
}

std::vector<DeviceInfo> all_devices() {
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no driver */) return {};
  cl_check(status, "clGetPlatformIDs", "listing OpenCL platforms");
  std::vector<cl_platform_id> platforms(platform_count);
  cl_check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<DeviceInfo> devices;
  for (cl_uint p = 0; p < platform_count; ++p) {
    cl_uint device_count = 0;
    const cl_int found = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (found == CL_DEVICE_NOT_FOUND) continue;
    cl_check(found, "clGetDeviceIDs", "listing the devices of platform " + std::to_string(p));
    std::vector<cl_device_id> ids(device_count);
    cl_check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr), "clGetDeviceIDs");
    for (cl_uint d = 0; d < device_count; ++d) {
      DeviceInfo info;
      info.platform_index = static_cast<int>(p);
      info.device_index = static_cast<int>(d);
      info.platform = platforms[p];
      info.id = ids[d];
      info.platform_name = platform_string(platforms[p], CL_PLATFORM_NAME);
      info.platform_vendor = platform_string(platforms[p], CL_PLATFORM_VENDOR);
      info.platform_version = platform_string(platforms[p], CL_PLATFORM_VERSION);
      info.name = device_string(ids[d], CL_DEVICE_NAME);
      info.vendor = device_string(ids[d], CL_DEVICE_VENDOR);
      info.version = device_string(ids[d], CL_DEVICE_VERSION);
      info.driver_version = device_string(ids[d], CL_DRIVER_VERSION);
      info.extensions = device_string(ids[d], CL_DEVICE_EXTENSIONS);
      info.type = type_name(device_value<cl_device_type>(ids[d], CL_DEVICE_TYPE));
      info.global_mem_bytes = device_value<cl_ulong>(ids[d], CL_DEVICE_GLOBAL_MEM_SIZE);
      info.max_alloc_bytes = device_value<cl_ulong>(ids[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE);
      info.host_unified_memory = device_value<cl_bool>(ids[d], CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
      info.emulated = names_an_emulator(info);
      devices.push_back(std::move(info));
    }
  }
  return devices;
}

std::vector<DeviceInfo> select_devices(const DeviceSelection& selection) {
  const std::string type = lower(selection.type.empty() ? "auto" : selection.type);
  if (type != "auto" && type != "all" && type != "fpga" && type != "gpu" && type != "cpu")
    throw UsageError("unknown device type '" + selection.type + "'; choose auto, fpga, gpu, cpu or all");
  const auto everything = all_devices();

  std::vector<DeviceInfo> by_platform;
  for (const auto& d : everything) {
    const bool match =
        selection.platform.empty() ||
        (is_index(selection.platform)
             ? d.platform_index == std::stoi(selection.platform)
             : lower(d.platform_name + " " + d.platform_vendor).find(lower(selection.platform)) != std::string::npos);
    if (match && (type == "all" || type == "auto" || d.type == type)) by_platform.push_back(d);
  }
  // auto: a machine with an accelerator and a CPU platform (PoCL beside a
  // GPU driver) would otherwise pair rank 0's GPU with rank 1's CPU device;
  // and an emulator, which runs kernels on the host's cores at a fraction of
  // PoCL's speed, is never the default while anything else is there.
  const auto real = [](const DeviceInfo& d) { return !d.emulated; };
  if (type == "auto")
    prefer(by_platform, [&](const DeviceInfo& d) { return real(d) && (d.type == "fpga" || d.type == "gpu"); });
  prefer(by_platform, real);
  std::vector<DeviceInfo> chosen;
  if (is_index(selection.device)) {
    const auto index = static_cast<std::size_t>(std::stoul(selection.device));
    if (index < by_platform.size()) chosen.push_back(by_platform[index]);
  } else {
    for (const auto& d : by_platform)
      if (selection.device.empty() || lower(d.name).find(lower(selection.device)) != std::string::npos)
        chosen.push_back(d);
  }
  if (chosen.empty())
    throw UsageError("no OpenCL device matches platform='" + selection.platform + "' device='" + selection.device +
                     "' type=" + type + "; the devices are:" + choices(everything));
  return chosen;
}

}  // namespace fpgacomm
