// A SYCL device opened for use, as OMB-FPGA's SYCL interface drives it
// ("OMB-FPGA: A Microbenchmark Suite for FPGA-aware MPIs using OpenCL and
// SYCL", Contini et al., section 3.2): the nth matching device, chosen by a
// selector, with USM memory (malloc_device, malloc_host) and queue::memcpy.
// No kernels: they would need Intel's SYCL device compiler. This header
// does not include SYCL's, so only device.cpp compiles against it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cl/device_ops.hpp"

namespace fpgacomm::sycl_api {

// Every SYCL device of every platform, in the runtime's order (device_index
// is the position in it).
std::vector<DeviceInfo> all_devices();

// The devices a run may use: `type` fpga (also auto) takes accelerators,
// gpu and cpu their type, all any; each must give USM device allocations.
// `platform` and `device` narrow by name substring (a number for `device`:
// the index among the matches). Throws UsageError naming the devices found
// when none matches.
std::vector<DeviceInfo> select_devices(const std::string& platform, const std::string& device, const std::string& type);

// "2025.0.5 (libsycl 8.0.0)": the runtime's release and its library's version.
std::string runtime_version();

class Device : public DeviceOps {
 public:
  // Opens `info` (one of all_devices()) through an nth-device selector,
  // with two in-order queues on one context: device to host, host to device.
  explicit Device(const DeviceInfo& info);
  ~Device() override;

  const DeviceInfo& info() const override { return info_; }
  DeviceMemory allocate(MemKind kind, std::uint64_t bytes, int bank) override;
  void release_memory(MemKind kind, DeviceMemory memory) noexcept override;
  void fill_zero(const DeviceMemory& memory, std::uint64_t bytes) override;
  void write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes) override;
  void read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes) override;
  CopyEvent start_read(const DeviceMemory& memory, std::uint64_t offset, void* destination, std::uint64_t bytes,
                       const char* what) override;
  CopyEvent start_write(const DeviceMemory& memory, std::uint64_t offset, const void* source, std::uint64_t bytes,
                        const char* what) override;
  bool copy_done(CopyEvent event, const char* what) override;
  void wait_copy(CopyEvent event, const char* what) override;
  CopyProfile copy_profile(CopyEvent event, const char* what) override;
  void release_copy(CopyEvent event) noexcept override;
  std::uint8_t* map(const DeviceMemory& memory, std::uint64_t offset, std::uint64_t bytes, bool for_send) override;
  void unmap(const DeviceMemory& memory, std::uint8_t* host, bool for_send) override;
  void touch(const DeviceMemory& memory) override;
  void finish() override;

 private:
  struct Queues;  // the SYCL objects, in device.cpp
  DeviceInfo info_;
  std::unique_ptr<Queues> queues_;
};

}  // namespace fpgacomm::sycl_api
