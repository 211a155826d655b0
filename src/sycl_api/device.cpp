#include "sycl_api/device.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <iostream>
#include <sycl/sycl.hpp>
#include <thread>

#include "cl/buffer.hpp"
#include "core/error.hpp"

namespace fpgacomm::sycl_api {
namespace {

std::string backend_name(::sycl::backend backend) {
  switch (backend) {
    case ::sycl::backend::opencl:
      return "opencl";
    case ::sycl::backend::ext_oneapi_level_zero:
      return "level_zero";
    case ::sycl::backend::ext_oneapi_cuda:
      return "cuda";
    case ::sycl::backend::ext_oneapi_hip:
      return "hip";
    default:
      return "other";
  }
}

// FPGAs report themselves as accelerators, as in OpenCL (cl/platform.cpp).
std::string type_name(const ::sycl::device& device) {
  if (device.is_accelerator()) return "fpga";
  if (device.is_gpu()) return "gpu";
  if (device.is_cpu()) return "cpu";
  return "other";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A SYCL failure as the core's error, naming what we were doing.
[[noreturn]] void fail(const ::sycl::exception& e, const std::string& what) {
  throw Error("SYCL failed " + what + ": " + e.what());
}

template <class Work>
auto guarded(const std::string& what, Work work) {
  try {
    return work();
  } catch (const ::sycl::exception& e) {
    fail(e, what);
  }
}

std::vector<::sycl::device> runtime_devices() {
  return guarded("listing devices", [] { return ::sycl::device::get_devices(); });
}

DeviceInfo describe(const ::sycl::device& device, int index) {
  DeviceInfo info;
  info.api = "sycl";
  info.device_index = index;
  const ::sycl::platform platform = device.get_platform();
  info.platform_name = platform.get_info<::sycl::info::platform::name>();
  info.platform_vendor = platform.get_info<::sycl::info::platform::vendor>();
  info.platform_version = platform.get_info<::sycl::info::platform::version>();
  info.name = device.get_info<::sycl::info::device::name>();
  info.vendor = device.get_info<::sycl::info::device::vendor>();
  info.type = type_name(device);
  info.version = device.get_info<::sycl::info::device::version>();
  info.driver_version = device.get_info<::sycl::info::device::driver_version>();
  info.global_mem_bytes = device.get_info<::sycl::info::device::global_mem_size>();
  info.max_alloc_bytes = device.get_info<::sycl::info::device::max_mem_alloc_size>();
  info.backend = backend_name(device.get_backend());
  info.usm_device_allocations = device.has(::sycl::aspect::usm_device_allocations);
  info.emulated = names_an_emulator(info);
  return info;
}

std::string found(const std::vector<DeviceInfo>& devices) {
  std::string text;
  for (const auto& d : devices)
    text += "\n  " + d.label() + " on '" + d.platform_name + "' (" + d.type + (d.emulated ? ", emulated" : "") +
            (d.usm_device_allocations ? "" : ", no USM device allocations") + ")";
  return text.empty() ? " none" : text;
}

}  // namespace

std::vector<DeviceInfo> all_devices() {
  std::vector<DeviceInfo> infos;
  const auto devices = runtime_devices();
  for (std::size_t i = 0; i < devices.size(); ++i)
    infos.push_back(guarded("describing a device", [&] { return describe(devices[i], static_cast<int>(i)); }));
  return infos;
}

std::vector<DeviceInfo> select_devices(const std::string& platform, const std::string& device,
                                       const std::string& type_option) {
  const std::string type = lower(type_option.empty() || type_option == "auto" ? "fpga" : type_option);
  if (type != "fpga" && type != "gpu" && type != "cpu" && type != "all")
    throw UsageError("unknown device type '" + type_option + "'; choose auto, fpga, gpu, cpu or all");
  const std::vector<DeviceInfo> every = all_devices();
  const bool by_index = !device.empty() && std::all_of(device.begin(), device.end(), ::isdigit);
  std::vector<DeviceInfo> matches;
  for (const auto& d : every)
    if (d.usm_device_allocations && (type == "all" || d.type == type) &&
        lower(d.platform_name).find(lower(platform)) != std::string::npos &&
        (by_index || lower(d.name).find(lower(device)) != std::string::npos))
      matches.push_back(d);
  if (by_index && !matches.empty()) {
    const std::size_t index = std::stoul(device);
    if (index >= matches.size())
      throw UsageError("--device " + device + " is past the " + std::to_string(matches.size()) +
                       " matching SYCL devices; give 0 to " + std::to_string(matches.size() - 1));
    matches = {matches[index]};
  }
  if (matches.empty())
    throw UsageError("-d sycl found no SYCL device of type " + type +
                     (platform.empty() ? "" : " on '" + platform + "'") +
                     (device.empty() || by_index ? "" : " named '" + device + "'") +
                     " with USM device allocations (malloc_device); the SYCL devices found:" + found(every) +
                     "\nchoose another --device-type (all takes any device with USM device allocations), or use "
                     "-d opencl");
  return matches;
}

std::string runtime_version() {
  return std::string(FPGACOMM_SYCL_RELEASE) + " (libsycl " + std::to_string(__LIBSYCL_MAJOR_VERSION) + "." +
         std::to_string(__LIBSYCL_MINOR_VERSION) + "." + std::to_string(__LIBSYCL_PATCH_VERSION) + ")";
}

struct Device::Queues {
  ::sycl::context context;
  ::sycl::queue to_host, to_device;
  bool profiling;
};

Device::Device(const DeviceInfo& info) : info_(info) {
  const auto devices = runtime_devices();
  if (info_.device_index < 0 || static_cast<std::size_t>(info_.device_index) >= devices.size())
    throw UsageError("SYCL device " + std::to_string(info_.device_index) + " does not exist");
  // OMB-FPGA's selector of the nth device: it scores the rank's device
  // above all others, where SYCL's own selectors take the first FPGA.
  const ::sycl::device nth = devices[info_.device_index];
  auto nth_device = [&nth](const ::sycl::device& candidate) { return candidate == nth ? 1 : -1; };
  queues_ = guarded("opening " + info_.label(), [&] {
    const ::sycl::device chosen{nth_device};
    const bool profiling = chosen.has(::sycl::aspect::queue_profiling);
    ::sycl::property_list properties = profiling ? ::sycl::property_list{::sycl::property::queue::in_order(),
                                                                         ::sycl::property::queue::enable_profiling()}
                                                 : ::sycl::property_list{::sycl::property::queue::in_order()};
    ::sycl::context context{chosen};
    return std::make_unique<Queues>(Queues{context, ::sycl::queue(context, chosen, properties),
                                           ::sycl::queue(context, chosen, properties), profiling});
  });
}

Device::~Device() {
  try {
    finish();
  } catch (const std::exception& e) {
    std::cerr << "fpgacomm: warning: closing " << info_.label() << ": " << e.what() << "\n";
  }
}

DeviceMemory Device::allocate(MemKind kind, std::uint64_t bytes, int) {
  if (kind != MemKind::Device && kind != MemKind::PinnedHost)
    throw UsageError(mem_kind_name(kind) +
                     " is not available through SYCL: the SYCL interface cannot choose a "
                     "memory bank from the host (OMB-FPGA, section 3.3); use D");
  const std::string what = std::to_string(bytes) + " bytes of " + mem_kind_name(kind) + " on " + info_.label();
  const std::size_t size = bytes ? bytes : 1;
  DeviceMemory memory;
  guarded("allocating " + what, [&] {
    if (kind == MemKind::Device) {
      memory.handle = ::sycl::malloc_device(size, queues_->to_device);
    } else {
      memory.host = static_cast<std::uint8_t*>(::sycl::malloc_host(size, queues_->context));
      memory.handle = memory.host;
    }
  });
  if (!memory.handle)
    throw UsageError("cannot allocate " + what +
                     " (too little device memory); use smaller messages (-m) or fewer "
                     "buffers (-b single)");
  try {
    fill_zero(memory, bytes);  // the buffer holds zeros, and exists before any timed region
  } catch (...) {
    release_memory(kind, memory);
    throw;
  }
  return memory;
}

void Device::release_memory(MemKind, DeviceMemory memory) noexcept {
  try {
    if (memory.handle) ::sycl::free(memory.handle, queues_->context);
  } catch (const ::sycl::exception& e) {
    std::cerr << "fpgacomm: warning: sycl::free failed: " << e.what() << "\n";
  }
}

void Device::fill_zero(const DeviceMemory& memory, std::uint64_t bytes) {
  if (memory.host) {
    std::memset(memory.host, 0, bytes);
    return;
  }
  guarded("clearing device memory",
          [&] { queues_->to_device.memset(memory.handle, 0, bytes ? bytes : 1).wait_and_throw(); });
}

void Device::write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes) {
  guarded("writing " + std::to_string(bytes) + " bytes to device memory", [&] {
    queues_->to_device.memcpy(static_cast<std::uint8_t*>(memory.handle) + offset, source, bytes).wait_and_throw();
  });
}

void Device::read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes) {
  guarded("reading " + std::to_string(bytes) + " bytes from device memory", [&] {
    queues_->to_host.memcpy(destination, static_cast<const std::uint8_t*>(memory.handle) + offset, bytes)
        .wait_and_throw();
  });
}

CopyEvent Device::start_read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes,
                             const char* what) {
  return guarded(what, [&] {
    return static_cast<CopyEvent>(new ::sycl::event(
        queues_->to_host.memcpy(destination, static_cast<const std::uint8_t*>(memory.handle) + offset, bytes)));
  });
}

CopyEvent Device::start_write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes,
                              const char* what) {
  return guarded(what, [&] {
    return static_cast<CopyEvent>(new ::sycl::event(
        queues_->to_device.memcpy(static_cast<std::uint8_t*>(memory.handle) + offset, source, bytes)));
  });
}

bool Device::copy_done(CopyEvent event, const char* what) {
  return guarded(what, [&] {
    return static_cast<::sycl::event*>(event)->get_info<::sycl::info::event::command_execution_status>() ==
           ::sycl::info::event_command_status::complete;
  });
}

void Device::wait_copy(CopyEvent event, const char* what) {
  // Polled with short sleeps rather than sycl::event::wait, which keeps the
  // core busy: where a rank has one core (mpirun binds ranks to cores), an
  // emulator's copy runs on that core too, and a busy wait starves it.
  while (!copy_done(event, what)) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

CopyProfile Device::copy_profile(CopyEvent event, const char* what) {
  if (!queues_->profiling)
    throw UsageError(info_.label() +
                     " has no SYCL queue profiling (aspect::queue_profiling), so staged copies "
                     "have no device times; leave --timeline out");
  return guarded(what, [&] {
    const auto& copy = *static_cast<::sycl::event*>(event);
    const std::uint64_t submit = copy.get_profiling_info<::sycl::info::event_profiling::command_submit>();
    return CopyProfile{submit, submit, copy.get_profiling_info<::sycl::info::event_profiling::command_start>(),
                       copy.get_profiling_info<::sycl::info::event_profiling::command_end>()};
  });
}

void Device::release_copy(CopyEvent event) noexcept { delete static_cast<::sycl::event*>(event); }

std::uint8_t* Device::map(const DeviceMemory&, std::uint64_t, std::uint64_t, bool) {
  throw UsageError(
      "SYCL device memory (malloc_device) cannot be mapped into host memory for MPI; use --path staged "
      "or auto with -d sycl");
}

void Device::unmap(const DeviceMemory&, std::uint8_t*, bool) {}

void Device::touch(const DeviceMemory&) {
  throw UsageError(
      "--touch launches OMB-FPGA's placeholder kernel, and fpgacomm's SYCL path has no kernels (they "
      "need Intel's SYCL device compiler; DPC++ stages every transfer without one, OMB-FPGA section "
      "3.2.3); drop --touch or use -d opencl");
}

void Device::finish() {
  guarded("waiting for " + info_.label(), [&] {
    queues_->to_host.wait_and_throw();
    queues_->to_device.wait_and_throw();
  });
}

}  // namespace fpgacomm::sycl_api
