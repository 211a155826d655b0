// One OpenCL device opened for use: its context, its command queues and the
// programs loaded on it (kernels/*.cl from source, or a vendor binary).
#pragma once
#include <map>
#include <string>

#include "cl/device_ops.hpp"
#include "cl/platform.hpp"

namespace fpgacomm {

class Device : public DeviceOps {
 public:
  // `kernel_dir` holds kernels/*.cl; `binary_path` (.aocx, .xclbin), when
  // given, is programmed at once, as FPGAs need a bitstream before buffers.
  Device(DeviceInfo info, std::string kernel_dir, std::string binary_path = "");
  ~Device() override;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const override { return info_; }
  cl_context context() const { return context_; }
  // Two in-order queues so that host-to-device and device-to-host copies
  // can run at once where the hardware has two copy engines.
  cl_command_queue to_device_queue() const { return to_device_; }
  cl_command_queue to_host_queue() const { return to_host_; }

  // A kernel from kernels/<file>.cl (or from the binary), built once.
  cl_kernel kernel(const std::string& file, const std::string& name);

  // Releases the program of kernels/<file>.cl (or the binary's) and its
  // kernels; the next kernel() builds it anew. Intel's FPGA emulator opens a
  // program's io channel files at its first launch, in the working directory
  // of that moment, and keeps them while the program lives.
  void release_program(const std::string& file);

  // Launches the empty placeholder kernel on `buffer` and waits, so the
  // runtime must assume the device changed it (OMB-FPGA section 3.1.2).
  void touch(cl_mem buffer);
  void touch(const DeviceMemory& memory) override { touch(static_cast<cl_mem>(memory.handle)); }

  void finish() override;

  // DeviceOps with OpenCL buffers and commands (cl/memory.cpp).
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

 private:
  cl_program program(const std::string& file);

  DeviceInfo info_;
  std::string kernel_dir_;
  std::string binary_path_;
  cl_context context_ = nullptr;
  cl_command_queue to_device_ = nullptr;
  cl_command_queue to_host_ = nullptr;
  std::map<std::string, cl_program> programs_;
  std::map<std::string, cl_kernel> kernels_;
};

}  // namespace fpgacomm
