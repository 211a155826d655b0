#include "bench/devbw.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "cl/check.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace fpgacomm {
namespace {

void check_host_kind(MemKind host_kind) {
  if (host_kind != MemKind::Host && host_kind != MemKind::PinnedHost)
    throw UsageError("copy bandwidth needs a host kind (H or H!) on the host side, got " + mem_kind_name(host_kind));
}

double event_seconds(cl_event event) {
  const char* what = "reading a copy's profiling times";
  return static_cast<double>(profiling_ns(event, CL_PROFILING_COMMAND_END, what) -
                             profiling_ns(event, CL_PROFILING_COMMAND_START, what)) *
         1e-9;
}

struct CopyTiming {
  double host;
  double device;  // 0 unless profiled
};

// One message copied as blocking commands of `chunk` bytes. With `profile`,
// each command carries an event, read after the clock stops; the device time
// is the sum of the commands' intervals.
CopyTiming copy_once(Device& device, Buffer& device_buffer, Buffer& host, bool to_device, std::uint64_t bytes,
                     std::uint64_t chunk, bool profile) {
  std::vector<cl_event> events;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t offset = 0; offset < bytes; offset += chunk) {
    const std::uint64_t n = std::min(chunk, bytes - offset);
    cl_event event = nullptr;
    cl_event* event_out = profile ? &event : nullptr;
    if (to_device)
      cl_check(clEnqueueWriteBuffer(device.to_device_queue(), device_buffer.mem(), CL_TRUE, offset, n, host.host_data(),
                                    0, nullptr, event_out),
               "clEnqueueWriteBuffer", [&] { return "copying " + std::to_string(n) + " bytes to the device"; });
    else
      cl_check(clEnqueueReadBuffer(device.to_host_queue(), device_buffer.mem(), CL_TRUE, offset, n, host.host_data(), 0,
                                   nullptr, event_out),
               "clEnqueueReadBuffer", [&] { return "copying " + std::to_string(n) + " bytes from the device"; });
    if (event) events.push_back(event);
  }
  CopyTiming timing{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.0};
  for (cl_event event : events) {
    try {
      timing.device += event_seconds(event);
    } catch (...) {
      for (cl_event e : events) clReleaseEvent(e);
      throw;
    }
  }
  for (cl_event event : events) clReleaseEvent(event);
  return timing;
}

}  // namespace

double copy_time(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, std::uint64_t chunk,
                 int repetitions) {
  check_host_kind(host_kind);
  if (chunk == 0 || repetitions < 1)
    throw UsageError("copy bandwidth needs a chunk of at least 1 byte and 1 repetition");
  chunk = std::min(chunk, bytes);
  Buffer device_buffer(&device, MemKind::Device, bytes);
  Buffer host(&device, host_kind, chunk);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repetitions + 1; ++r) {  // the first pass warms up
    const double seconds = copy_once(device, device_buffer, host, to_device, bytes, chunk, false).host;
    if (r > 0) best = std::min(best, seconds);
  }
  return best;
}

CopySamples copy_samples(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, int iterations,
                         int warmup) {
  check_host_kind(host_kind);
  if (bytes == 0 || iterations < 1 || warmup < 0)
    throw UsageError("copy timing needs at least 1 byte, 1 iteration and no negative warm-up");
  Buffer device_buffer(&device, MemKind::Device, bytes);
  Buffer host(&device, host_kind, bytes);
  CopySamples samples;
  samples.host_seconds.reserve(iterations);
  samples.device_seconds.reserve(iterations);
  for (int i = 0; i < warmup + iterations; ++i) {
    check_interrupt();
    const CopyTiming timing = copy_once(device, device_buffer, host, to_device, bytes, bytes, true);
    if (i < warmup) continue;
    samples.host_seconds.push_back(timing.host);
    samples.device_seconds.push_back(timing.device);
  }
  return samples;
}

}  // namespace fpgacomm
