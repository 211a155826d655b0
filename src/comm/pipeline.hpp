// How a message is cut into chunks on the wire. Both ends compute the same
// plan from the same numbers, so the receiver posts exactly the receives
// that match the sender's sends (MPI keeps their order per peer and tag).
#pragma once
#include <cstdint>
#include <vector>

namespace fpgacomm {

struct Chunk {
  std::uint64_t offset;
  std::uint64_t bytes;
};

// One chunk when the wire is not chunked or the message fits in one chunk;
// otherwise ceil(bytes / chunk_bytes) chunks, the last one shorter.
std::vector<Chunk> plan_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes, bool chunked_wire);

}  // namespace fpgacomm
