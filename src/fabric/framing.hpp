// How a message becomes frames on a link: per-frame header, trailer and idle
// gap, the largest payload a frame carries, and the unit the payload is
// padded to. With a bit-error rate above zero, a frame whose CRC fails is
// sent again (CusComNet checks the CRC on every link).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fpgacomm::fabric {

struct Framing {
  std::string name;
  int header_bytes = 0;   // before the payload: preamble, addresses, type, ...
  int trailer_bytes = 0;  // after the payload: CRC/FCS, end markers
  int gap_bytes = 0;      // idle line time between frames, in byte times
  int max_payload = 0;    // bytes of payload one frame carries at most
  int payload_unit = 1;   // payload is padded up to a multiple of this
  int min_payload = 0;    // and to at least this many bytes
  double bit_error_rate = 0.0;

  // Payload sizes of the frames that carry `message_bytes` (one empty frame
  // for an empty message).
  std::vector<std::int64_t> split(std::int64_t message_bytes) const;
  std::int64_t padded_payload(std::int64_t payload) const;
  // Byte times the frame occupies on the line, gap included.
  std::int64_t wire_bytes(std::int64_t payload) const;
  // Byte times of `chunk` payload bytes carried as frames of this framing:
  // a segment whose frames are smaller than the simulated chunk (PCIe TLPs
  // under InfiniBand packets) sends it as several frames back to back.
  std::int64_t chunk_wire_bytes(std::int64_t chunk) const;
  // Chance that one transmission of the frame arrives with a bit error.
  double frame_error_probability(std::int64_t payload) const;
  // Throws UsageError unless the numbers describe a usable framing.
  void validate() const;
};

}  // namespace fpgacomm::fabric
