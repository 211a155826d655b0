#include "comm/transfer.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "comm/pipeline.hpp"
#include "core/error.hpp"

namespace fpgacomm {
Path parse_path(const std::string& name) {
  if (name == "auto") return Path::Auto;
  if (name == "staged") return Path::Staged;
  if (name == "mapped") return Path::Mapped;
  throw UsageError("unknown transfer path '" + name + "'; choose staged, mapped or auto");
}

std::string path_name(Path path) {
  switch (path) {
    case Path::Auto:
      return "auto";
    case Path::Staged:
      return "staged";
    case Path::Mapped:
      return "mapped";
  }
  return "?";
}

std::string route_name(Route route) {
  switch (route) {
    case Route::Direct:
      return "direct";
    case Route::Staged:
      return "staged";
    case Route::Mapped:
      return "mapped";
  }
  return "?";
}

Route choose_route(MemKind kind, const DeviceOps* device, Path path) {
  if (!is_device_kind(kind)) return Route::Direct;
  if (path == Path::Staged) return Route::Staged;
  if (path == Path::Mapped) return Route::Mapped;
  return device && device->info().host_unified_memory ? Route::Mapped : Route::Staged;
}

bool chunked_wire(Route local, Route remote) { return local == Route::Staged || remote == Route::Staged; }

Route exchange_route(const Communicator& comm, int peer, Route mine) {
  int theirs = 0;
  const int own = static_cast<int>(mine);
  comm.check(
      MPI_Sendrecv(&own, 1, MPI_INT, peer, 0x7f00, &theirs, 1, MPI_INT, peer, 0x7f00, comm.raw(), MPI_STATUS_IGNORE),
      "MPI_Sendrecv", "exchanging transfer routes with rank " + std::to_string(peer));
  return static_cast<Route>(theirs);
}

bool copies_use_host_cores(const DeviceOps* device) {
  return !device || device->info().type == "cpu" || device->info().emulated;
}

std::uint64_t default_chunk_bytes(const DeviceOps* device) {
  return copies_use_host_cores(device) ? std::uint64_t(1) << 20 : std::uint64_t(4) << 20;
}

Transfers::Transfers(const Communicator& comm, DeviceOps* device, TransferOptions options)
    : comm_(comm), device_(device), options_(options) {
  if (options_.chunk_bytes == 0) options_.chunk_bytes = default_chunk_bytes(device);
  if (options_.chunk_bytes > kMaxWireChunk)
    throw UsageError("pipeline chunk size " + std::to_string(options_.chunk_bytes) + " is out of range; use 1 to " +
                     std::to_string(kMaxWireChunk) + " bytes");
  if (options_.slots < 1 || options_.slots > 64)
    throw UsageError("staging slots " + std::to_string(options_.slots) + " is out of range; use 1 to 64");
  for (const std::uint64_t fast : {options_.fast_to_device, options_.fast_to_host})
    if (fast < 1 || fast > kMaxWireChunk)
      throw UsageError("smallest fast copy " + std::to_string(fast) + " is out of range; use 1 to " +
                       std::to_string(kMaxWireChunk) + " bytes");
  std::uint64_t smallest = 0;
  comm_.check(MPI_Allreduce(&options_.chunk_bytes, &smallest, 1, MPI_UINT64_T, MPI_MIN, comm_.raw()), "MPI_Allreduce",
              "agreeing on the pipelining chunk size");
  options_.chunk_bytes = smallest;
}

Transfers::~Transfers() {
  for (auto* steps : {&sends_, &recvs_})
    for (auto& step : *steps)
      if (step.event) device_->release_copy(step.event);
}

std::uint8_t* Transfers::map(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, bool for_send) {
  for (const auto& m : mappings_)
    if (m.buffer == &buffer && m.offset == offset && m.bytes == bytes && m.for_send == for_send) return m.host;
  std::uint8_t* host = device_->map(buffer.memory(), offset, bytes, for_send);
  mappings_.push_back({&buffer, offset, bytes, for_send, host});
  return host;
}

void Transfers::post(std::vector<Step>& steps, Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer,
                     int tag, Route peer_route, bool for_send, std::uint64_t room) {
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset)
    throw UsageError("a transfer of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                     " does not fit a buffer of " + std::to_string(buffer.bytes()) + " bytes");
  // Until the engine holds a step of this batch, host memory goes to MPI
  // at once; after that it queues behind the engine's steps, because MPI
  // matches messages in the order they are posted.
  if (sends_.empty() && recvs_.empty() && is_plain(buffer, bytes, peer_route)) {
    std::uint8_t* data = buffer.host_data() + offset;
    if (for_send)
      post_plain_send(&data, 1, static_cast<int>(bytes), peer, tag);
    else
      post_plain_recv(&data, 1, static_cast<int>(bytes), peer, tag);
    return;
  }
  const Route route = route_of(buffer);
  if (route != Route::Direct && !device_)
    throw UsageError(mem_kind_name(buffer.kind()) + " needs an OpenCL device, and none was opened");
  const bool chunked = chunked_wire(route, peer_route);
  const std::uint64_t piece = chunked ? options_.chunk_bytes : kMaxWireChunk;
  std::uint8_t* base = route == Route::Direct   ? buffer.host_data() + offset
                       : route == Route::Mapped ? map(buffer, offset, bytes, for_send)
                                                : nullptr;
  // Where a staged copy may be widened to the device's smallest fast copy:
  // a read, anywhere in the buffer; a write, only past the message's end
  // (earlier chunks' writes must not cover later ones), inside `room`.
  const std::uint64_t room_end = std::min(buffer.bytes(), offset + std::max(room, bytes));
  const std::vector<Chunk> chunks = plan_chunks(bytes, piece, chunked || bytes > kMaxWireChunk);
  for (const Chunk& chunk : chunks) {
    Step step{&buffer, offset + chunk.offset, chunk.bytes, peer, tag, route == Route::Staged};
    step.copy_bytes = chunk.bytes;
    if (for_send && chunk.bytes < options_.fast_to_host)
      step.copy_bytes = std::min(options_.fast_to_host, buffer.bytes() - step.offset);
    else if (!for_send && chunk.bytes < options_.fast_to_device && &chunk == &chunks.back())
      step.copy_bytes = std::min(options_.fast_to_device, room_end - step.offset);
    step.copy_bytes = std::max(step.copy_bytes, chunk.bytes);
    has_staged_ |= step.staged;
    if (base) step.host = base + chunk.offset;
    if (timeline_ && step.staged) {
      step.record = static_cast<long>(timeline_->chunks.size());
      timeline_->chunks.push_back({for_send, steps.size(), step.offset, step.bytes});
    }
    steps.push_back(step);
  }
}

void Transfers::post_send(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer, int tag,
                          Route peer_route) {
  post(sends_, buffer, offset, bytes, peer, tag, peer_route, true, 0);
}

void Transfers::post_recv(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes, int peer, int tag,
                          Route peer_route, std::uint64_t room) {
  post(recvs_, buffer, offset, bytes, peer, tag, peer_route, false, room);
}

// `messages` new requests at the end of `requests`, grown once for a whole
// window, each MPI_REQUEST_NULL until its post fills it (a failed post
// leaves no request undefined for wait_all).
namespace {
MPI_Request* more_requests(std::vector<MPI_Request>& requests, int messages) {
  const std::size_t first = requests.size();
  requests.resize(first + messages, MPI_REQUEST_NULL);
  return requests.data() + first;
}
}  // namespace

void Transfers::post_plain_send(const std::uint8_t* const* data, int messages, int count, int peer, int tag) {
  MPI_Request* requests = more_requests(direct_sends_, messages);
  const MPI_Comm comm = comm_.raw();  // read once, not through comm_ at every call
  for (int i = 0; i < messages; ++i)
    comm_.check(MPI_Isend(data[i], count, MPI_BYTE, peer, tag, comm, &requests[i]), "MPI_Isend",
                [&] { return wire_context(true, count, peer); });
}

void Transfers::post_plain_recv(std::uint8_t* const* data, int messages, int count, int peer, int tag) {
  MPI_Request* requests = more_requests(direct_recvs_, messages);
  const MPI_Comm comm = comm_.raw();  // read once, not through comm_ at every call
  for (int i = 0; i < messages; ++i)
    comm_.check(MPI_Irecv(data[i], count, MPI_BYTE, peer, tag, comm, &requests[i]), "MPI_Irecv",
                [&] { return wire_context(false, count, peer); });
}

std::string Transfers::wire_context(bool send, std::uint64_t bytes, int peer) {
  return send ? "sending " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer)
              : "receiving " + std::to_string(bytes) + " bytes from rank " + std::to_string(peer);
}

bool Transfers::is_plain(const Buffer& buffer, std::uint64_t bytes, Route peer_route) const {
  const Route route = route_of(buffer);
  return route == Route::Direct && !chunked_wire(route, peer_route) && bytes <= kMaxWireChunk &&
         bytes <= buffer.bytes();
}

void Transfers::send(Buffer& buffer, std::uint64_t bytes, int peer, int tag, Route peer_route) {
  // Host memory to an unchunked wire is one MPI call, as in OMB: no engine on the latency path.
  if (is_plain(buffer, bytes, peer_route)) {
    send_plain(buffer.host_data(), static_cast<int>(bytes), peer, tag);
    return;
  }
  post_send(buffer, 0, bytes, peer, tag, peer_route);
  wait_all();
}

void Transfers::recv(Buffer& buffer, std::uint64_t bytes, int peer, int tag, Route peer_route, std::uint64_t room) {
  if (is_plain(buffer, bytes, peer_route)) {
    recv_plain(buffer.host_data(), static_cast<int>(bytes), peer, tag);
    return;
  }
  post_recv(buffer, 0, bytes, peer, tag, peer_route, room);
  wait_all();
}

std::uint8_t* Transfers::slot_memory(std::vector<std::unique_ptr<Buffer>>& slots, int slot) {
  if (slots.size() < static_cast<std::size_t>(options_.slots)) slots.resize(options_.slots);
  // A slot holds a chunk, or a widened copy of a shorter one.
  const std::uint64_t bytes = std::max({options_.chunk_bytes, options_.fast_to_device, options_.fast_to_host});
  if (!slots[slot]) slots[slot] = std::make_unique<Buffer>(device_, MemKind::PinnedHost, bytes);
  return slots[slot]->host_data();
}

void Transfers::record_copy(const Step& step) {
  mark(step, &ChunkTimes::copy_done);
  const CopyProfile profile =
      device_->copy_profile(step.event, "reading a staging copy's profiling times for the timeline");
  const std::uint64_t ns[4] = {profile.queued, profile.submit, profile.start, profile.end};
  // Differences in integers (a double cannot hold nanoseconds since an epoch
  // exactly), signed so that a runtime stamping out of order shows as negative.
  auto seconds = [&](int from, int to) {
    return static_cast<double>(static_cast<std::int64_t>(ns[to] - ns[from])) * 1e-9;
  };
  ChunkTimes& times = timeline_->chunks[step.record];
  times.queued_to_submit = seconds(0, 1);
  times.submit_to_start = seconds(1, 2);
  times.start_to_end = seconds(2, 3);
}

bool Transfers::advance_sends() {
  bool progressed = false;
  send_slot_owner_.resize(options_.slots, -1);
  // Stage chunks into free slots, in order: a slot is free once the send
  // that used it last has left.
  while (send_next_stage_ < sends_.size()) {
    Step& step = sends_[send_next_stage_];
    if (!step.staged) {
      ++send_next_stage_;
      continue;
    }
    const int slot = static_cast<int>(send_staged_ % options_.slots);
    const long owner = send_slot_owner_[slot];
    if (owner >= 0 && sends_[owner].state != State::Done) break;
    step.slot = slot;
    step.host = slot_memory(send_slots_, slot);
    step.event = device_->start_read(step.buffer->memory(), step.offset, step.host, step.copy_bytes,
                                     "staging a chunk to the host");
    if (step.record >= 0) mark(step, &ChunkTimes::copy_enqueued);
    send_slot_owner_[slot] = static_cast<long>(send_next_stage_);
    step.state = State::Staging;
    ++device_copies_;
    ++send_staged_;
    ++send_next_stage_;
    progressed = true;
  }
  // Put chunks on the wire in posting order, each once it is in host memory.
  while (send_next_wire_ < sends_.size()) {
    Step& step = sends_[send_next_wire_];
    if (step.staged) {
      if (step.state != State::Staging || !device_->copy_done(step.event, "staging a chunk to the host")) break;
      if (step.record >= 0) record_copy(step);
      device_->release_copy(step.event);
      step.event = nullptr;
      --device_copies_;
    }
    comm_.check(
        MPI_Isend(step.host, static_cast<int>(step.bytes), MPI_BYTE, step.peer, step.tag, comm_.raw(), &step.request),
        "MPI_Isend", [&] { return wire_context(true, step.bytes, step.peer); });
    if (step.record >= 0) mark(step, &ChunkTimes::mpi_posted);
    step.state = State::OnWire;
    requests_stale_ = true;
    ++on_wire_;
    ++send_next_wire_;
    progressed = true;
  }
  return progressed;
}

bool Transfers::advance_recvs() {
  bool progressed = false;
  recv_slot_owner_.resize(options_.slots, -1);
  // Post receives in order; a staged one waits for a slot whose last chunk
  // has been copied on to the device.
  while (recv_next_post_ < recvs_.size()) {
    Step& step = recvs_[recv_next_post_];
    if (step.staged) {
      const int slot = static_cast<int>(recv_staged_ % options_.slots);
      const long owner = recv_slot_owner_[slot];
      if (owner >= 0 && recvs_[owner].state != State::Done) break;
      step.slot = slot;
      step.host = slot_memory(recv_slots_, slot);
      recv_slot_owner_[slot] = static_cast<long>(recv_next_post_);
      ++recv_staged_;
    }
    comm_.check(
        MPI_Irecv(step.host, static_cast<int>(step.bytes), MPI_BYTE, step.peer, step.tag, comm_.raw(), &step.request),
        "MPI_Irecv", [&] { return wire_context(false, step.bytes, step.peer); });
    if (step.record >= 0) mark(step, &ChunkTimes::mpi_posted);
    step.state = State::OnWire;
    requests_stale_ = true;
    ++on_wire_;
    ++recv_next_post_;
    progressed = true;
  }
  // Copies to the device finish in the order they were queued.
  while (recv_next_unstage_ < recvs_.size()) {
    Step& step = recvs_[recv_next_unstage_];
    if (step.state == State::Done) {
      ++recv_next_unstage_;
      continue;
    }
    if (step.state != State::Unstaging || !device_->copy_done(step.event, "copying a chunk to the device")) break;
    if (step.record >= 0) record_copy(step);
    device_->release_copy(step.event);
    step.event = nullptr;
    step.state = State::Done;
    --device_copies_;
    ++recv_next_unstage_;
    progressed = true;
  }
  return progressed;
}

bool Transfers::complete_requests(bool block) {
  // Rebuilt only when requests were posted or completed since: a batch of
  // many chunks polls far more often than that.
  if (requests_stale_) {
    requests_.clear();
    request_steps_.clear();
    for (auto* steps : {&sends_, &recvs_})
      for (auto& step : *steps)
        if (step.state == State::OnWire) {
          requests_.push_back(step.request);
          request_steps_.push_back(&step);
        }
    requests_stale_ = false;
  }
  const int n = static_cast<int>(requests_.size());
  completed_.resize(requests_.size());
  int count = 0;
  if (block)
    comm_.check(MPI_Waitsome(n, requests_.data(), &count, completed_.data(), MPI_STATUSES_IGNORE), "MPI_Waitsome");
  else
    comm_.check(MPI_Testsome(n, requests_.data(), &count, completed_.data(), MPI_STATUSES_IGNORE), "MPI_Testsome");
  if (count == MPI_UNDEFINED || count == 0) return false;
  requests_stale_ = true;
  for (int i = 0; i < count; ++i) {
    Step& step = *request_steps_[completed_[i]];
    step.request = MPI_REQUEST_NULL;
    if (step.record >= 0) mark(step, &ChunkTimes::mpi_done);
    --on_wire_;
    const bool is_recv = &step >= recvs_.data() && &step < recvs_.data() + recvs_.size();
    if (is_recv && step.staged) {
      step.event = device_->start_write(step.buffer->memory(), step.offset, step.host, step.copy_bytes,
                                        "copying a received chunk to the device");
      if (step.record >= 0) mark(step, &ChunkTimes::copy_enqueued);
      step.state = State::Unstaging;
      ++device_copies_;
    } else {
      step.state = State::Done;
    }
  }
  return count > 0;
}

namespace {

// Waiting without a core to spare: spin briefly (a completion is often
// microseconds away), then sleep in growing steps, so that a rank waiting
// for its peer leaves the core to the threads doing the copies. On a CPU
// device those threads are the runtime's, and a spinning rank halves them.
class Backoff {
 public:
  Backoff() {
    previous_slack_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  }
  ~Backoff() {
    if (previous_slack_ > 0) prctl(PR_SET_TIMERSLACK, previous_slack_, 0, 0, 0);
  }
  void progressed() { idle_polls_ = 0; }
  void pause() {
    if (++idle_polls_ <= kSpinPolls) return;
    const long step_us = std::min<long>(kMaxSleepUs, (idle_polls_ - kSpinPolls) * 2);
    const timespec sleep{0, step_us * 1000};
    nanosleep(&sleep, nullptr);
  }

 private:
  static constexpr int kSpinPolls = 64;
  static constexpr long kMaxSleepUs = 50;
  int idle_polls_ = 0;
  int previous_slack_ = 0;
};

}  // namespace

void Transfers::wait_direct() {
  // Sends first, then receives, each with one MPI_Waitall, as OMB's windows wait.
  for (auto* requests : {&direct_sends_, &direct_recvs_})
    if (!requests->empty())
      comm_.check(MPI_Waitall(static_cast<int>(requests->size()), requests->data(), MPI_STATUSES_IGNORE), "MPI_Waitall",
                  "waiting for transfers of host memory");
}

void Transfers::wait_all() {
  // Requests posted straight to MPI are waited for last: the engine's
  // MPI calls progress them meanwhile.
  if (sends_.empty() && recvs_.empty()) {
    wait_direct();
    finish_batch();
    return;
  }
  // A batch without staging only waits in MPI, as OMB does.
  if (!has_staged_) {
    advance_sends();  // without staging every step goes on the wire at once
    advance_recvs();
    while (on_wire_ > 0) complete_requests(true);
    wait_direct();
    finish_batch();
    return;
  }
  // With device copies in flight the engine must notice both MPI and
  // OpenCL completions. An accelerator copies with its own engines, so the
  // rank polls both and keeps MPI progressing (without single-copy shared
  // memory, a sender's progress moves its data). A CPU device copies with
  // the host's cores, so there a rank whose next send waits for its chunk
  // sleeps on that copy, and otherwise backs off instead of spinning.
  const bool copies_need_host_cores = copies_use_host_cores(device_);
  std::optional<Backoff> backoff;
  if (copies_need_host_cores) backoff.emplace();
  while (true) {
    bool progressed = advance_sends();
    progressed |= advance_recvs();
    if (send_next_wire_ == sends_.size() && recv_next_post_ == recvs_.size() && on_wire_ == 0 && device_copies_ == 0)
      break;
    if (copies_need_host_cores && !progressed && send_next_wire_ < sends_.size() &&
        sends_[send_next_wire_].state == State::Staging) {
      device_->wait_copy(sends_[send_next_wire_].event, "waiting for a staging copy");
      continue;
    }
    if (on_wire_ > 0) {
      // With no copy in flight only an MPI completion can move the batch on,
      // so wait inside MPI, as OMB does, instead of polling it between other
      // work (on a CPU device the backoff below leaves the cores to copies).
      const bool only_mpi_can_progress = !progressed && device_copies_ == 0 && !copies_need_host_cores;
      progressed |= complete_requests(only_mpi_can_progress);
    }
    if (!backoff) continue;
    if (progressed)
      backoff->progressed();
    else
      backoff->pause();
  }
  wait_direct();
  finish_batch();
}

void Transfers::finish_batch() {
  for (const auto& m : mappings_) device_->unmap(m.buffer->memory(), m.host, m.for_send);
  if (!mappings_.empty()) device_->finish();
  sends_.clear();
  recvs_.clear();
  direct_sends_.clear();
  direct_recvs_.clear();
  mappings_.clear();
  on_wire_ = device_copies_ = 0;
  requests_stale_ = true;
  has_staged_ = false;
  send_next_stage_ = send_next_wire_ = send_staged_ = 0;
  recv_next_post_ = recv_next_unstage_ = recv_staged_ = 0;
  std::fill(send_slot_owner_.begin(), send_slot_owner_.end(), -1);
  std::fill(recv_slot_owner_.begin(), recv_slot_owner_.end(), -1);
}

}  // namespace fpgacomm
