#include "bench/overhead.hpp"

#include <mpi.h>

#include <algorithm>
#include <string>

#include "bench/agreed_run.hpp"
#include "bench/host_memory.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/launch_hint.hpp"

namespace fpgacomm {
namespace {

constexpr int kSendTag = 300, kReceiveTag = 301;

class OverheadRunner {
 public:
  OverheadRunner(const Communicator& comm, const std::vector<std::uint64_t>& sizes, const IterationCounts& counts)
      : comm_(comm), sizes_(sizes), counts_(counts) {
    if (comm.size() != 2)
      throw UsageError("overhead needs exactly 2 ranks, and this run has " + std::to_string(comm.size()) + "; " +
                       run_it_with("2"));
    if (sizes.empty()) throw UsageError("no message sizes to run");
    for (std::uint64_t size : sizes)
      if (size < 1 || size > static_cast<std::uint64_t>(INT32_MAX))
        throw UsageError("overhead message sizes must lie between 1 byte and one MPI count (2^31 - 1 bytes), got " +
                         std::to_string(size));
    counts.validate();
    // One buffer of the largest size; per timed iteration both ranks' times, summed across them.
    HostMemory memory;
    memory.buffers = double(*std::max_element(sizes.begin(), sizes.end()));
    memory.samples = 2.0 * timed_samples(counts, sizes);
    check_host_memory(comm, memory, "overhead", "give smaller messages (-m) or fewer iterations (-i)");
    buffer_.assign(*std::max_element(sizes.begin(), sizes.end()), 0x5a);
  }

  std::vector<OverheadTiming> run() {
    std::vector<OverheadTiming> out;
    for (std::uint64_t size : sizes_) out.push_back(measure(size));
    return out;
  }

 private:
  // One iteration: a send whose start rank 0 times, then a message rank 1
  // takes only once it has arrived (MPI_Iprobe found it), timing the take.
  void iteration(int count, double& send, double& receive) {
    const int peer = 1 - comm_.rank();
    MPI_Request request;
    comm_.barrier();
    if (comm_.rank() == 0) {
      const double start = MPI_Wtime();
      comm_.check(MPI_Isend(buffer_.data(), count, MPI_BYTE, peer, kSendTag, comm_.raw(), &request), "MPI_Isend");
      send = MPI_Wtime() - start;
      comm_.check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
      comm_.check(MPI_Send(buffer_.data(), count, MPI_BYTE, peer, kReceiveTag, comm_.raw()), "MPI_Send");
    } else {
      comm_.check(MPI_Recv(buffer_.data(), count, MPI_BYTE, peer, kSendTag, comm_.raw(), MPI_STATUS_IGNORE),
                  "MPI_Recv");
      int arrived = 0;
      while (!arrived)
        comm_.check(MPI_Iprobe(peer, kReceiveTag, comm_.raw(), &arrived, MPI_STATUS_IGNORE), "MPI_Iprobe");
      const double start = MPI_Wtime();
      comm_.check(MPI_Irecv(buffer_.data(), count, MPI_BYTE, peer, kReceiveTag, comm_.raw(), &request), "MPI_Irecv");
      comm_.check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
      receive = MPI_Wtime() - start;
    }
  }

  OverheadTiming measure(std::uint64_t size) {
    const int count = static_cast<int>(size);
    const int timed = counts_.timed(size);
    double send = 0, receive = 0;
    for (int i = 0; i < counts_.untimed(size); ++i) iteration(count, send, receive);
    // Each rank fills its own half; the sum gives both halves to both ranks.
    std::vector<double> mine(2 * static_cast<std::size_t>(timed), 0.0);
    for (int i = 0; i < timed; ++i) {
      check_interrupt();
      iteration(count, send, receive);
      if (comm_.rank() == 0)
        mine[i] = send;
      else
        mine[timed + i] = receive;
    }
    const std::vector<double> both = comm_.sum(mine);
    OverheadTiming timing;
    timing.size = size;
    timing.iterations = timed;
    timing.send.assign(both.begin(), both.begin() + timed);
    timing.receive.assign(both.begin() + timed, both.end());
    return timing;
  }

  const Communicator& comm_;
  std::vector<std::uint64_t> sizes_;
  IterationCounts counts_;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace

std::vector<OverheadTiming> run_overhead(const Communicator& comm, const std::vector<std::uint64_t>& sizes,
                                         const IterationCounts& counts) {
  return run_agreed<OverheadRunner>(comm, sizes, counts);
}

}  // namespace fpgacomm
