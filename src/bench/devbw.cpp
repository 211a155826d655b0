#include "bench/devbw.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/error.hpp"

namespace fpgacomm {

double copy_time(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, std::uint64_t chunk,
                 int repetitions) {
  if (host_kind != MemKind::Host && host_kind != MemKind::PinnedHost)
    throw UsageError("copy bandwidth needs a host kind (H or H!) on the host side, got " + mem_kind_name(host_kind));
  if (chunk == 0 || repetitions < 1) throw UsageError("copy bandwidth needs a chunk of at least 1 byte and 1 repetition");
  chunk = std::min(chunk, bytes);
  Buffer device_buffer(&device, MemKind::Device, bytes);
  Buffer host(&device, host_kind, chunk);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions + 1; ++r) {  // the first pass warms up
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t offset = 0; offset < bytes; offset += chunk) {
      const std::uint64_t n = std::min(chunk, bytes - offset);
      if (to_device)
        device_buffer.write(host.host_data(), n, offset);
      else
        device_buffer.read(host.host_data(), n, offset);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) best = std::min(best, seconds);
  }
  return best;
}

}  // namespace fpgacomm
