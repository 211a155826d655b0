#include "comm/pipeline.hpp"

#include "core/error.hpp"

namespace fpgacomm {

std::vector<Chunk> plan_chunks(std::uint64_t bytes, std::uint64_t chunk_bytes, bool chunked_wire) {
  if (!chunked_wire || bytes <= chunk_bytes) return {Chunk{0, bytes}};
  if (chunk_bytes == 0) throw UsageError("pipeline chunk size must be at least 1 byte");
  std::vector<Chunk> chunks;
  chunks.reserve((bytes + chunk_bytes - 1) / chunk_bytes);
  for (std::uint64_t offset = 0; offset < bytes; offset += chunk_bytes)
    chunks.push_back({offset, bytes - offset < chunk_bytes ? bytes - offset : chunk_bytes});
  return chunks;
}

}  // namespace fpgacomm
