#include "bench/pt2pt.hpp"

#include <algorithm>
#include <memory>

#include "bench/agreed_run.hpp"
#include "bench/host_memory.hpp"
#include "bench/pattern.hpp"
#include "comm/receive_fault.hpp"
#include "core/choices.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/launch_hint.hpp"

namespace fpgacomm {
namespace {

constexpr int kDataTag = 100, kAckTag = 101;  // OMB's tags
// Validation fills and checks big messages piecewise, so it never holds
// another message-sized copy in memory.
constexpr std::uint64_t kValidationPiece = std::uint64_t(16) << 20;
// Streams of the reply in a ping-pong and of the second half in bibw, so a
// buffer that still holds its own outgoing data cannot pass.
constexpr int kReplyStream = 1000;

enum class Shape { PingPong, Window, BiWindow };

struct TestSpec {
  Shape shape;
  bool multi_pair;         // any even number of ranks, else exactly two; a barrier before each repetition
  bool iteration_barrier;  // one more at the start of each iteration (OMB 7.4's osu_mbw_mr)
};

struct NamedTest {
  const char* name;
  TestSpec spec;
};

// In OSU Micro-Benchmarks' order: the ping-pongs, then the windowed tests.
constexpr NamedTest kTests[] = {{"latency", {Shape::PingPong, false, false}},
                                {"multi_lat", {Shape::PingPong, true, false}},
                                {"bw", {Shape::Window, false, false}},
                                {"bibw", {Shape::BiWindow, false, false}},
                                {"mbw_mr", {Shape::Window, true, true}}};

TestSpec spec_of(const std::string& test) {
  for (const NamedTest& known : kTests)
    if (test == known.name) return known.spec;
  throw UsageError("unknown point-to-point test '" + test + "'; choose " + choice_list(pt2pt_tests()));
}

void check_ranks(const std::string& test, const TestSpec& spec, int ranks, int pairs) {
  if (pairs > 0) {
    if (2 * pairs > ranks)
      throw UsageError("osu " + test + " -p " + std::to_string(pairs) + " pairs rank i with rank i+" +
                       std::to_string(pairs) + " and needs " + std::to_string(2 * pairs) + " ranks, and this run has " +
                       std::to_string(ranks) + "; give -p " + std::to_string(ranks / 2) +
                       " or fewer, or run more ranks");
    return;
  }
  if (!spec.multi_pair && ranks != 2)
    throw UsageError("osu " + test + " needs exactly 2 ranks, and this run has " + std::to_string(ranks) + "; " +
                     run_it_with("2") + " (multi_lat and mbw_mr take any even number)");
  if (spec.multi_pair && (ranks < 2 || ranks % 2 != 0))
    throw UsageError("osu " + test +
                     " pairs rank i with rank i+N/2 and needs an even number of ranks, and this run has " +
                     std::to_string(ranks) + "; run it with an even -np");
}

void fill_pattern(Buffer& buffer, std::uint64_t size, int iteration, int stream) {
  std::vector<std::uint8_t> piece(std::min(size, kValidationPiece));
  for (std::uint64_t offset = 0; offset < size; offset += piece.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(piece.size(), size - offset);
    write_pattern(piece.data(), n, offset, size, iteration, stream);
    buffer.write(piece.data(), n, offset);
  }
}

// Counts wrong bytes, reading through a staging buffer allocated for this
// check alone (OMB-FPGA section 3.4), so no buffer of the transfer path can
// make a wrong message look right.
std::uint64_t count_errors(const Buffer& buffer, std::uint64_t size, int iteration, int stream) {
  std::vector<std::uint8_t> staging(std::min(size, kValidationPiece));
  std::uint64_t errors = 0;
  for (std::uint64_t offset = 0; offset < size; offset += staging.size()) {
    const std::uint64_t n = std::min<std::uint64_t>(staging.size(), size - offset);
    buffer.read(staging.data(), n, offset);
    errors += pattern_errors(staging.data(), n, offset, size, iteration, stream);
  }
  return errors;
}

using Buffers = std::vector<std::unique_ptr<Buffer>>;

Buffers allocate(DeviceOps* device, MemKind kind, std::uint64_t bytes, int count, int bank) {
  if (count > 1 && device && is_device_kind(kind) && bytes * count > device->info().global_mem_bytes)
    throw UsageError(std::to_string(count) + " buffers of " + std::to_string(bytes) + " bytes need more than the " +
                     std::to_string(device->info().global_mem_bytes) + " bytes of global memory of " +
                     device->info().label() + "; use -b single or smaller messages (-m)");
  Buffers buffers;
  for (int i = 0; i < count; ++i) buffers.push_back(std::make_unique<Buffer>(device, kind, bytes, bank));
  return buffers;
}

// One rank's part in a test.
struct Role {
  int pairs;
  bool first_half;  // rank < pairs: initiates, sends in bw, and keeps time
  bool idle;        // rank >= 2 * pairs (mbw_mr -p): only joins the barriers
  int peer;         // MPI_PROC_NULL for an idle rank
  MemKind kind;
};

class Runner {
 public:
  Runner(const Communicator& comm, DeviceOps* device, const Pt2ptOptions& options, const SizeHook<SizeTiming>& on_size)
      : comm_(comm),
        device_(device),
        options_(options),
        on_size_(on_size),
        spec_(spec_of(options.test)),
        transfers_(comm, device, options.transfer) {
    options.validate();
    check_ranks(options.test, spec_, comm.size(), options.pairs.value_or(0));
    const int pairs = options.pairs.value_or(comm.size() / 2);
    const bool first = comm.rank() < pairs, idle = comm.rank() >= 2 * pairs;
    role_ = {pairs, first, idle,
             idle    ? MPI_PROC_NULL
             : first ? comm.rank() + pairs
                     : comm.rank() - pairs,
             first ? options.send_kind : options.recv_kind};
    windows_ = options.vary_window ? varied_windows() : std::vector<int>{options.window};
    check_host_memory(comm, host_memory(), "osu " + options.test,
                      "give a smaller window (-W), fewer iterations (-i), smaller messages (-m) or -b single");
  }

  Pt2ptRun run() {
    Pt2ptRun result;
    result.pairs = role_.pairs;
    result.chunk_bytes = transfers_.options().chunk_bytes;
    result.slots = transfers_.options().slots;
    result.fast_to_device = transfers_.options().fast_to_device;
    result.fast_to_host = transfers_.options().fast_to_host;
    std::exception_ptr failure;
    try {
      my_route_ = choose_route(role_.kind, device_, options_.transfer.path);
      if (my_route_ != Route::Direct && !device_)
        throw UsageError(mem_kind_name(role_.kind) + " needs an OpenCL device, and none was opened");
      if (!options_.multiple_buffers) allocate_for(*std::max_element(options_.sizes.begin(), options_.sizes.end()));
    } catch (...) {
      failure = std::current_exception();
    }
    comm_.agree(failure);
    peer_route_ = exchange_route(comm_, role_.peer, my_route_);
    const Route rank0 = role_.first_half ? my_route_ : peer_route_;
    const Route rank1 = role_.first_half ? peer_route_ : my_route_;
    result.send_route = route_name(rank0);
    result.recv_route = route_name(rank1);
    if (options_.timeline && rank0 != Route::Staged && rank1 != Route::Staged) {
      // Both ranks know both routes, so both refuse alike.
      UsageError error("a timeline records staged transfers, and neither side stages here (" + result.send_route +
                       " to " + result.recv_route + "); use a device kind (D, B or P) with --path staged");
      error.set_agreed();
      throw error;
    }

    for (std::uint64_t size : options_.sizes) {
      if (message_bytes(size, options_.datatype) == 0) continue;  // as OMB: no whole element, no row
      if (options_.multiple_buffers) {
        std::exception_ptr allocation_failure;
        try {
          send_.clear();
          recv_.clear();
          allocate_for(size);
        } catch (...) {
          allocation_failure = std::current_exception();
        }
        comm_.agree(allocation_failure);
      }
      bool failed = false;
      for (int window : windows_) {
        window_ = window;
        result.sizes.push_back(measure(size));
        if (on_size_) on_size_(result.sizes.back());
        failed = result.sizes.back().errors > 0;
        if (failed) break;
      }
      if (failed) break;  // as OMB: a failing size ends the sweep
    }
    return result;
  }

 private:
  bool sends() const { return !role_.idle && (spec_.shape != Shape::Window || role_.first_half); }
  bool receives() const { return !role_.idle && (spec_.shape != Shape::Window || !role_.first_half); }
  int largest_window() const { return *std::max_element(windows_.begin(), windows_.end()); }
  int buffers_per_size() const {
    return options_.multiple_buffers && spec_.shape != Shape::PingPong ? largest_window() : 1;
  }

  // This rank's host memory at the largest size (docs/METHODS.md, "Host
  // memory of a run"): its host buffers, or for staged device memory the
  // pinned staging slots (mapped device memory is the device's); every
  // message of a window posted at once, cut into wire chunks where either
  // side stages or a message passes kMaxWireChunk (HostMemory::add_batch:
  // a staging rank holds its chunks as records).
  HostMemory host_memory() const {
    const std::uint64_t largest =
        message_bytes(*std::max_element(options_.sizes.begin(), options_.sizes.end()), options_.datatype);
    // The peer's route as this rank's device would give it (ranks of one run have alike devices).
    const bool stages = choose_route(role_.kind, device_, options_.transfer.path) == Route::Staged;
    const bool chunked = stages || choose_route(role_.first_half ? options_.recv_kind : options_.send_kind, device_,
                                                options_.transfer.path) == Route::Staged;
    const std::uint64_t chunk = chunked ? transfers_.options().chunk_bytes : kMaxWireChunk;
    const int directions = (sends() ? 1 : 0) + (receives() ? 1 : 0);
    HostMemory memory;
    if (stages)
      memory.buffers = double(directions) * transfers_.options().slots * double(transfers_.options().chunk_bytes);
    else if (!is_device_kind(role_.kind))
      memory.buffers = double(directions) * buffers_per_size() * double(largest);
    if (options_.validation) memory.buffers += double(std::min(largest, kValidationPiece));
    const double messages = role_.idle                       ? 0.0
                            : spec_.shape == Shape::PingPong ? 1.0
                            : spec_.shape == Shape::BiWindow ? 2.0 * largest_window()
                                                             : double(largest_window());
    memory.add_batch(messages * double(std::max<std::uint64_t>(1, (largest + chunk - 1) / chunk)), stages,
                     transfers_.options().slots);
    memory.samples = timed_samples(options_.counts, options_.sizes) * double(windows_.size());
    return memory;
  }

  // Device buffers hold at least the smallest fast copies, so that a
  // staged copy of a shorter message can be widened inside the run's own
  // memory (docs/METHODS.md, "Copy calibration").
  void allocate_for(std::uint64_t bytes) {
    if (is_device_kind(role_.kind))
      bytes = std::max({bytes, transfers_.options().fast_to_device, transfers_.options().fast_to_host});
    if (sends()) send_ = allocate(device_, role_.kind, bytes, buffers_per_size(), options_.bank);
    if (receives()) recv_ = allocate(device_, role_.kind, bytes, buffers_per_size(), options_.bank);
  }

  // The stream a buffer's data belongs to: its window slot, offset for the
  // second half's replies and bibw messages.
  int stream(int slot, bool from_first_half) const {
    return (send_.size() > 1 || recv_.size() > 1 ? slot : 0) + (from_first_half ? 0 : kReplyStream);
  }

  void prepare(std::uint64_t size, int iteration) {
    if (options_.validation) {
      for (std::size_t j = 0; j < send_.size(); ++j)
        fill_pattern(*send_[j], size, iteration, stream(static_cast<int>(j), role_.first_half));
      for (auto& buffer : recv_) buffer->fill_zero();
    }
    if (options_.touch && is_device_kind(role_.kind)) {
      for (auto* set : {&send_, &recv_})
        for (auto& buffer : *set) device_->touch(buffer->memory());
    }
    // Untimed work on one rank must not land in the other's timed region:
    // a barrier after it, which in the multi-pair tests is the one before
    // each repetition (measure). OMB's mbw_mr also opens each iteration with
    // one; without it a receiver's MPI_Irecv met messages already arrived
    // (callgrind: 461 instructions a message against OMB's 336).
    if (spec_.iteration_barrier || (!spec_.multi_pair && (options_.validation || options_.touch))) comm_.barrier();
  }

  std::uint64_t check(std::uint64_t size, int iteration) {
    std::uint64_t errors = 0;
    // The buffers this window wrote: with -V a row's window may be smaller than the buffers allocated.
    const std::size_t used = std::min<std::size_t>(recv_.size(), static_cast<std::size_t>(std::max(window_, 1)));
    for (std::size_t j = 0; j < used; ++j)
      errors += count_errors(*recv_[j], size, iteration, stream(static_cast<int>(j), !role_.first_half));
    return errors;
  }

  // Whether every message of this size moves as plain MPI at both ends
  // (Transfers::is_plain): decided once per size, so the window loops
  // decide nothing per message, as OMB's do.
  bool all_plain(std::uint64_t size) const {
    for (const Buffers* set : {&send_, &recv_})
      for (const auto& buffer : *set)
        if (!transfers_.is_plain(*buffer, size, peer_route_)) return false;
    return true;
  }

  // Message j of a window: its own buffer with -b multiple (one per
  // message of the largest window), else the one buffer.
  static Buffer& slot(const Buffers& buffers, int j) { return *buffers[buffers.size() == 1 ? 0 : j]; }

  // Where each message of a plain window lives, looked up once per row
  // rather than per message.
  std::vector<std::uint8_t*> window_data(const Buffers& buffers) const {
    std::vector<std::uint8_t*> data;
    if (!buffers.empty())
      for (int j = 0; j < window_; ++j) data.push_back(slot(buffers, j).host_data());
    return data;
  }

  void post_sends(std::uint64_t size) {
    if (plain_) {
      transfers_.post_plain_send(send_data_.data(), window_, static_cast<int>(size), role_.peer, kDataTag);
      return;
    }
    for (int j = 0; j < window_; ++j) transfers_.post_send(slot(send_, j), 0, size, role_.peer, kDataTag, peer_route_);
  }

  void post_recvs(std::uint64_t size) {
    if (plain_) {
      transfers_.post_plain_recv(recv_data_.data(), window_, static_cast<int>(size), role_.peer, kDataTag);
      return;
    }
    for (int j = 0; j < window_; ++j) {
      Buffer& buffer = slot(recv_, j);
      transfers_.post_recv(buffer, 0, size, role_.peer, kDataTag, peer_route_, buffer.bytes());
    }
  }

  void send_one(std::uint64_t size) {
    if (plain_)
      transfers_.send_plain(send_[0]->host_data(), static_cast<int>(size), role_.peer, kDataTag);
    else
      transfers_.send(*send_[0], size, role_.peer, kDataTag, peer_route_);
  }

  void recv_one(std::uint64_t size) {
    if (plain_)
      transfers_.recv_plain(recv_[0]->host_data(), static_cast<int>(size), role_.peer, kDataTag);
    else
      transfers_.recv(*recv_[0], size, role_.peer, kDataTag, peer_route_, recv_[0]->bytes());
  }

  void exchange(std::uint64_t size) {
    const int peer = role_.peer;
    if (role_.idle) return;
    switch (spec_.shape) {
      case Shape::PingPong:
        if (role_.first_half) {
          send_one(size);
          recv_one(size);
        } else {
          recv_one(size);
          send_one(size);
        }
        break;
      case Shape::Window: {
        char ack = 0;
        if (role_.first_half) {
          post_sends(size);
          transfers_.wait_all();
          comm_.check(MPI_Recv(&ack, 1, MPI_CHAR, peer, kAckTag, comm_.raw(), MPI_STATUS_IGNORE), "MPI_Recv",
                      "waiting for the window's acknowledgement");
        } else {
          post_recvs(size);
          transfers_.wait_all();
          comm_.check(MPI_Send(&ack, 1, MPI_CHAR, peer, kAckTag, comm_.raw()), "MPI_Send", "acknowledging the window");
        }
        break;
      }
      case Shape::BiWindow:
        post_recvs(size);
        post_sends(size);
        transfers_.wait_all();
        break;
    }
  }

  // OMB's row `size`, moving `bytes` (its whole elements).
  SizeTiming measure(std::uint64_t size) {
    const std::uint64_t bytes = message_bytes(size, options_.datatype);
    const int iterations = options_.counts.timed(size), warmup = options_.counts.untimed(size);
    std::vector<double> times(static_cast<std::size_t>(iterations), 0.0);
    std::uint64_t errors = 0;
    Timeline timeline;
    plain_ = all_plain(bytes);
    if (plain_) {
      send_data_ = window_data(send_);
      recv_data_ = window_data(recv_);
    }
    comm_.barrier();
    for (int i = 0; i < warmup + iterations; ++i) {
      check_interrupt();
      prepare(bytes, i);
      // OMB's -u: with validation, untimed repetitions of the operation
      // before the timed one (on the same data, so the check still holds).
      for (int j = 0; options_.validation && j < options_.validation_warmup; ++j) {
        if (spec_.multi_pair) comm_.barrier();  // as OMB's mbw_mr and multi_lat, before each repetition
        exchange(bytes);
      }
      // As OMB's multi-pair tests, a barrier before the timed repetition too.
      if (spec_.multi_pair) comm_.barrier();
      const bool record = options_.timeline && i == warmup + iterations - 1;  // the last timed window
      if (record) transfers_.set_timeline(&timeline);
      const double start = MPI_Wtime();
      if (record) timeline.start();
      exchange(bytes);
      const double stop = MPI_Wtime();
      transfers_.set_timeline(nullptr);
      if (i >= warmup && role_.first_half) times[i - warmup] = stop - start;
      if (fault_)
        for (auto& buffer : recv_) (*fault_)(*buffer, 0, bytes);
      if (options_.validation) errors += check(bytes, i);
    }
    // The first half keeps time; the others add zeros, so the sum over ranks
    // divided by the pairs is the mean over timing ranks, per iteration.
    std::vector<double> mean = comm_.sum(times);
    for (double& t : mean) t /= role_.pairs;
    double total = 0;
    for (double t : mean) total += t;

    SizeTiming timing;
    timing.size = size;
    timing.window = spec_.shape == Shape::PingPong ? 0 : window_;
    timing.iterations = iterations;
    timing.errors = comm_.sum(errors);
    timing.timeline = std::move(timeline.chunks);
    if (spec_.shape == Shape::PingPong) {
      timing.value = total / (2.0 * iterations);
      for (double t : mean) timing.samples.push_back(t / 2.0);
    } else {
      // Bytes per window of all pairs together; bibw counts both directions.
      const double window_bytes =
          static_cast<double>(bytes) * window_ * role_.pairs * (spec_.shape == Shape::BiWindow ? 2.0 : 1.0);
      timing.value = window_bytes * iterations / total;
      for (double t : mean) timing.samples.push_back(window_bytes / t);
    }
    return timing;
  }

  const Communicator& comm_;
  const ReceiveFault* fault_ = receive_fault(comm_);  // tests only (comm/receive_fault.hpp)
  DeviceOps* device_;
  const Pt2ptOptions& options_;
  const SizeHook<SizeTiming>& on_size_;
  TestSpec spec_;
  Transfers transfers_;
  Role role_{};
  std::vector<int> windows_;  // the windows each size runs at: -W's, or varied_windows() with -V
  int window_ = 0;            // the window of the row being measured
  Route my_route_ = Route::Direct, peer_route_ = Route::Direct;
  Buffers send_, recv_;
  bool plain_ = false;                                // all_plain() of the size being measured
  std::vector<std::uint8_t*> send_data_, recv_data_;  // with plain_: window_data() of the row being measured
};

}  // namespace

std::vector<int> varied_windows() { return {1, 2, 4, 8, 16, 32, 64, 128}; }

std::vector<std::string> pt2pt_tests() {
  std::vector<std::string> names;
  for (const NamedTest& known : kTests) names.push_back(known.name);
  return names;
}

void Pt2ptOptions::validate() const {
  spec_of(test);
  if (window < 1) throw UsageError("window size must be at least 1, got " + std::to_string(window));
  validate_validation_warmup(validation_warmup);
  if ((pairs || vary_window) && test != "mbw_mr")
    throw UsageError(std::string(pairs ? "-p (pairs)" : "-V (vary the window)") +
                     " applies to osu mbw_mr only, as in OSU Micro-Benchmarks; drop it from osu " + test);
  if (pairs && *pairs < 1) throw UsageError("-p takes the number of pairs, at least 1, got " + std::to_string(*pairs));
  counts.validate();
  if (sizes.empty()) throw UsageError("no message sizes to run");
  require_an_element(sizes, datatype);
  if (!print_rate && test != "mbw_mr")
    throw UsageError("-R (print the message rate) applies to osu mbw_mr only; drop it from osu " + test);
}

Pt2ptRun run_pt2pt(const Communicator& comm, DeviceOps* device, const Pt2ptOptions& options,
                   const SizeHook<SizeTiming>& on_size) {
  return run_agreed<Runner>(comm, device, options, on_size);
}

}  // namespace fpgacomm
