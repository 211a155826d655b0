// Device's DeviceOps: OpenCL buffers and the copies between them and host
// memory, as Buffer and the transfer engine use them.
#include <algorithm>
#include <iostream>
#include <string>

#include "cl/buffer.hpp"
#include "cl/device.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

// Xilinx XRT (cl_ext_xilinx.h): a buffer placed in a memory bank by index.
constexpr cl_mem_flags kXilinxExtPtr = cl_mem_flags(1) << 31;
constexpr unsigned kXilinxMemTopology = 1u << 31;
struct XilinxExtPtr {
  unsigned flags;
  void* obj;
  void* param;
};
// Intel FPGA (cl_intel_mem_alloc_buffer_location): a buffer location index.
constexpr cl_ulong kIntelBufferLocation = 0x419E;
using CreateBufferWithPropertiesIntel = cl_mem(CL_API_CALL*)(cl_context, const cl_ulong*, cl_mem_flags, std::size_t,
                                                             void*, cl_int*);

cl_mem create_banked(Device& device, std::uint64_t bytes, int bank, cl_int* status) {
  const DeviceInfo& info = device.info();
  if (info.platform_name.find("Xilinx") != std::string::npos) {
    XilinxExtPtr placement{static_cast<unsigned>(bank) | kXilinxMemTopology, nullptr, nullptr};
    return clCreateBuffer(device.context(), CL_MEM_READ_WRITE | kXilinxExtPtr, bytes, &placement, status);
  }
  auto create = reinterpret_cast<CreateBufferWithPropertiesIntel>(
      clGetExtensionFunctionAddressForPlatform(info.platform, "clCreateBufferWithPropertiesINTEL"));
  if (!create) {
    *status = CL_INVALID_OPERATION;
    return nullptr;
  }
  const cl_ulong properties[] = {kIntelBufferLocation, static_cast<cl_ulong>(bank), 0};
  return create(device.context(), properties, CL_MEM_READ_WRITE, bytes, nullptr, status);
}

cl_mem mem_of(const DeviceMemory& memory) { return static_cast<cl_mem>(memory.handle); }
cl_event event_of(CopyEvent event) { return static_cast<cl_event>(event); }

}  // namespace

DeviceMemory Device::allocate(MemKind kind, std::uint64_t bytes, int bank) {
  const std::string what = std::to_string(bytes) + " bytes of " + mem_kind_name(kind);
  if (kind == MemKind::Hbm || kind == MemKind::Plram) {
    const std::string obstacle = banked_kind_obstacle(info_, kind, info_.label() + " on '" + info_.platform_name + "'");
    if (!obstacle.empty()) throw UsageError(obstacle);
  }
  const std::size_t size = bytes ? bytes : 1;  // OpenCL has no empty buffers
  cl_int status = CL_SUCCESS;
  DeviceMemory memory;
  cl_mem mem = nullptr;
  if (kind == MemKind::PinnedHost)
    mem = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &status);
  else if (kind == MemKind::Device)
    mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, size, nullptr, &status);
  else
    mem = create_banked(*this, size, bank, &status);
  if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES || status == CL_INVALID_BUFFER_SIZE)
    throw UsageError("cannot allocate " + what + " on " + info_.label() + ": " + cl_error_name(status) +
                     " (too little device memory); use smaller messages (-m) or fewer buffers (-b single)");
  cl_check(status, "clCreateBuffer", "allocating " + what + " on " + info_.label());
  memory.handle = mem;
  try {
    if (kind == MemKind::PinnedHost) {
      // Mapped once for the buffer's life: the mapping is the pinned host memory.
      memory.host = static_cast<std::uint8_t*>(clEnqueueMapBuffer(to_device_, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                                                  0, size, 0, nullptr, nullptr, &status));
      cl_check(status, "clEnqueueMapBuffer", "mapping " + what);
    }
    fill_zero(memory, bytes);  // also makes lazy runtimes (PoCL) allocate now, not inside a timed region
  } catch (...) {
    release_memory(kind, memory);
    throw;
  }
  return memory;
}

void Device::release_memory(MemKind, DeviceMemory memory) noexcept {
  if (memory.host) {
    cl_int status = clEnqueueUnmapMemObject(to_device_, mem_of(memory), memory.host, 0, nullptr, nullptr);
    if (status == CL_SUCCESS) status = clFinish(to_device_);
    if (status != CL_SUCCESS)
      std::cerr << "fpgacomm: warning: unmapping a pinned buffer failed: " << cl_error_name(status) << "\n";
  }
  if (memory.handle && clReleaseMemObject(mem_of(memory)) != CL_SUCCESS)
    std::cerr << "fpgacomm: warning: clReleaseMemObject failed\n";
}

void Device::fill_zero(const DeviceMemory& memory, std::uint64_t bytes) {
  if (memory.host) {
    std::fill(memory.host, memory.host + bytes, std::uint8_t(0));
    return;
  }
  const cl_uchar zero = 0;
  cl_check(clEnqueueFillBuffer(to_device_, mem_of(memory), &zero, 1, 0, bytes ? bytes : 1, 0, nullptr, nullptr),
           "clEnqueueFillBuffer", "clearing device memory");
  cl_check(clFinish(to_device_), "clFinish", "clearing device memory");
}

void Device::write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes) {
  // A blocking write only promises that `source` may be reused, not that the
  // buffer holds the data (OpenCL 1.2, 5.2.2): Intel's FPGA emulator returns
  // before the copy is done, and a read on the other queue then sees the old
  // bytes. Waiting for the command's event makes the write complete here.
  const std::string what = "writing " + std::to_string(bytes) + " bytes to device memory";
  cl_event done = nullptr;
  cl_check(clEnqueueWriteBuffer(to_device_, mem_of(memory), CL_TRUE, offset, bytes, source, 0, nullptr, &done),
           "clEnqueueWriteBuffer", what);
  const cl_int waited = clWaitForEvents(1, &done);
  clReleaseEvent(done);
  cl_check(waited, "clWaitForEvents", what);
}

void Device::read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes) {
  cl_check(clEnqueueReadBuffer(to_host_, mem_of(memory), CL_TRUE, offset, bytes, destination, 0, nullptr, nullptr),
           "clEnqueueReadBuffer", [&] { return "reading " + std::to_string(bytes) + " bytes from device memory"; });
}

CopyEvent Device::start_read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes,
                             const char* what) {
  cl_event event = nullptr;
  cl_check(clEnqueueReadBuffer(to_host_, mem_of(memory), CL_FALSE, offset, bytes, destination, 0, nullptr, &event),
           "clEnqueueReadBuffer", what);
  cl_check(clFlush(to_host_), "clFlush", what);
  return event;
}

CopyEvent Device::start_write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes,
                              const char* what) {
  cl_event event = nullptr;
  cl_check(clEnqueueWriteBuffer(to_device_, mem_of(memory), CL_FALSE, offset, bytes, source, 0, nullptr, &event),
           "clEnqueueWriteBuffer", what);
  cl_check(clFlush(to_device_), "clFlush", what);
  return event;
}

bool Device::copy_done(CopyEvent event, const char* what) {
  cl_int status = CL_QUEUED;
  cl_check(clGetEventInfo(event_of(event), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
           "clGetEventInfo", what);
  if (status < 0) throw ClError("clGetEventInfo", status, std::string(what) + " (the command failed)");
  return status == CL_COMPLETE;
}

void Device::wait_copy(CopyEvent event, const char* what) {
  cl_event waited = event_of(event);
  cl_check(clWaitForEvents(1, &waited), "clWaitForEvents", what);
}

CopyProfile Device::copy_profile(CopyEvent event, const char* what) {
  const cl_event copy = event_of(event);
  return {profiling_ns(copy, CL_PROFILING_COMMAND_QUEUED, what), profiling_ns(copy, CL_PROFILING_COMMAND_SUBMIT, what),
          profiling_ns(copy, CL_PROFILING_COMMAND_START, what), profiling_ns(copy, CL_PROFILING_COMMAND_END, what)};
}

void Device::release_copy(CopyEvent event) noexcept {
  if (event) clReleaseEvent(event_of(event));
}

std::uint8_t* Device::map(const DeviceMemory& memory, std::uint64_t offset, std::uint64_t bytes, bool for_send) {
  cl_int status = CL_SUCCESS;
  // A receive overwrites the region, so the runtime need not copy it in first.
  const cl_map_flags flags = for_send ? CL_MAP_READ : CL_MAP_WRITE_INVALIDATE_REGION;
  auto* host =
      static_cast<std::uint8_t*>(clEnqueueMapBuffer(for_send ? to_host_ : to_device_, mem_of(memory), CL_TRUE, flags,
                                                    offset, bytes ? bytes : 1, 0, nullptr, nullptr, &status));
  cl_check(status, "clEnqueueMapBuffer", [&] { return "mapping " + std::to_string(bytes) + " bytes for MPI"; });
  return host;
}

void Device::unmap(const DeviceMemory& memory, std::uint8_t* host, bool for_send) {
  cl_check(clEnqueueUnmapMemObject(for_send ? to_host_ : to_device_, mem_of(memory), host, 0, nullptr, nullptr),
           "clEnqueueUnmapMemObject");
}

}  // namespace fpgacomm
