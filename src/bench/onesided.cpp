#include "bench/onesided.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>

#include "bench/agreed_run.hpp"
#include "bench/host_memory.hpp"
#include "bench/pattern.hpp"
#include "bench/staged_buffer.hpp"
#include "comm/receive_fault.hpp"
#include "comm/transfer.hpp"
#include "core/c_text.hpp"
#include "core/choices.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/launch_hint.hpp"

namespace fpgacomm {
namespace {

enum class Shape { Latency, Bandwidth, BiBandwidth };
enum class Sync { Lock, Flush, FlushLocal, LockAll, Pscw, Fence };
enum class Creation { Create, Allocate, Dynamic };

struct TestSpec {
  bool put;
  Shape shape;
};

struct NamedTest {
  const char* name;
  TestSpec spec;
};

// In OSU Micro-Benchmarks' order.
constexpr NamedTest kTests[] = {{"put_latency", {true, Shape::Latency}},
                                {"get_latency", {false, Shape::Latency}},
                                {"put_bw", {true, Shape::Bandwidth}},
                                {"get_bw", {false, Shape::Bandwidth}},
                                {"put_bibw", {true, Shape::BiBandwidth}}};

// OMB's default (flush) first, then OMB's other passive and active target
// synchronisations.
constexpr std::pair<const char*, Sync> kSyncs[] = {
    {"flush", Sync::Flush},      {"lock", Sync::Lock}, {"flush_local", Sync::FlushLocal},
    {"lock_all", Sync::LockAll}, {"pscw", Sync::Pscw}, {"fence", Sync::Fence}};

// OMB's default (MPI_Win_allocate) first.
constexpr std::pair<const char*, Creation> kCreations[] = {
    {"allocate", Creation::Allocate}, {"create", Creation::Create}, {"dynamic", Creation::Dynamic}};

TestSpec spec_of(const std::string& test) {
  for (const NamedTest& known : kTests)
    if (test == known.name) return known.spec;
  throw UsageError("unknown one-sided test '" + test + "'; choose " + choice_list(onesided_tests()));
}

Sync sync_of(const std::string& name) {
  for (const auto& [known, sync] : kSyncs)
    if (name == known) return sync;
  throw UsageError("unknown synchronisation '" + name + "'; choose " + choice_list(onesided_syncs()) + " (-s)");
}

Creation creation_of(const std::string& name) {
  for (const auto& [known, creation] : kCreations)
    if (name == known) return creation;
  throw UsageError("unknown window creation '" + name + "'; choose " + choice_list(window_creations()) + " (-w)");
}

// Active target: both ranks call the synchronisation (fence; post, start,
// complete, wait). Passive target: the origin alone (lock, flush, ...).
bool active_target(Sync sync) { return sync == Sync::Pscw || sync == Sync::Fence; }

// One timed iteration: OMB's calls in OMB's order per test and
// synchronisation. Built once per size from plain copies of what it needs,
// so that the timed loop keeps them in registers (a Runner's members would
// be reloaded after every MPI call, which may write any memory the Runner
// can be reached through).
struct Iteration {
  const Communicator* comm;
  Shape shape;
  Sync sync;
  bool put;
  bool both_issue;  // both ranks operate: put_bibw and the latency ping-pongs
  int me, peer;
  int slots;  // operations per iteration, each at its own offset
  std::uint64_t size;
  std::uint8_t* origin;  // the local buffer as MPI reads or writes it
  StagedBuffer* staged;  // the local buffer of a device kind, else null
  MPI_Aint peer_base;    // where the peer's window starts: its address with -w dynamic, else 0
  MPI_Win window;
  MPI_Group peer_group;  // post and start name the peer

  // The success test inline, as OMB's MPI_CHECK; the failure's message out of line.
  void check(int code, const char* routine) const {
    if (code != MPI_SUCCESS) comm->check(code, routine, "in a one-sided test");
  }
  void lock_peer() const { check(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, window), "MPI_Win_lock"); }
  void unlock_peer() const { check(MPI_Win_unlock(peer, window), "MPI_Win_unlock"); }
  void flush() const { check(MPI_Win_flush(peer, window), "MPI_Win_flush"); }
  void fence() const { check(MPI_Win_fence(0, window), "MPI_Win_fence"); }
  void post() const { check(MPI_Win_post(peer_group, 0, window), "MPI_Win_post"); }
  void start() const { check(MPI_Win_start(peer_group, 0, window), "MPI_Win_start"); }
  void complete() const { check(MPI_Win_complete(window), "MPI_Win_complete"); }
  void wait() const { check(MPI_Win_wait(window), "MPI_Win_wait"); }

  // The operations: slot j of the local buffer with slot j of the peer's
  // window (offset j * size on both sides, as OMB). Device data reaches the
  // host mirror before PUTs read it; returns the seconds that took.
  [[gnu::always_inline]] double operations() const {
    double staging = 0;
    if (put && staged) {
      const double start = MPI_Wtime();
      staged->to_host(size * slots);
      staging = MPI_Wtime() - start;
    }
    const int count = static_cast<int>(size);
    for (int slot = 0; slot < slots; ++slot) {
      const std::uint64_t offset = slot * size;
      const MPI_Aint displacement = peer_base + static_cast<MPI_Aint>(offset);
      if (put)
        check(MPI_Put(origin + offset, count, MPI_CHAR, peer, displacement, count, MPI_CHAR, window), "MPI_Put");
      else
        check(MPI_Get(origin + offset, count, MPI_CHAR, peer, displacement, count, MPI_CHAR, window), "MPI_Get");
    }
    return staging;
  }

  // GETs' data goes back to the device once they completed; seconds taken.
  [[gnu::always_inline]] double landed() const {
    if (put || !staged) return 0.0;
    const double start = MPI_Wtime();
    staged->to_device(size * slots);
    return MPI_Wtime() - start;
  }

  // Returns this rank's staging seconds. Inlined, like everything it calls
  // but MPI, into the timed loop, so that little stands between the MPI
  // calls (docs/METHODS.md: about 70 instructions per iteration more than
  // OMB's loop, a few nanoseconds).
  [[gnu::always_inline]] double operator()() const {
    if (shape == Shape::BiBandwidth) {  // both ranks, PUT: nothing lands locally
      double staging = 0;
      if (sync == Sync::Fence) {
        fence(), staging = operations(), fence();
      } else {
        post(), start(), staging = operations(), complete(), wait();
      }
      return staging;
    }
    if (both_issue) {  // latency ping-pong: rank 0 operates on rank 1, then rank 1 on rank 0
      double staging = 0;
      if (sync == Sync::Fence) {
        if (me == 0)
          fence(), staging = operations(), fence(), staging += landed(), fence();
        else
          fence(), fence(), staging = operations(), fence(), staging += landed();
      } else if (me == 0) {
        start(), staging = operations(), complete(), staging += landed(), post(), wait();
      } else {
        post(), wait(), start(), staging = operations(), complete(), staging += landed();
      }
      return staging;
    }
    if (me == 1) {  // the target: its part of an active-target epoch, else nothing
      if (sync == Sync::Fence) fence(), fence();
      if (sync == Sync::Pscw) post(), wait();
      return 0.0;
    }
    double staging = 0;
    switch (sync) {
      case Sync::Lock:
        lock_peer(), staging = operations(), unlock_peer();
        break;
      case Sync::LockAll:
        check(MPI_Win_lock_all(0, window), "MPI_Win_lock_all");
        staging = operations();
        check(MPI_Win_unlock_all(window), "MPI_Win_unlock_all");
        break;
      case Sync::Flush:
        staging = operations(), flush();
        break;
      case Sync::FlushLocal:
        staging = operations();
        check(MPI_Win_flush_local(peer, window), "MPI_Win_flush_local");
        break;
      case Sync::Fence:
        fence(), staging = operations(), fence();
        break;
      case Sync::Pscw:
        start(), staging = operations(), complete();
        break;
    }
    return staging + landed();
  }
};

class Runner {
 public:
  Runner(const Communicator& comm, Device* device, const OneSidedOptions& options,
         const SizeHook<OneSidedTiming>& on_size)
      : comm_(comm),
        device_(device),
        options_(options),
        on_size_(on_size),
        spec_(spec_of(options.test)),
        sync_(sync_of(options.sync_or_default())),
        creation_(creation_of(options.window_creation)),
        me_(comm.rank()),
        peer_(1 - comm.rank()),
        slots_(spec_.shape == Shape::Latency ? 1 : options.window) {
    options.validate();
    if (comm.size() != 2)
      throw UsageError("osu " + options.test + " needs exactly 2 ranks, and this run has " +
                       std::to_string(comm.size()) + "; " + run_it_with("2"));
    check_host_memory(comm, host_memory(), "osu " + options.test,
                      "give a smaller window (-W), smaller messages (-m) or fewer iterations (-i)");
  }

  ~Runner() {  // cleanup: never throws
    // MPI_Win_free is collective: after an interrupt the peer may never
    // come, and the run is ending anyway (the front end aborts the job).
    if (window_ != MPI_WIN_NULL && !pending_interrupt.load()) MPI_Win_free(&window_);
    if (peer_group_ != MPI_GROUP_NULL) MPI_Group_free(&peer_group_);
  }

  OneSidedRun run() {
    MPI_Group everyone = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(comm_.raw(), &everyone), "MPI_Comm_group");
    const int code = MPI_Group_incl(everyone, 1, &peer_, &peer_group_);
    MPI_Group_free(&everyone);
    check_mpi(code, "MPI_Group_incl");
    OneSidedRun result;
    result.sync = options_.sync_or_default();
    result.route = route_name(StagedBuffer::route_for(options_.kind));
    for (std::uint64_t size : options_.sizes) {
      result.sizes.push_back(measure(size));
      if (on_size_) on_size_(result.sizes.back());
      if (result.sizes.back().errors > 0) break;  // as OMB: a failing size ends the sweep
    }
    return result;
  }

 private:
  // Both ranks issue operations: the ping-pong of the latency tests with
  // active target (OMB's), and the bidirectional bandwidth. Otherwise rank 0 alone.
  bool both_issue() const {
    return spec_.shape == Shape::BiBandwidth || (spec_.shape == Shape::Latency && active_target(sync_));
  }
  bool issues() const { return me_ == 0 || both_issue(); }
  // Where data lands: the target's window for PUT, the origin's local buffer for GET.
  bool receives() const { return spec_.put ? (me_ == 1 || both_issue()) : issues(); }
  // flush and flush_local hold one lock on the peer for a whole size (OMB's).
  bool lock_per_size() const { return sync_ == Sync::Flush || sync_ == Sync::FlushLocal; }

  // This rank's host memory at the largest size (docs/METHODS.md, "Host
  // memory of a run"): a local buffer (or its pinned mirror) and window
  // memory of W messages each, and with -c two more for the patterns.
  // Operations cost no memory of their own (measured: osc/rdma on shared
  // memory, 30000 puts in flight).
  HostMemory host_memory() const {
    const double largest = double(*std::max_element(options_.sizes.begin(), options_.sizes.end())) * slots_;
    HostMemory memory;
    memory.buffers = (options_.validation ? 4.0 : 2.0) * largest;
    memory.samples = timed_samples(options_.counts, options_.sizes);
    return memory;
  }

  void check_mpi(int code, const char* routine) const { comm_.check(code, routine, "in a one-sided test"); }

  // Window creation, where the library may refuse. Open MPI 4.1 makes
  // windows with osc/sm inside one node and otherwise with osc/rdma, which
  // needs a transport with RDMA: shared memory without single copy
  // (btl_vader_single_copy_mechanism=none) has none for memory MPI did not
  // allocate, and TCP between hosts has none at all. Its osc/pt2pt works
  // over any transport, but Debian's openmpi-mca-params.conf turns it off.
  // Said once, agreed, instead of an MPI error on every rank.
  void check_window(int code, const char* routine) const {
    std::exception_ptr failure;
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(code, text, &length);
      const bool user_memory = creation_ != Creation::Allocate;
      failure = std::make_exception_ptr(UsageError(
          "this MPI library cannot create a window" + std::string(user_memory ? " over user memory" : "") + " (" +
          std::string(routine) + ": " + c_text(text, static_cast<std::size_t>(length)) + "); " +
          (user_memory ? "use -w allocate, or give it a transport with RDMA" : "give it a one-sided transport") +
          " (Open MPI between hosts over TCP: mpirun --mca osc pt2pt; on one node: "
          "OMPI_MCA_btl_vader_single_copy_mechanism=cma; or UCX)"));
    }
    comm_.agree(failure);
  }

  // The buffers of one size, `bytes` on every rank, made anew per size as
  // OMB does: the local buffer (zeroed, so its pages exist and, as after
  // OMB's memset, the small ones sit in cache) and the window, either
  // MPI_Win_allocate's own memory or a page-aligned host Buffer given to
  // MPI_Win_create or attached to a dynamic window, whose base address the
  // ranks then exchange.
  void allocate_buffers(std::uint64_t bytes) {
    std::exception_ptr failure;
    try {
      local_ = std::make_unique<StagedBuffer>(device_, options_.kind, bytes, options_.bank);
      if (creation_ != Creation::Allocate) target_ = std::make_unique<Buffer>(nullptr, MemKind::Host, bytes);
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure);
    const auto length = static_cast<MPI_Aint>(bytes);
    if (creation_ == Creation::Allocate) {
      check_window(MPI_Win_allocate(length, 1, MPI_INFO_NULL, comm_.raw(), &window_memory_, &window_),
                   "MPI_Win_allocate");
      return;
    }
    window_memory_ = target_->host_data();
    if (creation_ == Creation::Create) {
      check_window(MPI_Win_create(window_memory_, length, 1, MPI_INFO_NULL, comm_.raw(), &window_), "MPI_Win_create");
      return;
    }
    check_window(MPI_Win_create_dynamic(MPI_INFO_NULL, comm_.raw(), &window_), "MPI_Win_create_dynamic");
    check_window(MPI_Win_attach(window_, window_memory_, length), "MPI_Win_attach");
    MPI_Aint mine = 0;
    check_mpi(MPI_Get_address(window_memory_, &mine), "MPI_Get_address");
    check_mpi(
        MPI_Sendrecv(&mine, 1, MPI_AINT, peer_, 0, &peer_base_, 1, MPI_AINT, peer_, 0, comm_.raw(), MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  }

  void free_buffers() {
    if (creation_ == Creation::Dynamic) check_mpi(MPI_Win_detach(window_, window_memory_), "MPI_Win_detach");
    check_mpi(MPI_Win_free(&window_), "MPI_Win_free");
    target_.reset();
    local_.reset();
    window_memory_ = nullptr;
    peer_base_ = 0;
  }

  // Local loads and stores to this rank's own window, kept apart from the
  // peer's operations: inside a lock of our own (passive target) or
  // outside any epoch of the peer's (active target; the barriers of
  // prepare() and check() and the next synchronisation order them).
  void with_own_window(const std::function<void()>& access) {
    if (active_target(sync_)) return access();
    check_mpi(MPI_Win_lock(MPI_LOCK_SHARED, me_, 0, window_), "MPI_Win_lock");
    check_mpi(MPI_Win_sync(window_), "MPI_Win_sync");
    access();
    check_mpi(MPI_Win_sync(window_), "MPI_Win_sync");
    check_mpi(MPI_Win_unlock(me_, window_), "MPI_Win_unlock");
  }

  // Each slot of each rank has its own pattern stream, so a slot that
  // landed at another slot's offset, or not at all, fails.
  int stream(int rank, int slot) const { return rank * slots_ + slot; }

  // Every rank fills where data comes from (its local buffer for PUT, its
  // window for GET) with its own patterns, one per slot, and zeroes where
  // data lands.
  void prepare(std::uint64_t size, int iteration) {
    const std::uint64_t bytes = size * slots_;
    std::vector<std::uint8_t> pattern(bytes);
    for (int slot = 0; slot < slots_; ++slot)
      write_pattern(&pattern[slot * size], size, 0, size, iteration, stream(me_, slot));
    if (spec_.put) {
      local_->buffer().write(pattern.data(), bytes);
      with_own_window([&] { std::memset(window_memory_, 0, bytes); });
    } else {
      const std::vector<std::uint8_t> zeros(bytes, 0);
      local_->buffer().write(zeros.data(), bytes);
      with_own_window([&] { std::memcpy(window_memory_, pattern.data(), bytes); });
    }
    comm_.barrier();  // separates these stores from the peer's next operations
  }

  std::uint64_t count_errors(const std::uint8_t* data, std::uint64_t size, int iteration) const {
    std::uint64_t errors = 0;
    for (int slot = 0; slot < slots_; ++slot)
      errors += pattern_errors(&data[slot * size], size, 0, size, iteration, stream(peer_, slot));
    return errors;
  }

  // Wrong bytes in every slot where this rank received. A receive fault
  // (tests) sees each slot of every landing place that is a Buffer: the
  // local buffer, and the window's memory with -w create or dynamic.
  std::uint64_t check(const Iteration& operations, std::uint64_t size, int iteration) {
    // MPI_Win_flush_local completes PUTs at the origin only; completing them
    // at the target too is validation's business, outside the timed region.
    if (sync_ == Sync::FlushLocal && spec_.put && me_ == 0) operations.flush();
    comm_.barrier();  // the peer's synchronisation has completed its operations
    if (!receives()) return 0;
    const std::uint64_t bytes = size * slots_;
    std::uint64_t errors = 0;
    if (spec_.put) {
      with_own_window([&] {
        if (fault_ && target_)
          for (int slot = 0; slot < slots_; ++slot) (*fault_)(*target_, slot * size, size);
        errors = count_errors(window_memory_, size, iteration);
      });
    } else {
      if (fault_)
        for (int slot = 0; slot < slots_; ++slot) (*fault_)(local_->buffer(), slot * size, size);
      std::vector<std::uint8_t> data(bytes);
      local_->buffer().read(data.data(), bytes);
      errors = count_errors(data.data(), size, iteration);
    }
    return errors;
  }

  // This size's iteration, over the buffers allocate_buffers() made.
  Iteration iteration_for(std::uint64_t size) {
    Iteration iteration;
    iteration.comm = &comm_;
    iteration.shape = spec_.shape;
    iteration.sync = sync_;
    iteration.put = spec_.put;
    iteration.both_issue = both_issue();
    iteration.me = me_;
    iteration.peer = peer_;
    iteration.slots = slots_;
    iteration.size = size;
    iteration.origin = local_->mpi_data();
    iteration.staged = local_->staged() ? local_.get() : nullptr;
    iteration.peer_base = peer_base_;
    iteration.window = window_;
    iteration.peer_group = peer_group_;
    return iteration;
  }

  OneSidedTiming measure(std::uint64_t size) {
    const int iterations = options_.counts.timed(size), warmup = options_.counts.untimed(size);
    std::vector<double> times(static_cast<std::size_t>(iterations), 0.0);
    double staging = 0;
    std::uint64_t errors = 0;
    allocate_buffers(size * slots_);
    const Iteration iteration = iteration_for(size);
    const bool validate = options_.validation, keeps_time = me_ == 0;
    comm_.barrier();
    if (lock_per_size() && keeps_time) iteration.lock_peer();
    double first_start = 0, last_stop = 0;
    for (int i = 0; i < warmup + iterations; ++i) {
      check_interrupt();
      if (validate) prepare(size, i);
      const double start = MPI_Wtime();
      const double staged = iteration();
      const double stop = MPI_Wtime();
      if (i >= warmup && keeps_time) {
        times[i - warmup] = stop - start;
        staging += staged;
        if (i == warmup) first_start = start;
        last_stop = stop;
      }
      if (validate) errors += check(iteration, size, i);
    }
    if (lock_per_size() && keeps_time) iteration.unlock_peer();
    comm_.barrier();
    free_buffers();

    // Rank 0 keeps time; rank 1 adds zeros. The total is OMB's: the span of
    // the timed loop, which holds the two clock reads per iteration that
    // OMB's loop also makes for its per-iteration samples. With validation
    // between the iterations it is their sum instead, validation left out.
    times = comm_.sum(times);
    double total = comm_.sum(std::vector<double>{last_stop - first_start})[0];
    if (options_.validation) {
      total = 0;
      for (double t : times) total += t;
    }
    OneSidedTiming timing;
    timing.size = size;
    timing.iterations = iterations;
    timing.errors = comm_.sum(errors);
    timing.staging_share = comm_.sum(std::vector<double>{staging})[0] / total;
    if (spec_.shape == Shape::Latency) {
      // The ping-pong holds two operations one after the other.
      const double per = both_issue() ? 2.0 : 1.0;
      timing.value = total / (per * iterations);
      for (double t : times) timing.samples.push_back(t / per);
    } else {
      const double bytes = static_cast<double>(size) * slots_ * (spec_.shape == Shape::BiBandwidth ? 2.0 : 1.0);
      timing.value = bytes * iterations / total;
      for (double t : times) timing.samples.push_back(bytes / t);
    }
    return timing;
  }

  const Communicator& comm_;
  const ReceiveFault* fault_ = receive_fault(comm_);  // tests only (comm/receive_fault.hpp)
  Device* device_;
  const OneSidedOptions& options_;
  const SizeHook<OneSidedTiming>& on_size_;
  TestSpec spec_;
  Sync sync_;
  Creation creation_;
  int me_, peer_;
  int slots_;  // operations per iteration, each at its own offset: W in the bandwidth tests, else 1
  MPI_Group peer_group_ = MPI_GROUP_NULL;
  std::unique_ptr<StagedBuffer> local_;  // this size's local (origin) buffer
  std::unique_ptr<Buffer> target_;       // this size's window memory with -w create or dynamic
  std::uint8_t* window_memory_ = nullptr;
  MPI_Aint peer_base_ = 0;
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace

std::vector<std::string> onesided_tests() {
  std::vector<std::string> names;
  for (const NamedTest& known : kTests) names.push_back(known.name);
  return names;
}

std::vector<std::string> onesided_syncs() {
  std::vector<std::string> names;
  for (const auto& [name, sync] : kSyncs) names.push_back(name);
  return names;
}

std::vector<std::string> onesided_test_syncs(const std::string& test) {
  const bool both_put = spec_of(test).shape == Shape::BiBandwidth;
  std::vector<std::string> names;
  for (const auto& [name, sync] : kSyncs)
    if (!both_put || active_target(sync)) names.push_back(name);
  return names;
}

std::vector<std::string> window_creations() {
  std::vector<std::string> names;
  for (const auto& [name, creation] : kCreations) names.push_back(name);
  return names;
}

std::string OneSidedOptions::sync_or_default() const { return sync.empty() ? onesided_test_syncs(test).front() : sync; }

void OneSidedOptions::validate() const {
  spec_of(test);
  creation_of(window_creation);
  const std::string chosen = sync_or_default();
  sync_of(chosen);
  const std::vector<std::string> choices = onesided_test_syncs(test);
  if (std::find(choices.begin(), choices.end(), chosen) == choices.end()) {
    std::string alternatives;
    for (const std::string& name : choices) alternatives += (alternatives.empty() ? "" : " or ") + name;
    throw UsageError("osu " + test + " takes -s " + alternatives + " (both ranks put at once), as OMB, not -s " +
                     chosen);
  }
  if (window < 1) throw UsageError("window size must be at least 1, got " + std::to_string(window));
  counts.validate();
  if (sizes.empty()) throw UsageError("no message sizes to run");
  for (std::uint64_t size : sizes)
    if (size > static_cast<std::uint64_t>(INT_MAX))
      throw UsageError(std::to_string(size) + " bytes is more than an MPI count can hold; use smaller messages (-m)");
}

OneSidedRun run_onesided(const Communicator& comm, Device* device, const OneSidedOptions& options,
                         const SizeHook<OneSidedTiming>& on_size) {
  return run_agreed<Runner>(comm, device, options, on_size);
}

}  // namespace fpgacomm
