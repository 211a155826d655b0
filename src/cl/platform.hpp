// Discovery and selection of OpenCL platforms and devices. Nothing here
// prompts: a selection that matches nothing is an error naming the choices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cl/check.hpp"

namespace fpgacomm {

struct DeviceInfo {
  int platform_index = 0;  // position among all platforms
  int device_index = 0;    // position among the platform's devices
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, type, version, driver_version, extensions;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t max_alloc_bytes = 0;
  bool host_unified_memory = false;
  // A software emulation of the device (Intel's FPGA emulation platform):
  // its kernels run on the host's cores and its timings are not the device's.
  bool emulated = false;
  // The API that drives it: "opencl", or "sycl" (fpgacomm._sycl), whose
  // devices also name their SYCL backend ("opencl", "level_zero", ...) and
  // say whether they give USM device allocations (malloc_device).
  std::string api = "opencl";
  std::string backend;
  bool usm_device_allocations = false;

  bool has_extension(const std::string& extension) const;
  // "platform 0 device 1 'name'" (OpenCL), "SYCL device 1 'name'", for messages.
  std::string label() const;
};

// Intel's FPGA emulator, by the name of its platform or device.
bool names_an_emulator(const DeviceInfo& device);

// Every device of every platform, in platform then device order.
std::vector<DeviceInfo> all_devices();

// Which devices a run may use: platform and device by index or by a
// case-insensitive name substring (empty = any), type fpga|gpu|cpu|all, or
// auto (the default): the real accelerators (fpga, gpu) when any match, else
// every device that is not an emulator, else all. A type takes its real
// devices when there are any, else its emulated ones (--device-type fpga on
// a machine with only Intel's FPGA emulator takes the emulator).
struct DeviceSelection {
  std::string platform;
  std::string device;
  std::string type = "auto";
};

// The devices that match, in discovery order; throws UsageError when none do.
std::vector<DeviceInfo> select_devices(const DeviceSelection& selection);

}  // namespace fpgacomm
