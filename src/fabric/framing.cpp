#include "fabric/framing.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fpgacomm::fabric {

std::vector<std::int64_t> Framing::split(std::int64_t message_bytes) const {
  if (message_bytes < 0) {
    throw UsageError("fabric: a message of " + std::to_string(message_bytes) + " bytes; give a size of 0 or more");
  }
  std::vector<std::int64_t> payloads;
  payloads.reserve(static_cast<std::size_t>(message_bytes / max_payload + 1));
  std::int64_t left = message_bytes;
  do {
    const std::int64_t payload = std::min<std::int64_t>(left, max_payload);
    payloads.push_back(payload);
    left -= payload;
  } while (left > 0);
  return payloads;
}

std::int64_t Framing::padded_payload(std::int64_t payload) const {
  const std::int64_t units = (payload + payload_unit - 1) / payload_unit;
  return std::max<std::int64_t>(min_payload, units * payload_unit);
}

std::int64_t Framing::wire_bytes(std::int64_t payload) const {
  return header_bytes + padded_payload(payload) + trailer_bytes + gap_bytes;
}

std::int64_t Framing::chunk_wire_bytes(std::int64_t chunk) const {
  const std::int64_t full = chunk / max_payload, rest = chunk % max_payload;
  return full * wire_bytes(max_payload) + (rest > 0 || chunk == 0 ? wire_bytes(rest) : 0);
}

double Framing::frame_error_probability(std::int64_t payload) const {
  if (bit_error_rate <= 0.0) return 0.0;
  const double bits = 8.0 * static_cast<double>(header_bytes + padded_payload(payload) + trailer_bytes);
  return -std::expm1(bits * std::log1p(-bit_error_rate));
}

void Framing::validate() const {
  const std::string what = "framing '" + name + "'";
  if (header_bytes < 0 || trailer_bytes < 0 || gap_bytes < 0 || min_payload < 0) {
    throw UsageError("fabric: " + what + " has a negative header, trailer, gap or minimum payload; give 0 or more");
  }
  if (max_payload < 1) {
    throw UsageError("fabric: " + what + " has maximum payload " + std::to_string(max_payload) +
                     " bytes; give at least 1");
  }
  if (payload_unit < 1 || max_payload % payload_unit != 0) {
    throw UsageError("fabric: " + what + " has payload unit " + std::to_string(payload_unit) +
                     " bytes; give a unit of 1 or more that divides the maximum payload " +
                     std::to_string(max_payload));
  }
  if (min_payload > max_payload) {
    throw UsageError("fabric: " + what + " has a minimum payload above its maximum; lower the minimum");
  }
  if (!(bit_error_rate >= 0.0 && bit_error_rate < 1e-3)) {
    throw UsageError("fabric: " + what + " has bit-error rate " + std::to_string(bit_error_rate) +
                     "; give a rate in [0, 1e-3) (above it almost no frame gets through)");
  }
  if (header_bytes + trailer_bytes + gap_bytes + max_payload == 0) {
    throw UsageError("fabric: " + what + " has frames of zero bytes; give a payload or a header");
  }
}

}  // namespace fpgacomm::fabric
