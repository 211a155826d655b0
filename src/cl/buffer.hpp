// Buffers of every memory kind fpgacomm measures, as OMB-FPGA spells them:
// H pageable host, H! pinned host, D device global memory (DDR), B HBM and
// P PLRAM. A kind the device cannot give is an error naming both.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "cl/device_ops.hpp"

namespace fpgacomm {
// Every kind, host kinds first, in the order the command line lists them.
const std::vector<MemKind>& mem_kinds();

// "H", "H!", "D", "B", "P" -> kind; anything else is a UsageError listing them.
MemKind parse_mem_kind(const std::string& code);
std::string mem_kind_code(MemKind kind);
std::string mem_kind_name(MemKind kind);  // "device global memory (D)"
// Device memory: reached only through the device API's copies or mappings.
bool is_device_kind(MemKind kind);
// Why the device cannot place `kind` (B, P) in a bank, or "" when a vendor
// extension can (Xilinx XRT's memory banks, Intel's buffer location).
// device: how the text names the device (a device listing, which names each
// device itself, says "the device", so that devices alike read alike).
std::string banked_kind_obstacle(const DeviceInfo& info, MemKind kind, const std::string& device);

// Can `device` give `kind`? Decided by extension queries and a trial
// allocation with a write and read-back, never assumed. `reason` says why not.
struct KindSupport {
  bool supported;
  std::string reason;
};
KindSupport probe_kind(DeviceOps& device, MemKind kind, int bank = 0);

class Buffer {
 public:
  // `device` (OpenCL or SYCL) may be null for kind H. `bank` selects the
  // HBM/PLRAM bank (B, P). Throws UsageError when the size is out of the
  // device's range or the kind is missing; the new buffer holds zeros.
  Buffer(DeviceOps* device, MemKind kind, std::uint64_t bytes, int bank = 0);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  MemKind kind() const { return kind_; }
  std::uint64_t bytes() const { return bytes_; }
  DeviceOps* device() const { return device_; }
  // Host memory of H and H! buffers (no copy); null for device kinds.
  std::uint8_t* host_data() const { return host_; }
  // The device API's allocation of H!, D, B and P buffers; empty for H.
  const DeviceMemory& memory() const { return memory_; }
  // The OpenCL object of an OpenCL device's H!, D, B and P buffers.
  cl_mem mem() const { return static_cast<cl_mem>(memory_.handle); }

  // Blocking copies between this buffer and host memory, any kind.
  void write(const void* source, std::uint64_t bytes, std::uint64_t offset = 0);
  void read(void* destination, std::uint64_t bytes, std::uint64_t offset = 0) const;
  void fill_zero();

 private:
  void check_range(std::uint64_t bytes, std::uint64_t offset) const;

  DeviceOps* device_;
  MemKind kind_;
  std::uint64_t bytes_;
  std::uint8_t* host_ = nullptr;
  DeviceMemory memory_;
};

}  // namespace fpgacomm
