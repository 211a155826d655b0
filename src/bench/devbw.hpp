// Host-device copy bandwidth and latency: the reference for what the staged
// transfer path can reach (none of the papers gives it; method in
// docs/METHODS.md, devbw).
#pragma once
#include <cstdint>
#include <vector>

#include "cl/buffer.hpp"

namespace fpgacomm {

// Best time over `repetitions` of copying `bytes` between a device buffer
// and host memory of `host_kind` (H or H!), as blocking copies of `chunk`
// bytes one after another (the serial staging of one message), in seconds.
double copy_time(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, std::uint64_t chunk,
                 int repetitions);

// Per-iteration times of copying `bytes` in one blocking command: the host
// clock from enqueue to return, and the device's own time of the copy from
// OpenCL profiling events (CL_PROFILING_COMMAND_START to _END). The
// difference is the command overhead (submission, completion signalling).
struct CopySamples {
  std::vector<double> host_seconds;
  std::vector<double> device_seconds;
};
CopySamples copy_samples(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, int iterations,
                         int warmup);

}  // namespace fpgacomm
