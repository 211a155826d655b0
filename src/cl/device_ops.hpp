// What buffers and the transfer engine ask of a device, whichever API drives
// it: OpenCL (cl/device.*) or SYCL (sycl_api/device.*, built into the separate
// module fpgacomm._sycl and loaded only when a run asks for SYCL). Memory and
// copies are named by opaque handles, so the engine is one engine for both.
#pragma once
#include <cstdint>

#include "cl/platform.hpp"

namespace fpgacomm {

enum class MemKind { Host, PinnedHost, Device, Hbm, Plram };

// One allocation of a pinned host (H!) or device (D, B, P) buffer: the API's
// object (an OpenCL cl_mem, a SYCL USM pointer) and, for H!, its host address.
struct DeviceMemory {
  void* handle = nullptr;
  std::uint8_t* host = nullptr;
};

// A copy in flight, until release_copy() (an OpenCL cl_event, a SYCL event).
using CopyEvent = void*;

// A finished copy's device-clock times in nanoseconds (the OpenCL profiling
// points QUEUED, SUBMIT, START, END; SYCL has no QUEUED and gives SUBMIT twice).
struct CopyProfile {
  std::uint64_t queued = 0, submit = 0, start = 0, end = 0;
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual const DeviceInfo& info() const = 0;

  // Memory of kind H!, D, B or P holding zeros; throws UsageError when the
  // device cannot give it. release_memory never throws.
  virtual DeviceMemory allocate(MemKind kind, std::uint64_t bytes, int bank) = 0;
  virtual void release_memory(MemKind kind, DeviceMemory memory) noexcept = 0;
  virtual void fill_zero(const DeviceMemory& memory, std::uint64_t bytes) = 0;

  // Blocking copies: done when they return.
  virtual void write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes) = 0;
  virtual void read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes) = 0;

  // Copies started on the device's queues (device to host on one, host to
  // device on the other, so both directions may run at once) and tracked
  // by their event; `what` names the work in errors.
  virtual CopyEvent start_read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes,
                               const char* what) = 0;
  virtual CopyEvent start_write(const DeviceMemory& memory, std::uint64_t offset, const void* source,
                                std::uint64_t bytes, const char* what) = 0;
  virtual bool copy_done(CopyEvent event, const char* what) = 0;
  virtual void wait_copy(CopyEvent event, const char* what) = 0;
  virtual CopyProfile copy_profile(CopyEvent event, const char* what) = 0;
  virtual void release_copy(CopyEvent event) noexcept = 0;

  // Device memory mapped into host memory (where the device shares it), for
  // MPI to read (for_send) or write in place; unmap() gives it back.
  virtual std::uint8_t* map(const DeviceMemory& memory, std::uint64_t offset, std::uint64_t bytes, bool for_send) = 0;
  virtual void unmap(const DeviceMemory& memory, std::uint8_t* host, bool for_send) = 0;

  // OMB-FPGA's placeholder kernel on a buffer, so the runtime must assume
  // the device changed it (section 3.1.2).
  virtual void touch(const DeviceMemory& memory) = 0;

  // Waits for everything queued on the device.
  virtual void finish() = 0;
};

}  // namespace fpgacomm
