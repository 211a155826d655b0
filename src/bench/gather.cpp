#include "bench/gather.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>

#include "bench/agreed_run.hpp"
#include "bench/host_memory.hpp"
#include "bench/pattern.hpp"
#include "comm/receive_fault.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/launch_hint.hpp"

namespace fpgacomm {
namespace {

// Stage s's messages carry tag kStageTag + s: in local control a rank may
// already post stage s + 1 while its peer is still in stage s.
constexpr int kStageTag = 0x4000;
// Validation writes and reads blocks through host pieces of at most this size.
constexpr std::uint64_t kPiece = std::uint64_t(4) << 20;

std::string bytes_text(std::uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

class Runner {
 public:
  Runner(const Communicator& comm, Device* device, const GatherOptions& options, const SizeHook<GatherTiming>& on_size)
      : comm_(comm),
        device_(device),
        options_(options),
        on_size_(on_size),
        nodes_(comm.size()),
        me_(comm.rank()),
        transfers_(comm, device, options.transfer) {
    if (nodes_ < 2)
      throw UsageError("gather needs at least 2 ranks, and this run has " + std::to_string(nodes_) + "; " +
                       run_it_with("2") + " (or more ranks)");
    // The collective steps first, so that a check below that fails on one
    // rank alone cannot leave the others waiting in them.
    const std::uint64_t stages = stage_count();
    const bool same_stages = comm.sum(stages) == stages * nodes_u();
    const int route = static_cast<int>(choose_route(options.kind, device, transfers_.options().path));
    std::vector<int> routes(nodes_);
    comm.check(MPI_Allgather(&route, 1, MPI_INT, routes.data(), 1, MPI_INT, comm.raw()), "MPI_Allgather",
               "exchanging transfer routes");
    for (int r : routes) routes_.push_back(static_cast<Route>(r));
    check_host_memory(comm, host_memory(), "gather",
                      "give smaller --sizes, fewer iterations (-i) or fewer ranks per host");

    // Every rank runs the same stages: each ends in a collective barrier.
    if (!same_stages) throw UsageError("gather: the ranks were given different numbers of stages");
    if (options.root < 0 || options.root >= nodes_) throw UsageError("gather: root out of range");
    options.validate();
    const bool mpi = !options.mpi_collective.empty();
    for (const GatherStage& stage : options.stages)
      for (const auto* moves : {&stage.sends, &stage.recvs})
        for (const GatherMove& move : *moves)
          if (move.peer < 0 || move.peer >= nodes_ || move.peer == me_ || move.first + move.blocks > nodes_u())
            throw UsageError("gather: a move of the schedule names rank " + std::to_string(move.peer) +
                             " or positions beyond the " + std::to_string(nodes_) + " blocks");
    for (const auto* positions : {&options.holds, &options.checks})
      for (std::uint64_t p : *positions)
        if (p >= nodes_u()) throw UsageError("gather: a held or checked position is beyond the blocks");
    const std::uint64_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
    if (mpi && largest > static_cast<std::uint64_t>(INT_MAX))
      throw UsageError("gather --schedule mpi: blocks of " + bytes_text(largest) +
                       " exceed an MPI count; use sizes up to 2G - 1");
    check_memory(largest);
    // Every transfer and validation goes through this one buffer of n blocks.
    buffer_ =
        std::make_unique<Buffer>(device, options.kind, std::max<std::uint64_t>(1, nodes_u() * largest), options.bank);
    if (mpi && is_device_kind(options.kind))
      mirror_ = std::make_unique<Buffer>(device, MemKind::PinnedHost, std::max<std::uint64_t>(1, nodes_u() * largest));
    empty_ = std::make_unique<Buffer>(nullptr, MemKind::Host, 1);
  }

  GatherRun run() {
    GatherRun result;
    result.route = route_name(routes_[me_]);
    for (std::uint64_t size : options_.sizes) {
      result.sizes.push_back(measure(size));
      if (on_size_) on_size_(result.sizes.back());
      if (result.sizes.back().errors > 0) break;
    }
    for (int i = 0; i < options_.barrier_reference; ++i) {
      comm_.barrier();
      const double start = MPI_Wtime();
      comm_.barrier();
      result.barrier_reference.push_back(MPI_Wtime() - start);
    }
    result.barrier_reference = slowest(result.barrier_reference);
    return result;
  }

 private:
  std::uint64_t nodes_u() const { return static_cast<std::uint64_t>(nodes_); }
  std::uint64_t stage_count() const { return options_.mpi_collective.empty() ? options_.stages.size() : 1; }
  // The node whose block sits at position p (the root's own at 0).
  int owner(std::uint64_t position) const { return static_cast<int>((position + options_.root) % nodes_u()); }
  std::uint64_t position_of(int node) const { return (node - options_.root + nodes_u()) % nodes_u(); }

  // This rank's host memory at the largest size (docs/METHODS.md, "Host
  // memory of a run"): the buffer of n blocks in host memory, or for device
  // memory the pinned mirror of an MPI collective or the staging slots of a
  // staging rank (mapped device memory is the device's);
  // every move of a stage posted at once, cut into wire chunks; per timed
  // iteration a record of 3 phases per stage and a total, every rank's
  // gathered to each.
  HostMemory host_memory() const {
    HostMemory memory;
    if (options_.sizes.empty()) return memory;
    const std::uint64_t largest = *std::max_element(options_.sizes.begin(), options_.sizes.end());
    const double blocks = double(nodes_u()) * double(largest);
    const bool chunked = std::find(routes_.begin(), routes_.end(), Route::Staged) != routes_.end();
    const std::uint64_t chunk = chunked ? transfers_.options().chunk_bytes : kMaxWireChunk;
    if (!is_device_kind(options_.kind))
      memory.buffers = blocks;
    else if (!options_.mpi_collective.empty())
      memory.buffers = blocks;  // the pinned mirror
    else if (routes_[me_] == Route::Staged)
      memory.buffers = 2.0 * transfers_.options().slots * double(transfers_.options().chunk_bytes);
    double most = 1;
    for (const GatherStage& stage : options_.stages) {
      double pieces = 0;
      for (const auto* moves : {&stage.sends, &stage.recvs})
        for (const GatherMove& move : *moves)
          pieces += std::ceil(double(move.blocks) * double(largest) / double(chunk));
      most = std::max(most, pieces);
    }
    memory.add_batch(most, routes_[me_] == Route::Staged, transfers_.options().slots);
    const double record = 3.0 * double(stage_count()) + 1.0;
    int longest = 0;
    for (std::uint64_t size : options_.sizes) longest = std::max(longest, options_.counts.timed(size));
    memory.samples = timed_samples(options_.counts, options_.sizes) * record;
    memory.buffers += 8.0 * record * longest * nodes_;
    return memory;
  }

  // Before any transfer: the n blocks of every rank sharing this device must
  // fit its memory and one allocation (the buffer is a single one).
  void check_memory(std::uint64_t largest) const {
    if (!is_device_kind(options_.kind) || !device_) return;
    const DeviceInfo& info = device_->info();
    const std::uint64_t one = nodes_u() * largest;
    const std::uint64_t all = one * static_cast<std::uint64_t>(std::max(1, options_.device_sharers));
    if (one > info.max_alloc_bytes || all > info.global_mem_bytes) {
      const std::uint64_t fits =
          std::min(info.max_alloc_bytes,
                   info.global_mem_bytes / static_cast<std::uint64_t>(std::max(1, options_.device_sharers))) /
          nodes_u();
      throw UsageError("gather: " + std::to_string(nodes_) + " blocks of " + bytes_text(largest) + " per rank (" +
                       std::to_string(options_.device_sharers) +
                       " rank(s) on this device) exceed the device's memory: " + info.label() + " has " +
                       bytes_text(info.global_mem_bytes) + " of global memory and allocates at most " +
                       bytes_text(info.max_alloc_bytes) + " at once; use --sizes up to " + bytes_text(fits));
    }
  }

  // Each node's block: pattern_byte of its offset, the block size, the
  // iteration and the node, so a misplaced, duplicated or stale block fails.
  void fill(std::uint64_t position, std::uint64_t size, int iteration) {
    std::vector<std::uint8_t> piece(std::min(size, kPiece));
    for (std::uint64_t offset = 0; offset < size; offset += piece.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(piece.size(), size - offset);
      write_pattern(piece.data(), n, offset, size, iteration, owner(position));
      buffer_->write(piece.data(), n, position * size + offset);
    }
  }

  std::uint64_t wrong_bytes(std::uint64_t position, std::uint64_t size, int iteration) const {
    std::vector<std::uint8_t> piece(std::min(size, kPiece));
    std::uint64_t errors = 0;
    for (std::uint64_t offset = 0; offset < size; offset += piece.size()) {
      const std::uint64_t n = std::min<std::uint64_t>(piece.size(), size - offset);
      buffer_->read(piece.data(), n, position * size + offset);
      errors += pattern_errors(piece.data(), n, offset, size, iteration, owner(position));
    }
    return errors;
  }

  void post(const GatherMove& move, std::uint64_t size, int tag, bool send) {
    const std::uint64_t bytes = move.blocks * size;
    // An empty message needs no device copy: it goes from host memory.
    Buffer& from = bytes ? *buffer_ : *empty_;
    const Route peer_route = bytes ? routes_[move.peer] : Route::Direct;
    if (send)
      transfers_.post_send(from, bytes ? move.first * size : 0, bytes, move.peer, tag, peer_route);
    else
      transfers_.post_recv(from, bytes ? move.first * size : 0, bytes, move.peer, tag, peer_route);
  }

  // One stage of the schedule: set-up (posting), transfer (waiting), barrier.
  void run_stage(std::size_t s, std::uint64_t size, double* phases) {
    const GatherStage& stage = options_.stages[s];
    const double start = MPI_Wtime();
    for (const GatherMove& move : stage.recvs) post(move, size, kStageTag + static_cast<int>(s), false);
    for (const GatherMove& move : stage.sends) post(move, size, kStageTag + static_cast<int>(s), true);
    const double posted = MPI_Wtime();
    transfers_.wait_all();
    const double moved = MPI_Wtime();
    phases[0] = posted - start;
    phases[1] = moved - posted;
    phases[2] = close_stage(moved);
  }

  double close_stage(double since) const {
    if (!options_.barrier) return 0;
    comm_.check(MPI_Barrier(comm_.raw()), "MPI_Barrier", "closing a gather stage");
    return MPI_Wtime() - since;
  }

  // The mpi schedule's one stage: staging what this rank sends to host
  // memory (set-up), the MPI collective and the copy of what arrived back to
  // the device (transfer), the barrier.
  void run_mpi(std::uint64_t size, double* phases) {
    const std::string& op = options_.mpi_collective;
    const bool root = me_ == options_.root;
    const std::uint64_t own = position_of(me_);
    std::uint8_t* host = mirror_ ? mirror_->host_data() : buffer_->host_data();
    const auto stage = [&](std::uint64_t first, std::uint64_t blocks, bool to_host) {
      if (!mirror_ || blocks * size == 0) return;
      if (to_host)
        buffer_->read(host + first * size, blocks * size, first * size);
      else
        buffer_->write(host + first * size, blocks * size, first * size);
    };
    std::vector<std::uint64_t> sent, received;  // positions
    if (op == "scatter") {
      if (root)
        for (std::uint64_t p = 1; p < nodes_u(); ++p) sent.push_back(p);
      else
        received.push_back(own);
    } else {
      if (op == "allgather" || !root) sent.push_back(own);
      if (op == "allgather" || root)
        for (std::uint64_t p = 0; p < nodes_u(); ++p)
          if (p != own) received.push_back(p);
    }
    const double start = MPI_Wtime();
    for (std::uint64_t p : sent) stage(p, 1, true);
    const double staged = MPI_Wtime();
    MPI_Datatype block = MPI_BYTE;
    int count = 0;
    if (size > 0) {
      comm_.check(MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &block), "MPI_Type_contiguous");
      comm_.check(MPI_Type_commit(&block), "MPI_Type_commit");
      count = 1;
    }
    // Rank r's block sits at position (r - root) mod n: displacements in blocks.
    std::vector<int> counts(nodes_, count), displacements(nodes_);
    for (int r = 0; r < nodes_; ++r) displacements[r] = static_cast<int>(position_of(r));
    const MPI_Comm c = comm_.raw();
    std::uint8_t* mine = host + own * size;
    const char* what = "the mpi gather schedule";
    if (op == "gather")
      comm_.check(MPI_Gatherv(root ? MPI_IN_PLACE : mine, count, block, host, counts.data(), displacements.data(),
                              block, options_.root, c),
                  "MPI_Gatherv", what);
    else if (op == "scatter")
      comm_.check(MPI_Scatterv(host, counts.data(), displacements.data(), block, root ? MPI_IN_PLACE : mine, count,
                               block, options_.root, c),
                  "MPI_Scatterv", what);
    else
      comm_.check(MPI_Allgatherv(MPI_IN_PLACE, count, block, host, counts.data(), displacements.data(), block, c),
                  "MPI_Allgatherv", what);
    if (size > 0) MPI_Type_free(&block);
    for (std::uint64_t p : received) stage(p, 1, false);
    const double moved = MPI_Wtime();
    phases[0] = staged - start;
    phases[1] = moved - staged;
    phases[2] = close_stage(moved);
  }

  GatherTiming measure(std::uint64_t size) {
    const std::size_t stages = stage_count();
    const int iterations = options_.counts.timed(size), warmup = options_.counts.untimed(size);
    const int total = warmup + iterations;
    // Per timed iteration: 3 phases per stage, then this rank's total.
    const std::size_t record = 3 * stages + 1;
    std::vector<double> mine(record * static_cast<std::size_t>(iterations), 0.0);
    for (int i = 0; i < total; ++i) {
      check_interrupt();
      comm_.barrier();  // the common start, outside the time
      double* phases = i >= warmup ? &mine[record * (i - warmup)] : nullptr;
      const double start = MPI_Wtime();
      run_iteration(size, phases);
      if (phases) phases[3 * stages] = MPI_Wtime() - start;
    }
    return reduce(size, mine, stages, iterations, options_.validation ? validated(size, total) : 0);
  }

  // One iteration's stages; phases: where each stage's three go (nullptr: nowhere).
  void run_iteration(std::uint64_t size, double* phases) {
    double scratch[3];
    for (std::size_t s = 0; s < stage_count(); ++s) {
      double* out = phases ? phases + 3 * s : scratch;
      if (options_.mpi_collective.empty())
        run_stage(s, size, out);
      else
        run_mpi(size, out);
    }
  }

  // Validation is an untimed iteration of its own after the timed ones, so
  // that a validated run is timed as a plain one: filling the blocks before
  // each timed iteration and checking them after it changed what the caches
  // held when the next began (9 ranks on 2 cores, mpi, 64 KiB: 369-441 us
  // validated against 217-273 us plain). The pattern holds the iteration
  // (`iteration`, after every timed one), so a block not moved now fails.
  std::uint64_t validated(std::uint64_t size, int iteration) {
    for (std::uint64_t p : options_.holds) fill(p, size, iteration);
    if (device_) device_->finish();
    comm_.barrier();
    run_iteration(size, nullptr);
    if (fault_)
      for (std::uint64_t p : options_.checks) (*fault_)(*buffer_, p * size, size);
    std::uint64_t errors = 0;
    for (std::uint64_t p : options_.checks) errors += wrong_bytes(p, size, iteration);
    return errors;
  }

  // Every rank's records to every rank. Per iteration and stage, as the
  // VCSN paper's Fig. 11 splits a stage, on the time line common to the
  // ranks (each rank's stages follow each other from the barrier that
  // starts the iteration): the stage runs from the end of the previous one
  // (the last rank's) to the end of its own (the last rank's); of that,
  // set-up until the last rank has posted its messages, transfer until the
  // last rank's messages are done, barrier for the rest. The phases of the
  // stages add up to the longest rank's time, also where no barrier aligns
  // the ranks (--control local), and a phase no rank spends past the
  // previous stage's end counts 0. Per iteration, the longest total.
  GatherTiming reduce(std::uint64_t size, const std::vector<double>& mine, std::size_t stages, int iterations,
                      std::uint64_t errors) {
    std::vector<double> all(mine.size() * static_cast<std::size_t>(nodes_));
    comm_.check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                              static_cast<int>(mine.size()), MPI_DOUBLE, comm_.raw()),
                "MPI_Allgather", "collecting every rank's gather times");
    const std::size_t record = 3 * stages + 1;
    GatherTiming timing;
    timing.size = size;
    for (int i = 0; i < iterations; ++i) {
      std::vector<double> setup(stages), transfer(stages), barrier(stages);
      std::vector<double> begins(static_cast<std::size_t>(nodes_), 0.0);  // each rank's start of stage s
      double previous = 0;  // the end of the previous stage, the last rank's
      double total = 0;
      for (std::size_t s = 0; s < stages; ++s) {
        double posted = previous, moved = previous, closed = previous;
        for (int r = 0; r < nodes_; ++r) {
          const double* p = &all[mine.size() * r + record * i + 3 * s];
          double& begin = begins[static_cast<std::size_t>(r)];
          posted = std::max(posted, begin + p[0]);
          moved = std::max(moved, begin + p[0] + p[1]);
          closed = std::max(closed, begin + p[0] + p[1] + p[2]);
          begin += p[0] + p[1] + p[2];
        }
        moved = std::max(moved, posted);
        closed = std::max(closed, moved);
        setup[s] = posted - previous;
        transfer[s] = moved - posted;
        barrier[s] = closed - moved;
        previous = closed;
      }
      for (int r = 0; r < nodes_; ++r) total = std::max(total, all[mine.size() * r + record * i + 3 * stages]);
      timing.setup.push_back(setup);
      timing.transfer.push_back(transfer);
      timing.barrier.push_back(barrier);
      timing.totals.push_back(total);
    }
    timing.errors = comm_.sum(errors);
    return timing;
  }

  std::vector<double> slowest(const std::vector<double>& mine) const {
    std::vector<double> out(mine.size());
    comm_.check(MPI_Allreduce(mine.data(), out.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, comm_.raw()),
                "MPI_Allreduce", "the slowest rank's barrier times");
    return out;
  }

  const Communicator& comm_;
  const ReceiveFault* fault_ = receive_fault(comm_);  // tests only (comm/receive_fault.hpp)
  Device* device_;
  const GatherOptions& options_;
  const SizeHook<GatherTiming>& on_size_;
  int nodes_, me_;
  Transfers transfers_;
  std::unique_ptr<Buffer> buffer_, mirror_, empty_;
  std::vector<Route> routes_;
};

}  // namespace

void GatherOptions::validate() const {
  if (sizes.empty()) throw UsageError("gather: no sizes to run");
  counts.validate();
  const bool mpi = !mpi_collective.empty();
  if (mpi == !stages.empty())
    throw UsageError("gather: give either the stages of a schedule or an MPI collective, not both");
  if (mpi && mpi_collective != "gather" && mpi_collective != "scatter" && mpi_collective != "allgather")
    throw UsageError("gather: unknown MPI collective '" + mpi_collective + "'");
}

GatherRun run_gather(const Communicator& comm, Device* device, const GatherOptions& options,
                     const SizeHook<GatherTiming>& on_size) {
  return run_agreed<Runner>(comm, device, options, on_size);
}

}  // namespace fpgacomm
