// Ranks to devices (docs/GUIDE.md, "Which device each rank uses"): node-local
// rank modulo the device count, or an explicit list such as
// FPGA_MAPPING=2:0:3 (entry i is the device of node-local rank i).
#pragma once
#include <string>
#include <vector>

namespace fpgacomm {

// "2:0:3" -> {2, 0, 3}. `source` names where the text came from
// ("FPGA_MAPPING", "--device-map") for the error message.
std::vector<int> parse_device_map(const std::string& spec, const std::string& source);

// Rank `rank`'s position among the ranks on its host, counted in rank order;
// hosts[r] is the host name of rank r (injectable, so tests can fake nodes).
int node_local_rank(const std::vector<std::string>& hosts, int rank);

// The device index of a node-local rank among `device_count` candidates.
int device_index(int local_rank, int device_count, const std::vector<int>& map, const std::string& source);

}  // namespace fpgacomm
