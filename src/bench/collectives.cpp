#include "bench/collectives.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>

#include "bench/agreed_run.hpp"
#include "bench/collective_table.hpp"
#include "bench/host_memory.hpp"
#include "bench/pattern.hpp"
#include "bench/staged_buffer.hpp"
#include "comm/receive_fault.hpp"
#include "comm/transfer.hpp"
#include "core/choices.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/launch_hint.hpp"

namespace fpgacomm {
namespace {

// Reductions sum elements of the datatype, as OMB does. Every rank
// contributes whole numbers small enough that no partial sum overflows, so
// every order of summing gives the exact result: 0..255 for MPI_INT and
// MPI_FLOAT (up to 65536 ranks); for MPI_CHAR, whose sums Open MPI's
// vectorised reductions saturate while its scalar ones wrap, at most
// 127 / ranks (so beyond 127 ranks MPI_CHAR reductions check zeros only:
// validate with -T mpi_int there).

class Runner {
 public:
  Runner(const Communicator& comm, DeviceOps* device, const CollectiveOptions& options,
         const SizeHook<CollectiveTiming>& on_size)
      : comm_(comm),
        device_(device),
        options_(options),
        on_size_(on_size),
        op_(collective(options.op)),
        ranks_(comm.size()),
        me_(comm.rank()),
        root_(options.root.value_or(0)) {
    options.validate();
    if (ranks_ < 2)
      throw UsageError("osu " + options.op + " needs at least 2 ranks, and this run has " + std::to_string(ranks_) +
                       "; " + run_it_with("2") + " (or more ranks)");
    if (root_ < 0 || root_ >= ranks_)
      throw UsageError("root " + std::to_string(root_) + " is out of range for " + std::to_string(ranks_) +
                       " ranks; choose --root 0.." + std::to_string(ranks_ - 1));
    for (std::uint64_t size : sizes()) check_size(size);
    check_host_memory(comm, host_memory(), "osu " + options.op,
                      "give smaller messages (-m), fewer iterations (-i) or fewer ranks per host");
  }

  CollectiveRun run() {
    CollectiveRun result;
    if (op_.rooted) result.root = root_;
    result.route = route_name(StagedBuffer::route_for(options_.kind));
    std::exception_ptr failure;
    try {
      const std::vector<std::uint64_t> all = sizes();
      const std::uint64_t largest = *std::max_element(all.begin(), all.end());
      if (send_bytes(largest) > 0)
        send_ = std::make_unique<StagedBuffer>(device_, options_.kind, send_bytes(largest), options_.bank);
      if (recv_bytes(largest) > 0)
        recv_ = std::make_unique<StagedBuffer>(device_, options_.kind, recv_bytes(largest), options_.bank);
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure);
    for (std::uint64_t size : sizes()) {
      result.sizes.push_back(measure(size));
      if (on_size_) on_size_(result.sizes.back());
      if (result.sizes.back().errors > 0) break;  // as OMB: a failing size ends the sweep
    }
    return result;
  }

 private:
  // The barrier has no message: one row of size 0. Other sizes smaller
  // than one element are skipped, as OMB does.
  std::vector<std::uint64_t> sizes() const {
    if (!moves_data(op_)) return {0};
    std::vector<std::uint64_t> holding;
    for (std::uint64_t size : options_.sizes)
      if (elements(size) > 0) holding.push_back(size);
    return holding;
  }
  bool root() const { return me_ == root_; }
  int element_bytes() const { return datatype_bytes(options_.datatype); }
  std::uint64_t elements(std::uint64_t size) const { return size / element_bytes(); }
  // What one rank's message of `size` bytes moves: its whole elements.
  std::uint64_t block_bytes(std::uint64_t size) const { return message_bytes(size, options_.datatype); }

  // This rank's host memory at the largest size (docs/METHODS.md, "Host
  // memory of a run"): its send and receive buffers, host memory or the
  // pinned mirrors of device ones, and with -c one more of the larger.
  HostMemory host_memory() const {
    const std::vector<std::uint64_t> all = sizes();
    HostMemory memory;
    if (all.empty()) return memory;
    const std::uint64_t largest = *std::max_element(all.begin(), all.end());
    memory.buffers = double(send_bytes(largest)) + double(recv_bytes(largest));
    if (options_.validation) memory.buffers += double(std::max(send_bytes(largest), recv_bytes(largest)));
    memory.samples = timed_samples(options_.counts, all);
    return memory;
  }

  void check_size(std::uint64_t size) const {
    if (elements(size) * ranks_ > static_cast<std::uint64_t>(INT_MAX))
      throw UsageError(std::to_string(size) + " bytes per rank on " + std::to_string(ranks_) +
                       " ranks is more elements than an MPI count can hold; use smaller messages (-m)");
  }

  // The elements rank r receives in reduce_scatter: the vector split into
  // nearly equal blocks, the first (elements mod ranks) one larger.
  std::uint64_t block_of(std::uint64_t size, int rank) const {
    const std::uint64_t n = elements(size);
    return n / ranks_ + (static_cast<std::uint64_t>(rank) < n % ranks_ ? 1 : 0);
  }
  std::uint64_t block_start(std::uint64_t size, int rank) const {
    std::uint64_t start = 0;
    for (int r = 0; r < rank; ++r) start += block_of(size, r);
    return start;
  }

  // This rank's bytes of a buffer of the collective's.
  std::uint64_t bytes(const BufferShape& buffer, std::uint64_t size) const {
    switch (root() ? buffer.root : buffer.other) {
      case Blocks::None:
        return 0;
      case Blocks::One:
        return block_bytes(size);
      case Blocks::PerRank:
        return block_bytes(size) * ranks_;
      case Blocks::Share:
        return block_of(size, me_) * element_bytes();
    }
    return 0;
  }
  std::uint64_t send_bytes(std::uint64_t size) const { return bytes(op_.send, size); }
  std::uint64_t recv_bytes(std::uint64_t size) const { return bytes(op_.recv, size); }

  // Element e of `rank`'s vector in a validated reduction.
  std::uint64_t summand(std::uint64_t e, std::uint64_t size, int iteration, int rank) const {
    const std::uint64_t value = pattern_byte(e, size, iteration, rank);
    return options_.datatype == Datatype::Char ? value % (127 / ranks_ + 1) : value;
  }

  // Validation streams (pattern_byte's last argument): who sent block
  // `block` of a message, so a block from the wrong rank, or landing in the
  // wrong place, does not match.
  int send_stream(int block) const {
    return stream(me_, op_.send.root == Blocks::PerRank || op_.send.other == Blocks::PerRank ? block : root_);
  }
  int recv_stream(int block) const {
    return stream(op_.recv.root == Blocks::PerRank || op_.recv.other == Blocks::PerRank ? block : root_, me_);
  }
  int stream(int source, int destination) const {
    switch (op_.stream) {
      case Stream::Source:
        return source;
      case Stream::Destination:
        return destination;
      case Stream::Pair:
        return source * ranks_ + destination;
    }
    return source;
  }

  void prepare(std::uint64_t size, int iteration) {
    if (send_) {
      const std::uint64_t bytes = send_bytes(size), block = block_bytes(size);
      std::vector<std::uint8_t> data(bytes);
      if (op_.reduces) {
        for (std::uint64_t e = 0; e < elements(size); ++e)
          encode_element(options_.datatype, summand(e, size, iteration, me_), &data[e * element_bytes()]);
      } else {
        for (std::uint64_t start = 0; start < bytes; start += block)
          write_pattern(&data[start], std::min(block, bytes - start), 0, size, iteration,
                        send_stream(static_cast<int>(start / block)));
      }
      send_->buffer().write(data.data(), bytes);
    }
    if (recv_) recv_->buffer().fill_zero();
  }

  // Wrong bytes of what this rank received, read back from the benchmark's
  // buffer (a device buffer through a copy of its own).
  std::uint64_t check(std::uint64_t size, int iteration) const {
    if (!recv_) return 0;
    const std::uint64_t bytes = recv_bytes(size);
    std::vector<std::uint8_t> data(bytes);
    recv_->buffer().read(data.data(), bytes);
    std::uint64_t errors = 0;
    if (op_.reduces) {
      const int width = element_bytes();
      const std::uint64_t first = receives_share() ? block_start(size, me_) : 0;
      std::uint8_t expected[sizeof(double)];
      for (std::uint64_t e = 0; e < bytes / width; ++e) {
        std::uint64_t sum = 0;
        for (int r = 0; r < ranks_; ++r) sum += summand(first + e, size, iteration, r);
        encode_element(options_.datatype, sum, expected);
        if (!std::equal(expected, expected + width, data.begin() + e * width)) errors += width;
      }
    } else {
      const std::uint64_t block = block_bytes(size);
      for (std::uint64_t start = 0; start < bytes; start += block)
        errors += pattern_errors(&data[start], std::min(block, bytes - start), 0, size, iteration,
                                 recv_stream(static_cast<int>(start / block)));
    }
    return errors;
  }

  // Whether this rank receives its Share of the vector rather than all of it.
  bool receives_share() const { return (root() ? op_.recv.root : op_.recv.other) == Blocks::Share; }

  // Every rank's block of a message of `size`, in elements, and where each
  // starts (CallArgs' counts and displacements).
  struct RankBlocks {
    std::vector<int> counts, displacements;
  };
  RankBlocks rank_blocks(std::uint64_t size) const {
    RankBlocks blocks;
    int start = 0;
    for (int r = 0; r < ranks_; ++r) {
      const int count = static_cast<int>(shares(op_) ? block_of(size, r) : elements(size));
      blocks.counts.push_back(count);
      blocks.displacements.push_back(start);
      start += count;  // at most elements(size) * ranks_, which check_size holds within an int
    }
    return blocks;
  }

  void call(std::uint64_t size, const RankBlocks& blocks) {
    CallArgs args;
    args.send = send_ ? send_->mpi_data() : nullptr;
    args.recv = recv_ ? recv_->mpi_data() : nullptr;
    args.count = static_cast<int>(elements(size));
    args.type = mpi_datatype(options_.datatype);
    args.root = root_;
    args.at_root = root();
    args.counts = blocks.counts.data();
    args.displacements = blocks.displacements.data();
    args.comm = comm_.raw();
    comm_.check(op_.call(args), op_.mpi_call.c_str(), "timing a collective");
  }

  CollectiveTiming measure(std::uint64_t size) {
    const int iterations = options_.counts.timed(size), warmup = options_.counts.untimed(size);
    const std::uint64_t in = send_bytes(size), out = recv_bytes(size);
    std::vector<double> times(static_cast<std::size_t>(iterations), 0.0);
    double staging = 0;
    std::uint64_t errors = 0;
    const bool staged = (send_ && send_->staged()) || (recv_ && recv_->staged());
    const RankBlocks blocks = rank_blocks(size);
    comm_.barrier();
    for (int i = 0; i < warmup + iterations; ++i) {
      check_interrupt();
      if (options_.validation) {
        prepare(size, i);
        // OMB's -u: untimed calls first; they leave the same result, so the check still holds.
        for (int j = 0; j < options_.validation_warmup; ++j) {
          comm_.barrier();
          call(size, blocks);
        }
        comm_.barrier();
      }
      double start, stop;
      if (staged) {
        start = MPI_Wtime();
        if (send_) send_->to_host(in);
        const double staged_in = MPI_Wtime();
        call(size, blocks);
        const double called = MPI_Wtime();
        if (recv_) recv_->to_device(out);
        stop = MPI_Wtime();
        if (i >= warmup) staging += (staged_in - start) + (stop - called);
      } else {  // host buffers: nothing but the MPI call between the clock reads
        start = MPI_Wtime();
        call(size, blocks);
        stop = MPI_Wtime();
      }
      comm_.barrier();  // OMB: outside the timed region
      if (fault_ && recv_) (*fault_)(recv_->buffer(), 0, out);
      if (i >= warmup) times[i - warmup] = stop - start;
      if (options_.validation) errors += check(size, i);
    }
    CollectiveTiming timing;
    timing.size = size;
    timing.iterations = iterations;
    timing.samples = comm_.sum(times);
    for (double& t : timing.samples) t /= ranks_;
    std::vector<double> mine(static_cast<std::size_t>(ranks_), 0.0);
    mine[me_] = std::accumulate(times.begin(), times.end(), 0.0) / iterations;
    timing.rank_means = comm_.sum(mine);
    timing.staging = comm_.sum(std::vector<double>{staging / iterations})[0] / ranks_;
    timing.errors = comm_.sum(errors);
    return timing;
  }

  const Communicator& comm_;
  const ReceiveFault* fault_ = receive_fault(comm_);  // tests only (comm/receive_fault.hpp)
  DeviceOps* device_;
  const CollectiveOptions& options_;
  const SizeHook<CollectiveTiming>& on_size_;
  const Collective& op_;
  int ranks_, me_;
  int root_;  // options.root, or rank 0
  std::unique_ptr<StagedBuffer> send_, recv_;
};

}  // namespace

void CollectiveOptions::validate() const {
  const Collective& known = collective(op);
  if (root && !known.rooted)
    throw UsageError("osu " + op + " has no root; --root applies to " + choice_list(rooted_collective_ops()));
  counts.validate();
  validate_validation_warmup(validation_warmup);
  if (moves_data(known) && sizes.empty()) throw UsageError("no message sizes to run");
  if (moves_data(known)) require_an_element(sizes, datatype);
}

CollectiveRun run_collective(const Communicator& comm, DeviceOps* device, const CollectiveOptions& options,
                             const SizeHook<CollectiveTiming>& on_size) {
  return run_agreed<Runner>(comm, device, options, on_size);
}

}  // namespace fpgacomm
