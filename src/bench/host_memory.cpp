#include "bench/host_memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace fpgacomm {
namespace {

std::atomic<std::uint64_t> limit_bytes{0};

// Bytes as "1.5 GiB", "300 KiB", "12 bytes".
std::string amount(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) bytes /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", bytes, units[unit]);
  return text;
}

}  // namespace

void HostMemory::add_batch(double pieces, bool stages, int slots) {
  if (stages) {
    staged += pieces;
    posted += std::min(pieces, 2.0 * slots);
  } else {
    posted += pieces;
  }
}

double HostMemory::bytes() const {
  return buffers + posted * double(kBytesPerPostedMessage) + staged * double(kBytesPerStagedChunk) +
         samples * double(kBytesPerSample) + rows * double(kBytesPerRoundRow);
}

std::string HostMemory::describe() const {
  std::ostringstream text;
  text.precision(3);
  text << amount(buffers) << " of buffers";
  if (posted > 0) text << ", " << posted << " messages in flight at about " << kBytesPerPostedMessage << " bytes each";
  if (staged > 0) text << ", " << staged << " staged chunks at about " << kBytesPerStagedChunk << " bytes each";
  if (samples > 0) text << ", " << samples << " timed samples at about " << kBytesPerSample << " bytes each";
  if (rows > 0) text << ", " << rows << " rows of rounds at about " << kBytesPerRoundRow << " bytes each";
  return text.str();
}

double timed_samples(const IterationCounts& counts, const std::vector<std::uint64_t>& sizes) {
  double total = 0;
  for (std::uint64_t size : sizes) total += counts.timed(size);
  return total;
}

void set_host_memory_limit(std::uint64_t bytes) { limit_bytes = bytes; }

std::uint64_t host_memory_limit() { return limit_bytes; }

std::uint64_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

void check_host_memory(const Communicator& comm, const HostMemory& mine, const std::string& run,
                       const std::string& fix) {
  const std::vector<std::string> hosts = comm.host_names();
  const double bytes = mine.bytes();
  std::vector<double> all(static_cast<std::size_t>(comm.size()));
  comm.check(MPI_Allgather(&bytes, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm.raw()), "MPI_Allgather",
             "gathering the host memory estimates");
  const std::string& host = hosts[static_cast<std::size_t>(comm.rank())];
  double together = 0;
  int sharers = 0;
  for (std::size_t r = 0; r < hosts.size(); ++r)
    if (hosts[r] == host) together += all[r], ++sharers;

  const std::uint64_t set = host_memory_limit();
  const std::uint64_t available = set ? 0 : available_host_memory();
  if (!set && available == 0) return;  // no /proc/meminfo: nothing to compare with
  const std::uint64_t limit = set ? set : static_cast<std::uint64_t>(kDefaultHostMemoryShare * double(available));
  if (together <= double(limit)) return;
  const std::string limit_text =
      set ? amount(double(limit)) + " (--max-memory)"
          : amount(double(limit)) + " (3/4 of the " + amount(double(available)) + " MemAvailable of /proc/meminfo)";
  throw UsageError(run + ": the " + std::to_string(sharers) + (sharers == 1 ? " rank" : " ranks") + " on host " + host +
                   " would hold about " + amount(together) + " of host memory (this rank: " + mine.describe() +
                   "), more than the limit of " + limit_text + "; " + fix +
                   ", or raise the limit with --max-memory SIZE");
}

}  // namespace fpgacomm
