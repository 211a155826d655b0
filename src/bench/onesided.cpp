#include "bench/onesided.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>

#include "bench/agreed_run.hpp"
#include "bench/pt2pt.hpp"
#include "bench/staged_buffer.hpp"
#include "comm/transfer.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

enum class Shape { Latency, Bandwidth, BiBandwidth };
enum class Sync { Flush, Lock, Fence };

struct TestSpec {
  bool put;
  Shape shape;
};

TestSpec spec_of(const std::string& test) {
  if (test == "put_latency") return {true, Shape::Latency};
  if (test == "get_latency") return {false, Shape::Latency};
  if (test == "put_bw") return {true, Shape::Bandwidth};
  if (test == "get_bw") return {false, Shape::Bandwidth};
  if (test == "put_bibw") return {true, Shape::BiBandwidth};
  throw UsageError("unknown one-sided test '" + test + "'; choose put_latency, get_latency, put_bw, get_bw or put_bibw");
}

Sync sync_of(const std::string& name) {
  if (name == "flush") return Sync::Flush;
  if (name == "lock") return Sync::Lock;
  if (name == "fence") return Sync::Fence;
  throw UsageError("unknown synchronisation '" + name + "'; choose flush, lock or fence (-s)");
}

class Runner {
 public:
  Runner(const Communicator& comm, Device* device, const OneSidedOptions& options)
      : comm_(comm), device_(device), options_(options), spec_(spec_of(options.test)), sync_(sync_of(options.sync)),
        me_(comm.rank()), peer_(1 - comm.rank()) {
    if (comm.size() != 2)
      throw UsageError("osu " + options.test + " needs exactly 2 ranks, and this run has " +
                       std::to_string(comm.size()) + "; run it with mpirun -np 2");
    if (options.window_creation != "create" && options.window_creation != "allocate")
      throw UsageError("unknown window creation '" + options.window_creation + "'; choose create or allocate (-w)");
    if (spec_.shape == Shape::BiBandwidth && sync_ != Sync::Fence)
      throw UsageError("osu put_bibw synchronises both ranks at once and supports only fence, as OMB; use -s fence");
    if (options.window < 1) throw UsageError("window size -W must be at least 1");
    options.counts.check();
    if (options.sizes.empty()) throw UsageError("no message sizes to run");
    for (std::uint64_t size : options.sizes)
      if (size > static_cast<std::uint64_t>(INT_MAX))
        throw UsageError(std::to_string(size) + " bytes is more than an MPI count can hold; use smaller messages (-m)");
  }

  ~Runner() {
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);  // cleanup: never throws
  }

  // Some MPI builds can only put into memory they allocated: Open MPI 4.1's
  // osc/rdma needs a transport with RDMA, and shared memory without single
  // copy (btl_vader_single_copy_mechanism=none) has none. Say so once, agreed.
  void create_window(std::uint64_t bytes) {
    const int code = MPI_Win_create(window_memory_, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm_.raw(),
                                    &window_);
    std::exception_ptr failure;
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(code, text, &length);
      failure = std::make_exception_ptr(UsageError(
          "this MPI library cannot create a window over user memory (MPI_Win_create: " + std::string(text, length) +
          "); use -w allocate, or give it a transport with RDMA (Open MPI on one node: "
          "OMPI_MCA_btl_vader_single_copy_mechanism=cma, or UCX)"));
    }
    comm_.agree(failure);
  }

  OneSidedRun run() {
    const std::uint64_t largest = *std::max_element(options_.sizes.begin(), options_.sizes.end());
    std::exception_ptr failure;
    try {
      local_ = std::make_unique<StagedBuffer>(device_, options_.kind, largest, options_.bank);
      if (options_.window_creation == "create") target_ = std::make_unique<Buffer>(nullptr, MemKind::Host, largest);
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure);
    if (target_) {
      window_memory_ = target_->host_data();
      create_window(largest);
    } else {
      comm_.check(MPI_Win_allocate(static_cast<MPI_Aint>(largest), 1, MPI_INFO_NULL, comm_.raw(), &window_memory_,
                                   &window_),
                  "MPI_Win_allocate", "allocating the window");
    }
    OneSidedRun result;
    for (std::uint64_t size : options_.sizes) {
      result.sizes.push_back(measure(size));
      if (result.sizes.back().errors > 0) break;  // as OMB: a failing size ends the sweep
    }
    return result;
  }

 private:
  // Both ranks issue operations: the fence ping-pong of the latency tests
  // (OMB's) and the bidirectional bandwidth. Otherwise rank 0 alone.
  bool both_issue() const { return sync_ == Sync::Fence && spec_.shape != Shape::Bandwidth; }
  bool issues() const { return me_ == 0 || both_issue(); }
  // Where data lands: the target's window for PUT, the origin's local buffer for GET.
  bool receives() const { return spec_.put ? (me_ == 1 || both_issue()) : issues(); }

  void check_mpi(int code, const char* routine) const { comm_.check(code, routine, "in a one-sided test"); }
  void fence() { check_mpi(MPI_Win_fence(0, window_), "MPI_Win_fence"); }

  // Local loads and stores to this rank's own window, kept apart from the
  // peer's operations: inside a lock of our own (passive target) or
  // between fences (active target; the caller fences afterwards).
  void with_own_window(const std::function<void()>& access) {
    if (sync_ == Sync::Fence) return access();
    check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, me_, 0, window_), "MPI_Win_lock");
    check_mpi(MPI_Win_sync(window_), "MPI_Win_sync");
    access();
    check_mpi(MPI_Win_sync(window_), "MPI_Win_sync");
    check_mpi(MPI_Win_unlock(me_, window_), "MPI_Win_unlock");
  }

  // Every rank fills where data comes from with its own pattern (stream =
  // its rank) and zeroes where data lands.
  void prepare(std::uint64_t size, int iteration) {
    std::vector<std::uint8_t> pattern(size);
    for (std::uint64_t i = 0; i < size; ++i) pattern[i] = pattern_byte(i, size, iteration, me_);
    if (spec_.put) {
      local_->buffer().write(pattern.data(), size);
      with_own_window([&] { std::memset(window_memory_, 0, size); });
    } else {
      local_->buffer().fill_zero();
      with_own_window([&] { std::memcpy(window_memory_, pattern.data(), size); });
    }
    // Separates these stores from the peer's next operations.
    if (sync_ == Sync::Fence) fence(); else comm_.barrier();
  }

  std::uint64_t count_errors(const std::uint8_t* data, std::uint64_t size, int iteration) const {
    std::uint64_t errors = 0;
    for (std::uint64_t i = 0; i < size; ++i) errors += data[i] != pattern_byte(i, size, iteration, peer_);
    return errors;
  }

  // Wrong bytes where this rank received; the receive hook (tests) sees
  // every landing place that is a Buffer: the local buffer, and the window
  // made with -w create.
  std::uint64_t check(std::uint64_t size, int iteration) {
    comm_.barrier();  // the peer's synchronisation has completed its operations
    if (!receives()) return 0;
    std::uint64_t errors = 0;
    if (spec_.put) {
      with_own_window([&] {
        if (target_) run_receive_hook(*target_, 0, size);
        errors = count_errors(window_memory_, size, iteration);
      });
    } else {
      run_receive_hook(local_->buffer(), 0, size);
      std::vector<std::uint8_t> data(size);
      local_->buffer().read(data.data(), size);
      errors = count_errors(data.data(), size, iteration);
    }
    return errors;
  }

  // One PUT or GET of `size` bytes with the peer's window at offset 0.
  void operate(std::uint64_t size) {
    const int count = static_cast<int>(size);
    if (spec_.put)
      check_mpi(MPI_Put(local_->mpi_data(), count, MPI_CHAR, peer_, 0, count, MPI_CHAR, window_), "MPI_Put");
    else
      check_mpi(MPI_Get(local_->mpi_data(), count, MPI_CHAR, peer_, 0, count, MPI_CHAR, window_), "MPI_Get");
  }

  // The operations of one iteration and their staging: device data goes to
  // the host mirror before a PUT and comes back after a GET completed.
  // Returns the seconds spent staging.
  double issue(std::uint64_t size, int operations) {
    if (!local_->staged()) {  // host buffers: no clock reads beyond the caller's
      for (int j = 0; j < operations; ++j) operate(size);
      complete();
      return 0.0;
    }
    const double start = MPI_Wtime();
    if (spec_.put) local_->to_host(size);
    const double staged = MPI_Wtime();
    for (int j = 0; j < operations; ++j) operate(size);
    complete();
    const double synced = MPI_Wtime();
    if (!spec_.put) local_->to_device(size);
    return (staged - start) + (MPI_Wtime() - synced);
  }

  // Completes the issued operations as the synchronisation mode says.
  void complete() {
    switch (sync_) {
      case Sync::Flush: return check_mpi(MPI_Win_flush(peer_, window_), "MPI_Win_flush");
      case Sync::Lock: return check_mpi(MPI_Win_unlock(peer_, window_), "MPI_Win_unlock");
      case Sync::Fence: return fence();
    }
  }

  // One timed iteration; returns this rank's staging seconds.
  double iteration(std::uint64_t size) {
    const int operations = spec_.shape == Shape::Latency ? 1 : options_.window;
    if (sync_ == Sync::Lock && issues()) check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, window_), "MPI_Win_lock");
    if (sync_ != Sync::Fence) return issues() ? issue(size, operations) : 0.0;
    if (spec_.shape == Shape::Latency) {
      // OMB's fence ping-pong: rank 0 operates, then rank 1, one fence apart.
      double staging = 0;
      if (me_ == 0) staging = issue(size, 1), fence();
      else fence(), staging = issue(size, 1);
      return staging;
    }
    if (issues()) return issue(size, operations);
    fence();  // rank 1 of put_bw and get_bw: the target's half of the epoch
    return 0.0;
  }

  OneSidedTiming measure(std::uint64_t size) {
    const int iterations = options_.counts.timed(size), warmup = options_.counts.untimed(size);
    std::vector<double> times(static_cast<std::size_t>(iterations), 0.0);
    double staging = 0;
    std::uint64_t errors = 0;
    if (sync_ == Sync::Flush && me_ == 0) check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, window_), "MPI_Win_lock");
    comm_.barrier();
    if (sync_ == Sync::Fence) fence();  // opens the first epoch
    for (int i = 0; i < warmup + iterations; ++i) {
      if (options_.validate) prepare(size, i);
      const double start = MPI_Wtime();
      const double staged = iteration(size);
      const double stop = MPI_Wtime();
      if (i >= warmup && me_ == 0) {
        times[i - warmup] = stop - start;
        staging += staged;
      }
      if (options_.validate) errors += check(size, i);
    }
    if (sync_ == Sync::Flush && me_ == 0) check_mpi(MPI_Win_unlock(peer_, window_), "MPI_Win_unlock");
    if (sync_ == Sync::Fence) check_mpi(MPI_Win_fence(MPI_MODE_NOSUCCEED, window_), "MPI_Win_fence");
    comm_.barrier();

    // Rank 0 keeps time; rank 1 adds zeros.
    times = comm_.sum(times);
    double total = 0;
    for (double t : times) total += t;
    OneSidedTiming timing;
    timing.size = size;
    timing.iterations = iterations;
    timing.errors = comm_.sum(errors);
    timing.staging_share = comm_.sum(std::vector<double>{staging})[0] / total;
    if (spec_.shape == Shape::Latency) {
      // The fence ping-pong holds two operations one after the other.
      const double per = sync_ == Sync::Fence ? 2.0 : 1.0;
      timing.value = total / (per * iterations);
      for (double t : times) timing.samples.push_back(t / per);
    } else {
      const double bytes =
          static_cast<double>(size) * options_.window * (spec_.shape == Shape::BiBandwidth ? 2.0 : 1.0);
      timing.value = bytes * iterations / total;
      for (double t : times) timing.samples.push_back(bytes / t);
    }
    return timing;
  }

  const Communicator& comm_;
  Device* device_;
  const OneSidedOptions& options_;
  TestSpec spec_;
  Sync sync_;
  int me_, peer_;
  std::unique_ptr<StagedBuffer> local_;
  std::unique_ptr<Buffer> target_;  // the window's memory with -w create
  std::uint8_t* window_memory_ = nullptr;
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace

OneSidedRun run_onesided(const Communicator& comm, Device* device, const OneSidedOptions& options) {
  return run_agreed<Runner>(comm, device, options);
}

}  // namespace fpgacomm
