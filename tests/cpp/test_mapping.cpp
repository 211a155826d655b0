#include "check.hpp"
#include "core/error.hpp"
#include "core/mapping.hpp"

using namespace fpgacomm;

int main() {
  const auto map = parse_device_map("2:0:3", "FPGA_MAPPING");
  CHECK(map.size() == 3 && map[0] == 2 && map[1] == 0 && map[2] == 3);
  CHECK(parse_device_map("7", "FPGA_MAPPING").size() == 1);
  CHECK_THROWS(UsageError, parse_device_map("", "FPGA_MAPPING"), "FPGA_MAPPING is empty");
  CHECK_THROWS(UsageError, parse_device_map("1::2", "FPGA_MAPPING"), "empty or oversized");
  CHECK_THROWS(UsageError, parse_device_map("1:a", "--device-map"), "--device-map='1:a' has a non-numeric entry 'a'");
  CHECK_THROWS(UsageError, parse_device_map("-1", "FPGA_MAPPING"), "non-numeric");
  CHECK_THROWS(UsageError, parse_device_map("1:", "FPGA_MAPPING"), "empty");

  // Two nodes, ranks placed round-robin: node-local ranks count per host.
  const std::vector<std::string> hosts{"n0", "n1", "n0", "n1", "n0"};
  CHECK(node_local_rank(hosts, 0) == 0);
  CHECK(node_local_rank(hosts, 1) == 0);
  CHECK(node_local_rank(hosts, 2) == 1);
  CHECK(node_local_rank(hosts, 4) == 2);
  CHECK_THROWS(UsageError, node_local_rank(hosts, 5), "outside the host list");

  CHECK(device_index(0, 2, {}, "") == 0);
  CHECK(device_index(3, 2, {}, "") == 1);
  CHECK(device_index(1, 4, {2, 0, 3}, "FPGA_MAPPING") == 0);
  CHECK_THROWS(UsageError, device_index(3, 4, {2, 0, 3}, "FPGA_MAPPING"), "node-local rank 3 needs one");
  CHECK_THROWS(UsageError, device_index(2, 3, {2, 0, 3}, "FPGA_MAPPING"), "to device 3, but only 3 device(s)");
  CHECK_THROWS(UsageError, device_index(0, 0, {}, ""), "no OpenCL device");
  return check::failures;
}
