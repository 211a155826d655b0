#include "bench/staged_buffer.hpp"

namespace fpgacomm {

StagedBuffer::StagedBuffer(DeviceOps* device, MemKind kind, std::uint64_t bytes, int bank) {
  buffer_ = std::make_unique<Buffer>(device, kind, bytes, bank);
  if (is_device_kind(kind)) mirror_ = std::make_unique<Buffer>(device, MemKind::PinnedHost, bytes);
}

void StagedBuffer::to_host(std::uint64_t bytes) {
  if (mirror_ && bytes > 0) buffer_->read(mirror_->host_data(), bytes);
}

void StagedBuffer::to_device(std::uint64_t bytes) {
  if (mirror_ && bytes > 0) buffer_->write(mirror_->host_data(), bytes);
}

}  // namespace fpgacomm
