#include "core/mapping.hpp"

#include <cctype>

#include "core/error.hpp"

namespace fpgacomm {

std::vector<int> parse_device_map(const std::string& spec, const std::string& source) {
  const std::string hint =
      "; expected colon-separated device indices such as 2:0:3 "
      "(entry i is the device of node-local rank i)";
  if (spec.empty()) throw UsageError(source + " is empty" + hint);
  std::vector<int> map;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = spec.find(':', start);
    const std::string item = spec.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (item.empty() || item.size() > 6)
      throw UsageError(source + "='" + spec + "' has an empty or oversized entry" + hint);
    for (char c : item)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        throw UsageError(source + "='" + spec + "' has a non-numeric entry '" + item + "'" + hint);
    map.push_back(std::stoi(item));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return map;
}

int node_local_rank(const std::vector<std::string>& hosts, int rank) {
  if (rank < 0 || rank >= static_cast<int>(hosts.size()))
    throw UsageError("rank " + std::to_string(rank) + " is outside the host list of " + std::to_string(hosts.size()) +
                     " ranks");
  int local = 0;
  for (int r = 0; r < rank; ++r)
    if (hosts[r] == hosts[rank]) ++local;
  return local;
}

int device_index(int local_rank, int device_count, const std::vector<int>& map, const std::string& source) {
  if (device_count <= 0) throw UsageError("no OpenCL device matches the selection; run 'fpgacomm devices'");
  if (map.empty()) return local_rank % device_count;
  if (local_rank >= static_cast<int>(map.size()))
    throw UsageError(source + " has " + std::to_string(map.size()) + " entries but node-local rank " +
                     std::to_string(local_rank) + " needs one; give one device index per rank on a node");
  const int index = map[local_rank];
  if (index >= device_count)
    throw UsageError(source + " maps node-local rank " + std::to_string(local_rank) + " to device " +
                     std::to_string(index) + ", but only " + std::to_string(device_count) +
                     " device(s) match (indices 0.." + std::to_string(device_count - 1) + "); run 'fpgacomm devices'");
  return index;
}

}  // namespace fpgacomm
