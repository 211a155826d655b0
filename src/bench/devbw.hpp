// Host-device copy bandwidth: the reference for what the staged transfer
// path can reach, measured with the same chunking it uses.
#pragma once
#include <cstdint>

#include "cl/buffer.hpp"

namespace fpgacomm {

// Best time over `repetitions` of copying `bytes` between a device buffer
// and host memory of `host_kind` (H or H!), as blocking copies of `chunk`
// bytes one after another (the serial staging of one message), in seconds.
double copy_time(Device& device, bool to_device, MemKind host_kind, std::uint64_t bytes, std::uint64_t chunk,
                 int repetitions);

}  // namespace fpgacomm
