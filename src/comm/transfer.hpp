// Moving buffers of any kind between ranks over MPI (docs/METHODS.md,
// "Transfer protocols"). Host memory goes to MPI as it is. Device memory is
// either staged through pinned host slots, chunk by chunk, so device-host
// copies overlap the MPI transfers of earlier chunks, or mapped, where the
// device shares memory with the host, so MPI reads and writes it in place.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cl/buffer.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

// What the user asks for (--path).
enum class Path { Auto, Staged, Mapped };
Path parse_path(const std::string& name);
std::string path_name(Path path);

// How one rank's buffer actually moves.
enum class Route { Direct, Staged, Mapped };
std::string route_name(Route route);

// Host kinds go direct; device kinds are staged or mapped as `path` says,
// where auto maps only on devices that share memory with the host
// (CL_DEVICE_HOST_UNIFIED_MEMORY).
Route choose_route(MemKind kind, const DeviceOps* device, Path path);

// Both ends cut the wire into chunks when either end stages, so that the
// receives one side posts match the sends of the other. Messages above
// kMaxWireChunk are always cut, as MPI counts are ints.
bool chunked_wire(Route local, Route remote);
constexpr std::uint64_t kMaxWireChunk = std::uint64_t(1) << 30;

// Exchanges routes with `peer` (both ranks call it), so each side knows
// how the other's buffer moves.
Route exchange_route(const Communicator& comm, int peer, Route mine);

struct TransferOptions {
  Path path = Path::Auto;
  std::uint64_t chunk_bytes = 0;  // 0: default_chunk_bytes(device)
  int slots = 4;                  // staging buffers per direction: chunks in flight
  // The smallest fast copy in each direction (docs/METHODS.md, "Copy
  // calibration"): a shorter staged copy is widened to it where the memory
  // past the message is the caller's to overwrite (post_recv's room) or
  // to read; 1 widens nothing.
  std::uint64_t fast_to_device = 1, fast_to_host = 1;
};

// Whether the device's copies run on the host's cores: a CPU device's, and
// an emulator's (Intel's FPGA emulator copies with host memcpy), so a rank
// waiting for them must leave the cores free rather than poll.
bool copies_use_host_cores(const DeviceOps* device);

// The measured best pipelining chunk (bench/RESULTS.md): 1 MiB where the
// copies share the host's cores, 4 MiB where an accelerator's copy engines
// make each command's fixed cost the thing to amortise.
std::uint64_t default_chunk_bytes(const DeviceOps* device);

// The life of each staged chunk of the batches waited for while a Timeline
// is set (docs/METHODS.md, "Timeline of staged transfers"). Host times are
// steady-clock seconds since Timeline::start(), taken when the engine acts
// or first sees a completion; -1 where the chunk did not get there. A send's
// copy is device-to-host, before MPI; a receive's is host-to-device, after.
struct ChunkTimes {
  bool send = true;
  std::size_t index = 0;                // the chunk's place among its batch's sends (receives)
  std::uint64_t offset = 0, bytes = 0;  // in the buffer
  double copy_enqueued = -1, copy_done = -1, mpi_posted = -1, mpi_done = -1;
  // Device clock, from the copy's profiling event: CL_PROFILING_COMMAND_QUEUED
  // to SUBMIT, SUBMIT to START, START to END.
  double queued_to_submit = 0, submit_to_start = 0, start_to_end = 0;
};

class Timeline {
 public:
  void start() {
    chunks.clear();
    origin_ = std::chrono::steady_clock::now();
  }
  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count(); }
  std::vector<ChunkTimes> chunks;

 private:
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
};

// A batch of non-blocking sends and receives of one rank, driven to
// completion together by wait_all(): sends leave in posting order and
// receives are posted in posting order, as MPI matching needs. Host memory
// on an unchunked wire costs what plain MPI costs: posted to MPI at once
// and completed by one MPI_Waitall, as OMB's window is; the engine below
// runs only for device memory and chunked wires.
class Transfers {
 public:
  // Collective over `comm`: every rank takes the smallest chunk size any
  // rank asked for, so both ends of every transfer cut the wire alike.
  Transfers(const Communicator& comm, DeviceOps* device, TransferOptions options);
  ~Transfers();
  Transfers(const Transfers&) = delete;
  Transfers& operator=(const Transfers&) = delete;

  void post_send(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer, int tag, Route peer_route);
  // room: bytes from `offset` the caller lets a staged copy overwrite,
  // past the message too (0: the message's own); see fast_to_device.
  void post_recv(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer, int tag, Route peer_route,
                 std::uint64_t room = 0);
  void wait_all();

  // Whether `buffer` moves as plain MPI: host memory on an unchunked wire
  // (no staging at either end, one wire message), which post_send and
  // post_recv hand straight to MPI.
  bool is_plain(const Buffer& buffer, std::uint64_t bytes, Route peer_route) const;
  // The same hand-off for a loop that decided is_plain once per message size
  // rather than once per message, as OMB's window loops decide nothing per
  // message: `messages` messages of `count` bytes, message i at data[i], one
  // MPI call each, the requests kept for wait_all(). A whole window per call,
  // so its request storage grows once, not per message. Only while the batch
  // holds no engine step (MPI matches in posting order).
  void post_plain_send(const std::uint8_t* const* data, int messages, int count, int peer, int tag);
  void post_plain_recv(std::uint8_t* const* data, int messages, int count, int peer, int tag);

  // Blocking, the same way: one MPI_Send or MPI_Recv, as OMB's ping-pong.
  void send_plain(const std::uint8_t* data, int count, int peer, int tag) const {
    comm_.check(MPI_Send(data, count, MPI_BYTE, peer, tag, comm_.raw()), "MPI_Send",
                [&] { return wire_context(true, count, peer); });
  }
  void recv_plain(std::uint8_t* data, int count, int peer, int tag) const {
    comm_.check(MPI_Recv(data, count, MPI_BYTE, peer, tag, comm_.raw(), MPI_STATUS_IGNORE), "MPI_Recv",
                [&] { return wire_context(false, count, peer); });
  }

  void send(Buffer& buffer, std::uint64_t bytes, int peer, int tag, Route peer_route);
  void recv(Buffer& buffer, std::uint64_t bytes, int peer, int tag, Route peer_route, std::uint64_t room = 0);

  // Records staged chunks into `timeline` from the next post on; nullptr
  // (the default) records nothing. Set it between batches.
  void set_timeline(Timeline* timeline) { timeline_ = timeline; }

  const TransferOptions& options() const { return options_; }
  Route route_of(const Buffer& buffer) const { return choose_route(buffer.kind(), device_, options_.path); }

 private:
  enum class State { Waiting, Staging, OnWire, Unstaging, Done };
  struct Step {
    Buffer* buffer;
    std::uint64_t offset;  // in the buffer
    std::uint64_t bytes;
    int peer;
    int tag;
    bool staged;
    std::uint64_t copy_bytes = 0;  // the staged copy, widened to the fast size where allowed
    std::uint8_t* host = nullptr;  // where MPI reads or writes
    int slot = -1;
    CopyEvent event = nullptr;
    MPI_Request request = MPI_REQUEST_NULL;
    State state = State::Waiting;
    long record = -1;  // its row in timeline_->chunks, or -1
  };
  struct Mapping {
    Buffer* buffer;
    std::uint64_t offset;
    std::uint64_t bytes;
    bool for_send;
    std::uint8_t* host;
  };
  static std::string wire_context(bool send, std::uint64_t bytes, int peer);
  void post(std::vector<Step>& steps, Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer, int tag,
            Route peer_route, bool for_send, std::uint64_t room);
  std::uint8_t* map(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, bool for_send);
  std::uint8_t* slot_memory(std::vector<std::unique_ptr<Buffer>>& slots, int slot);
  bool advance_sends();
  bool advance_recvs();
  bool complete_requests(bool block);
  void wait_direct();
  void finish_batch();
  // Timeline recording; callers test step.record >= 0 first.
  void mark(const Step& step, double ChunkTimes::*when) { timeline_->chunks[step.record].*when = timeline_->now(); }
  void record_copy(const Step& step);

  const Communicator& comm_;
  DeviceOps* device_;
  TransferOptions options_;
  std::vector<Step> sends_, recvs_;                       // the engine's steps
  std::vector<MPI_Request> direct_sends_, direct_recvs_;  // posted straight to MPI
  std::size_t send_next_stage_ = 0, send_next_wire_ = 0, send_staged_ = 0;
  std::size_t recv_next_post_ = 0, recv_next_unstage_ = 0, recv_staged_ = 0;
  std::vector<std::unique_ptr<Buffer>> send_slots_, recv_slots_;
  std::vector<long> send_slot_owner_, recv_slot_owner_;
  std::vector<Mapping> mappings_;
  bool has_staged_ = false;            // the batch has device copies
  int on_wire_ = 0;                    // MPI requests in flight
  int device_copies_ = 0;              // staging copies in flight
  std::vector<MPI_Request> requests_;  // the requests on the wire, rebuilt when stale
  bool requests_stale_ = true;
  std::vector<Step*> request_steps_;
  std::vector<int> completed_;
  Timeline* timeline_ = nullptr;
};

}  // namespace fpgacomm
