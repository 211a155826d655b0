// A full-duplex serial link: lanes at a symbol rate, a line coding, and the
// propagation latency of the cable and transceivers. Each direction is
// simulated as its own output port, so the two never contend.
#pragma once
#include <string>

namespace fpgacomm::fabric {

enum class LineCoding { none, b8b10, b64b66, b64b67, b128b130 };

// Data bits per line bit: 8/10, 64/66, 64/67, 128/130 (PCIe 3), or 1 where
// the rate given is already the data rate.
double coding_efficiency(LineCoding coding);
LineCoding parse_line_coding(const std::string& name);  // "8b10b", "64b66b", "64b67b", "128b130b", "none"
std::string to_string(LineCoding coding);

struct Link {
  double lane_rate = 0.0;  // line bits per second per lane (baud for NRZ)
  int lanes = 1;
  LineCoding coding = LineCoding::none;
  double latency = 0.0;  // seconds from the first bit sent to the first bit received

  // Payload-carrying bytes per second after line coding.
  double data_rate() const;
  double serialization_time(double wire_bytes) const { return wire_bytes / data_rate(); }
  // Throws UsageError naming `what` if the link cannot carry data.
  void validate(const std::string& what) const;
};

}  // namespace fpgacomm::fabric
