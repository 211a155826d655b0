#include <stdexcept>

#include "bench/host_copy.hpp"
#include "check.hpp"

using namespace fpgacomm;

int main() {
  // Two threads copying blocks of a core's cache and of memory move data at
  // a rate a host can have (0.1 GB/s .. 10 TB/s), and the copies arrived
  // intact (host_copy_rate checks the pattern after its last copy).
  for (std::uint64_t block : {64u << 10, 4u << 20}) {
    const double rate = host_copy_rate(2, block, 0.02);
    CHECK(rate > 1e8 && rate < 1e13);
  }
  CHECK_THROWS(std::invalid_argument, host_copy_rate(0, 4096, 0.01), "threads must be at least 1");

  // Passing blocks along a chain of threads, core to core: a rate a host can
  // have, and each thread's last block is the one thread 0 stamped as many
  // rounds before as the thread stands from it (host_pass_rate checks it).
  for (int threads : {1, 2, 3})
    for (std::uint64_t block : {64u << 10, 1u << 20}) {
      const double rate = host_pass_rate(threads, block, 0.02);
      CHECK(rate > 1e8 && rate < 1e13);
    }
  CHECK_THROWS(std::invalid_argument, host_pass_rate(0, 4096, 0.01), "threads must be at least 1");
  CHECK_THROWS(std::invalid_argument, host_pass_rate(2, 8, 0.01), "at least 16 bytes");
  return check::failures;
}
