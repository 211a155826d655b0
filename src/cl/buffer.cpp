#include "cl/buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "core/error.hpp"

namespace fpgacomm {

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
    case MemKind::Host:
      return "H";
    case MemKind::PinnedHost:
      return "H!";
    case MemKind::Device:
      return "D";
    case MemKind::Hbm:
      return "B";
    case MemKind::Plram:
      return "P";
  }
  return "?";
}

std::string mem_kind_name(MemKind kind) {
  switch (kind) {
    case MemKind::Host:
      return "pageable host memory (H)";
    case MemKind::PinnedHost:
      return "pinned host memory (H!)";
    case MemKind::Device:
      return "device global memory (D)";
    case MemKind::Hbm:
      return "HBM (B)";
    case MemKind::Plram:
      return "PLRAM (P)";
  }
  return "?";
}

std::string banked_kind_obstacle(const DeviceInfo& info, MemKind kind, const std::string& device) {
  if (info.platform_name.find("Xilinx") != std::string::npos) return "";
  if (kind == MemKind::Hbm && info.has_extension("cl_intel_mem_alloc_buffer_location")) return "";
  return mem_kind_name(kind) + " needs the Xilinx XRT memory-bank extension" +
         std::string(kind == MemKind::Hbm ? " or Intel's cl_intel_mem_alloc_buffer_location" : "") + ", and " + device +
         " has neither; use D for device global memory";
}

bool is_device_kind(MemKind kind) { return kind == MemKind::Device || kind == MemKind::Hbm || kind == MemKind::Plram; }

KindSupport probe_kind(DeviceOps& device, MemKind kind, int bank) {
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

Buffer::Buffer(DeviceOps* device, MemKind kind, std::uint64_t bytes, int bank)
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
                     std::to_string(info.max_alloc_bytes) + " bytes; use smaller messages (-m)");
  memory_ = device_->allocate(kind, bytes, bank);
  host_ = memory_.host;
}

Buffer::~Buffer() {
  if (kind_ == MemKind::Host)
    std::free(host_);
  else
    device_->release_memory(kind_, memory_);
}

void Buffer::check_range(std::uint64_t bytes, std::uint64_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw UsageError("access of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                     " is outside a buffer of " + std::to_string(bytes_) + " bytes");
}

void Buffer::write(const void* source, std::uint64_t bytes, std::uint64_t offset) {
  check_range(bytes, offset);
  if (bytes == 0) return;
  if (host_)
    std::memcpy(host_ + offset, source, bytes);
  else
    device_->write(memory_, offset, source, bytes);
}

void Buffer::read(void* destination, std::uint64_t bytes, std::uint64_t offset) const {
  check_range(bytes, offset);
  if (bytes == 0) return;
  if (host_)
    std::memcpy(destination, host_ + offset, bytes);
  else
    device_->read(memory_, offset, destination, bytes);
}

void Buffer::fill_zero() {
  if (host_)
    std::memset(host_, 0, bytes_);
  else
    device_->fill_zero(memory_, bytes_);
}

}  // namespace fpgacomm
