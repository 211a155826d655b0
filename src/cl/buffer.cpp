#include "cl/buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

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

bool is_xilinx(const DeviceInfo& info) { return info.platform_name.find("Xilinx") != std::string::npos; }
bool is_intel_fpga(const DeviceInfo& info) { return info.has_extension("cl_intel_mem_alloc_buffer_location"); }

// Why `kind` cannot be placed on this device, or "" when a vendor extension
// can. device: how the text names the device (a device listing, which names
// each device itself, says "the device", so that devices alike read alike).
std::string banked_kind_obstacle(const DeviceInfo& info, MemKind kind, const std::string& device) {
  if (is_xilinx(info)) return "";
  if (kind == MemKind::Hbm && is_intel_fpga(info)) return "";
  return mem_kind_name(kind) + " needs the Xilinx XRT memory-bank extension" +
         std::string(kind == MemKind::Hbm ? " or Intel's cl_intel_mem_alloc_buffer_location" : "") + ", and " +
         device + " has neither; use D for device global memory";
}

cl_mem create_banked(Device& device, MemKind kind, std::uint64_t bytes, int bank, cl_int* status) {
  const DeviceInfo& info = device.info();
  if (is_xilinx(info)) {
    XilinxExtPtr placement{static_cast<unsigned>(bank) | kXilinxMemTopology, nullptr, nullptr};
    return clCreateBuffer(device.context(), CL_MEM_READ_WRITE | kXilinxExtPtr, bytes, &placement, status);
  }
  (void)kind;
  auto create = reinterpret_cast<CreateBufferWithPropertiesIntel>(
      clGetExtensionFunctionAddressForPlatform(info.platform, "clCreateBufferWithPropertiesINTEL"));
  if (!create) {
    *status = CL_INVALID_OPERATION;
    return nullptr;
  }
  const cl_ulong properties[] = {kIntelBufferLocation, static_cast<cl_ulong>(bank), 0};
  return create(device.context(), properties, CL_MEM_READ_WRITE, bytes, nullptr, status);
}

}  // namespace

const std::vector<MemKind>& mem_kinds() {
  static const std::vector<MemKind> kinds{MemKind::Host, MemKind::PinnedHost, MemKind::Device, MemKind::Hbm,
                                          MemKind::Plram};
  return kinds;
}

MemKind parse_mem_kind(const std::string& code) {
  for (MemKind kind : mem_kinds())
    if (code == mem_kind_code(kind)) return kind;
  throw UsageError("unknown memory kind '" + code +
                   "'; choose H (pageable host), H! (pinned host), D (device global memory), B (HBM) or P (PLRAM)");
}

std::string mem_kind_code(MemKind kind) {
  switch (kind) {
    case MemKind::Host: return "H";
    case MemKind::PinnedHost: return "H!";
    case MemKind::Device: return "D";
    case MemKind::Hbm: return "B";
    case MemKind::Plram: return "P";
  }
  return "?";
}

std::string mem_kind_name(MemKind kind) {
  switch (kind) {
    case MemKind::Host: return "pageable host memory (H)";
    case MemKind::PinnedHost: return "pinned host memory (H!)";
    case MemKind::Device: return "device global memory (D)";
    case MemKind::Hbm: return "HBM (B)";
    case MemKind::Plram: return "PLRAM (P)";
  }
  return "?";
}

bool is_device_kind(MemKind kind) {
  return kind == MemKind::Device || kind == MemKind::Hbm || kind == MemKind::Plram;
}

KindSupport probe_kind(Device& device, MemKind kind, int bank) {
  if (kind == MemKind::Hbm || kind == MemKind::Plram) {
    const std::string obstacle = banked_kind_obstacle(device.info(), kind, "the device");
    if (!obstacle.empty()) return {false, obstacle};
  }
  constexpr std::uint64_t kTrialBytes = 4096;
  try {
    Buffer trial(&device, kind, kTrialBytes, bank);
    std::vector<std::uint8_t> pattern(kTrialBytes), back(kTrialBytes);
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(i * 7 + 1);
    trial.write(pattern.data(), kTrialBytes);
    trial.read(back.data(), kTrialBytes);
    if (pattern != back) return {false, "a trial buffer of this kind did not return what was written"};
  } catch (const Error& e) {
    return {false, std::string("trial allocation failed: ") + e.what()};
  }
  return {true, ""};
}

Buffer::Buffer(Device* device, MemKind kind, std::uint64_t bytes, int bank)
    : device_(device), kind_(kind), bytes_(bytes) {
  const std::string what = std::to_string(bytes) + " bytes of " + mem_kind_name(kind);
  if (kind == MemKind::Host) {
    // Page-aligned like OMB's buffers, and touched so the pages exist before timing.
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t rounded = ((bytes ? bytes : 1) + page - 1) / page * page;
    host_ = static_cast<std::uint8_t*>(std::aligned_alloc(page, rounded));
    if (!host_) throw UsageError("cannot allocate " + what + ": out of host memory; use smaller messages (-m)");
    std::memset(host_, 0, rounded);
    return;
  }
  if (!device_) throw UsageError(mem_kind_name(kind) + " needs an OpenCL device, and none was opened");
  const DeviceInfo& info = device_->info();
  if (is_device_kind(kind) && bytes > info.max_alloc_bytes)
    throw UsageError("cannot allocate " + what + " on " + info.label() + ": its largest allocation is " +
                     std::to_string(info.max_alloc_bytes) +
                     " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE); use smaller messages (-m)");
  if (kind == MemKind::Hbm || kind == MemKind::Plram) {
    const std::string obstacle = banked_kind_obstacle(info, kind, info.label() + " on '" + info.platform_name + "'");
    if (!obstacle.empty()) throw UsageError(obstacle);
  }
  const std::size_t size = bytes ? bytes : 1;  // OpenCL has no empty buffers
  cl_int status = CL_SUCCESS;
  if (kind == MemKind::PinnedHost) {
    mem_ = clCreateBuffer(device_->context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &status);
  } else if (kind == MemKind::Device) {
    mem_ = clCreateBuffer(device_->context(), CL_MEM_READ_WRITE, size, nullptr, &status);
  } else {
    mem_ = create_banked(*device_, kind, size, bank, &status);
  }
  if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
      status == CL_INVALID_BUFFER_SIZE)
    throw UsageError("cannot allocate " + what + " on " + info.label() + ": " + cl_error_name(status) +
                     " (too little device memory); use smaller messages (-m) or fewer buffers (-b single)");
  cl_check(status, "clCreateBuffer", "allocating " + what + " on " + info.label());
  try {
    if (kind == MemKind::PinnedHost) {
      // Mapped once for the buffer's life: the mapping is the pinned host memory.
      host_ = static_cast<std::uint8_t*>(clEnqueueMapBuffer(device_->to_device_queue(), mem_, CL_TRUE,
                                                            CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, nullptr,
                                                            nullptr, &status));
      cl_check(status, "clEnqueueMapBuffer", "mapping " + what);
    }
    fill_zero();  // also makes lazy runtimes (PoCL) allocate now, not inside a timed region
  } catch (...) {
    if (host_) clEnqueueUnmapMemObject(device_->to_device_queue(), mem_, host_, 0, nullptr, nullptr);
    clReleaseMemObject(mem_);
    throw;
  }
}

Buffer::~Buffer() {
  if (kind_ == MemKind::Host) {
    std::free(host_);
    return;
  }
  if (host_) {
    cl_int status = clEnqueueUnmapMemObject(device_->to_device_queue(), mem_, host_, 0, nullptr, nullptr);
    if (status == CL_SUCCESS) status = clFinish(device_->to_device_queue());
    if (status != CL_SUCCESS)
      std::cerr << "fpgacomm: warning: unmapping a pinned buffer failed: " << cl_error_name(status) << "\n";
  }
  if (mem_ && clReleaseMemObject(mem_) != CL_SUCCESS)
    std::cerr << "fpgacomm: warning: clReleaseMemObject failed\n";
}

void Buffer::check_range(std::uint64_t bytes, std::uint64_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw UsageError("access of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                     " is outside a buffer of " + std::to_string(bytes_) + " bytes");
}

void Buffer::write(const void* source, std::uint64_t bytes, std::uint64_t offset) {
  check_range(bytes, offset);
  if (bytes == 0) return;
  if (host_) {
    std::memcpy(host_ + offset, source, bytes);
    return;
  }
  // A blocking write only promises that `source` may be reused, not that the
  // buffer holds the data (OpenCL 1.2, 5.2.2): Intel's FPGA emulator returns
  // before the copy is done, and a read on the other queue then sees the old
  // bytes. Waiting for the command's event makes the write complete here.
  const std::string what = "writing " + std::to_string(bytes) + " bytes to " + mem_kind_name(kind_);
  cl_event done = nullptr;
  cl_check(clEnqueueWriteBuffer(device_->to_device_queue(), mem_, CL_TRUE, offset, bytes, source, 0, nullptr, &done),
           "clEnqueueWriteBuffer", what);
  const cl_int waited = clWaitForEvents(1, &done);
  clReleaseEvent(done);
  cl_check(waited, "clWaitForEvents", what);
}

void Buffer::read(void* destination, std::uint64_t bytes, std::uint64_t offset) const {
  check_range(bytes, offset);
  if (bytes == 0) return;
  if (host_) {
    std::memcpy(destination, host_ + offset, bytes);
    return;
  }
  cl_check(clEnqueueReadBuffer(device_->to_host_queue(), mem_, CL_TRUE, offset, bytes, destination, 0, nullptr,
                               nullptr),
           "clEnqueueReadBuffer", "reading " + std::to_string(bytes) + " bytes from " + mem_kind_name(kind_));
}

void Buffer::fill_zero() {
  if (host_) {
    std::memset(host_, 0, bytes_);
    return;
  }
  const cl_uchar zero = 0;
  cl_check(clEnqueueFillBuffer(device_->to_device_queue(), mem_, &zero, 1, 0, bytes_ ? bytes_ : 1, 0, nullptr,
                               nullptr),
           "clEnqueueFillBuffer", "clearing " + mem_kind_name(kind_));
  cl_check(clFinish(device_->to_device_queue()), "clFinish", "clearing " + mem_kind_name(kind_));
}

}  // namespace fpgacomm
