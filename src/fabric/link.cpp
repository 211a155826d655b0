#include "fabric/link.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fpgacomm::fabric {

double coding_efficiency(LineCoding coding) {
  switch (coding) {
    case LineCoding::none:
      return 1.0;
    case LineCoding::b8b10:
      return 8.0 / 10.0;
    case LineCoding::b64b66:
      return 64.0 / 66.0;
    case LineCoding::b64b67:
      return 64.0 / 67.0;
    case LineCoding::b128b130:
      return 128.0 / 130.0;
  }
  return 1.0;
}

LineCoding parse_line_coding(const std::string& name) {
  if (name == "none") return LineCoding::none;
  if (name == "8b10b") return LineCoding::b8b10;
  if (name == "64b66b") return LineCoding::b64b66;
  if (name == "64b67b") return LineCoding::b64b67;
  if (name == "128b130b") return LineCoding::b128b130;
  throw UsageError("fabric: unknown line coding '" + name + "'; use one of 8b10b, 64b66b, 64b67b, 128b130b or none");
}

std::string to_string(LineCoding coding) {
  switch (coding) {
    case LineCoding::none:
      return "none";
    case LineCoding::b8b10:
      return "8b10b";
    case LineCoding::b64b66:
      return "64b66b";
    case LineCoding::b64b67:
      return "64b67b";
    case LineCoding::b128b130:
      return "128b130b";
  }
  return "none";
}

double Link::data_rate() const { return lane_rate * lanes * coding_efficiency(coding) / 8.0; }

void Link::validate(const std::string& what) const {
  if (!(lane_rate > 0.0) || !std::isfinite(lane_rate)) {
    throw UsageError("fabric: " + what + " has lane rate " + std::to_string(lane_rate) +
                     " bit/s; give a positive, finite rate (zero bandwidth cannot carry a frame)");
  }
  if (lanes < 1) {
    throw UsageError("fabric: " + what + " has " + std::to_string(lanes) + " lanes; give at least 1");
  }
  if (!(latency >= 0.0) || !std::isfinite(latency)) {
    throw UsageError("fabric: " + what + " has latency " + std::to_string(latency) +
                     " s; give a finite latency of 0 or more");
  }
}

}  // namespace fpgacomm::fabric
