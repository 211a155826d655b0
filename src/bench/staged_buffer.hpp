// A benchmark buffer of any memory kind as an MPI call sees it. Host kinds
// hand MPI their own memory. Device kinds keep a pinned host mirror: a
// device-to-host copy fills it before MPI reads it, and a host-to-device copy
// empties it after MPI wrote it (docs/METHODS.md, "Collectives and one-sided:
// device buffers"). The copies are blocking, so the caller can time them.
#pragma once
#include <cstdint>
#include <memory>

#include "cl/buffer.hpp"
#include "comm/transfer.hpp"

namespace fpgacomm {

class StagedBuffer {
 public:
  // `device` may be null for kind H (Buffer refuses other kinds without one).
  StagedBuffer(DeviceOps* device, MemKind kind, std::uint64_t bytes, int bank);

  // The benchmark's buffer: validation fills and checks it.
  Buffer& buffer() { return *buffer_; }
  // The memory MPI reads or writes.
  std::uint8_t* mpi_data() { return mirror_ ? mirror_->host_data() : buffer_->host_data(); }
  bool staged() const { return mirror_ != nullptr; }
  // How a buffer of `kind` reaches MPI: device kinds staged, host kinds direct.
  static Route route_for(MemKind kind) { return is_device_kind(kind) ? Route::Staged : Route::Direct; }

  // Device -> mirror and mirror -> device for the first `bytes`; nothing for host kinds.
  void to_host(std::uint64_t bytes);
  void to_device(std::uint64_t bytes);

 private:
  std::unique_ptr<Buffer> buffer_, mirror_;
};

}  // namespace fpgacomm
