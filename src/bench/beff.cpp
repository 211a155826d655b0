#include "bench/beff.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "bench/host_memory.hpp"
#include "bench/ring.hpp"
#include "cl/check.hpp"
#include "comm/receive_fault.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace fpgacomm {
namespace {

// A double as Python's str() writes it: the shortest text that reads back,
// whole numbers with ".0" (the command line's float options read so).
std::string float_text(double value) {
  char text[32];
  const std::string shortest(text, std::to_chars(text, text + sizeof text, value).ptr);
  return shortest.find_first_of(".en") == std::string::npos ? shortest + ".0" : shortest;
}

// The tag says which way a message travels, so that with two ranks (left
// and right neighbour are the same rank) each lands in its own buffer.
constexpr int kRightwardTag = 200, kLeftwardTag = 201;
constexpr int kRightward = 0, kLeftward = 1;
// Work-items of the b_eff kernels: enough to fill a GPU, few enough that a
// CPU device's work-group scheduling stays cheap.
constexpr std::uint64_t kKernelItems = 16384;
// The adaptive rule's trial loops stop growing once they last this part of
// the target time; the loop length is then scaled up from them.
constexpr double kTrialShare = 0.1;

std::uint8_t seed_fill(std::uint64_t size) {
  int log2 = 0;
  while ((std::uint64_t(1) << (log2 + 1)) <= size) ++log2;
  return static_cast<std::uint8_t>(log2 & 255);
}

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// An in-order queue of the runner's own: the IEC kernels must run at once,
// as on a board, and an in-order queue runs one kernel at a time.
class Queue {
 public:
  explicit Queue(Device& device) {
    cl_int status = CL_SUCCESS;
    queue_ = clCreateCommandQueue(device.context(), device.info().id, 0, &status);
    cl_check(status, "clCreateCommandQueue", "opening a queue for an IEC kernel");
  }
  ~Queue() { clReleaseCommandQueue(queue_); }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  cl_command_queue get() const { return queue_; }

 private:
  cl_command_queue queue_ = nullptr;
};

std::vector<std::uint8_t> message(std::uint64_t size, std::uint64_t stamp) {
  std::vector<std::uint8_t> bytes(size);
  for (std::uint64_t i = 0; i < size; ++i) bytes[i] = beff_message_byte(i, size, stamp);
  return bytes;
}

class Runner {
 public:
  Runner(const Communicator& comm, Device* device, const BeffOptions& options, const SizeHook<BeffSize>& on_size)
      : comm_(comm), device_(device), options_(options), on_size_(on_size), transfers_(comm, device, staged(options)) {
    options.validate();
    if (options.ring.size() != static_cast<std::size_t>(comm.size()))
      throw UsageError("the ring has " + std::to_string(options.ring.size()) + " positions for " +
                       std::to_string(comm.size()) + " ranks");
    neighbours_ = ring_neighbours(options.ring, comm.rank());
    check_host_memory(comm, host_memory(), "beff", "give a smaller -m or fewer ranks per host");
    if (options.type == BeffType::Iec) {
      open_iec();
      return;
    }
    const MemKind kind = options.type == BeffType::Cpu ? MemKind::Host : MemKind::Device;
    if (is_device_kind(kind) && !device)
      throw UsageError("b_eff --comm-type pcie and kernel need an OpenCL device, and none was opened");
    route_ = choose_route(kind, device, transfers_.options().path);
    const std::uint64_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
    if (is_device_kind(kind) && 4 * largest > device->info().global_mem_bytes)
      throw UsageError("b_eff holds four device buffers of " + std::to_string(largest) +
                       " bytes (to and from both neighbours), more than the " +
                       std::to_string(device->info().global_mem_bytes) + " bytes of global memory of " +
                       device->info().label() + "; use a smaller -m");
    for (auto* buffer : {&send_right_, &send_left_, &recv_left_, &recv_right_})
      *buffer = std::make_unique<Buffer>(device, kind, largest, options.bank);
    if (options.type == BeffType::Kernel) {
      send_kernel_ = device->kernel("beff", "beff_send");
      recv_kernel_ = device->kernel("beff", "beff_recv");
      error_counter_ = std::make_unique<Buffer>(device, MemKind::Device, sizeof(cl_uint));
    }
  }

  // This rank's host memory (docs/METHODS.md, "Host memory of a run"): four
  // host buffers of the largest size (to and from both neighbours), or for
  // device memory the staging slots; the two message-sized copies of the
  // validation; the four messages of an exchange, cut into wire chunks;
  // every rank's repetition times.
  HostMemory host_memory() const {
    HostMemory memory;
    if (options_.sizes.empty()) return memory;
    const double largest = double(*std::max_element(options_.sizes.begin(), options_.sizes.end()));
    const bool host = options_.type == BeffType::Cpu;
    const double chunk = host ? double(kMaxWireChunk) : double(transfers_.options().chunk_bytes);
    if (options_.type != BeffType::Iec) {
      memory.buffers = (host ? 4.0 * largest : 2.0 * transfers_.options().slots * chunk) + 2.0 * largest;
      memory.add_batch(4.0 * std::ceil(largest / chunk), !host, transfers_.options().slots);
    }
    memory.samples = double(options_.repetitions) * double(options_.sizes.size()) * comm_.size();
    return memory;
  }

  // The emulator's channel files belong to this run's wiring: the next run
  // must build the IEC program anew, so that it opens the files of its own.
  ~Runner() {
    if (options_.type != BeffType::Iec || !device_ || !device_->info().emulated) return;
    try {
      device_->release_program("beff_iec");
    } catch (const std::exception& e) {
      std::cerr << "fpgacomm: warning: " << e.what() << "\n";
    }
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  BeffRun run() {
    BeffRun result;
    result.chunk_bytes = transfers_.options().chunk_bytes;
    result.route = options_.type == BeffType::Iec ? "io channels" : route_name(route_);
    for (std::size_t i = 0; i < options_.sizes.size(); ++i) {
      const std::uint64_t size = options_.sizes[i];
      BeffSize timing;
      timing.size = size;
      // One untimed exchange first, as Rabenseifner's pre-loop: first-touch
      // allocations, kernel builds and connection set-up stay out of the times.
      measure(size, 1);
      timing.loop_length = options_.loop_lengths[i] ? options_.loop_lengths[i] : adaptive_loop_length(size);
      std::vector<double> mine;
      for (int r = 0; r < options_.repetitions; ++r) {
        mine.push_back(measure(size, timing.loop_length));
        collect_device_errors();
      }
      validate(size);
      timing.errors = comm_.sum(errors_);
      errors_ = 0;
      timing.times = gather(mine);
      result.sizes.push_back(std::move(timing));
      if (on_size_) on_size_(result.sizes.back());
    }
    return result;
  }

 private:
  static TransferOptions staged(const BeffOptions& options) {
    TransferOptions transfer = options.transfer;
    transfer.path = Path::Staged;  // pcie and kernel cross the host on every exchange
    return transfer;
  }

  // One exchange with both neighbours; the kernel type writes the messages
  // on the device before and checks them there after.
  void exchange(std::uint64_t size) {
    const std::uint64_t sequence = sequence_++;
    move(size, sequence);
    if (options_.type == BeffType::Kernel) launch_recv(size, sequence);
  }

  // The messages of one exchange, from send buffer to receive buffer.
  void move(std::uint64_t size, std::uint64_t sequence) {
    if (route_ == Route::Direct) return exchange_host(size);
    if (options_.type == BeffType::Kernel) launch_send(size, sequence);
    transfers_.post_recv(*recv_left_, 0, size, neighbours_.left, kRightwardTag, route_);
    transfers_.post_recv(*recv_right_, 0, size, neighbours_.right, kLeftwardTag, route_);
    transfers_.post_send(*send_right_, 0, size, neighbours_.right, kRightwardTag, route_);
    transfers_.post_send(*send_left_, 0, size, neighbours_.left, kLeftwardTag, route_);
    transfers_.wait_all();
  }

  // Host buffers go to MPI as they are, with no transfer engine between:
  // the cpu type is the plain MPI exchange HPCC FPGA's cpu mode times.
  void exchange_host(std::uint64_t size) {
    const int count = static_cast<int>(size);
    MPI_Request requests[4];
    comm_.check(
        MPI_Irecv(recv_left_->host_data(), count, MPI_BYTE, neighbours_.left, kRightwardTag, comm_.raw(), &requests[0]),
        "MPI_Irecv", "b_eff: receiving from the left neighbour");
    comm_.check(MPI_Irecv(recv_right_->host_data(), count, MPI_BYTE, neighbours_.right, kLeftwardTag, comm_.raw(),
                          &requests[1]),
                "MPI_Irecv", "b_eff: receiving from the right neighbour");
    comm_.check(MPI_Isend(send_right_->host_data(), count, MPI_BYTE, neighbours_.right, kRightwardTag, comm_.raw(),
                          &requests[2]),
                "MPI_Isend", "b_eff: sending to the right neighbour");
    comm_.check(
        MPI_Isend(send_left_->host_data(), count, MPI_BYTE, neighbours_.left, kLeftwardTag, comm_.raw(), &requests[3]),
        "MPI_Isend", "b_eff: sending to the left neighbour");
    comm_.check(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE), "MPI_Waitall", "b_eff: exchanging with both neighbours");
  }

  // Seconds for `loops` exchanges on this rank, after a barrier (HPCC FPGA:
  // "synchronized with an MPI barrier before every execution"). Device work
  // the loop queued (the receive kernels) is inside the time.
  double measure(std::uint64_t size, std::uint64_t loops) {
    check_interrupt();
    comm_.barrier();
    const double start = MPI_Wtime();
    if (options_.type == BeffType::Iec) {
      stream_iec(size, loops);
    } else {
      for (std::uint64_t i = 0; i < loops; ++i) exchange(size);
    }
    if (device_) device_->finish();
    return MPI_Wtime() - start;
  }

  // HPCC FPGA's IEC mode: no device buffers and no MPI transfers; the four
  // kernels, on four queues, stream and check the messages themselves.
  void open_iec() {
    if (!device_) throw UsageError("b_eff --comm-type iec needs an OpenCL device, and none was opened");
    const DeviceInfo& info = device_->info();
    if (!info.has_extension("cl_intel_channels"))
      throw UsageError("b_eff --comm-type iec needs Intel external channels (cl_intel_channels), and " + info.label() +
                       " on '" + info.platform_name +
                       "' has none; use an Intel FPGA with a b_eff IEC binary (--binary) or Intel's FPGA "
                       "emulator (--device-type fpga), or --comm-type kernel");
    for (const char* name :
         {"beff_iec_recv_left", "beff_iec_recv_right", "beff_iec_send_right", "beff_iec_send_left"}) {
      iec_kernels_.push_back(device_->kernel("beff_iec", name));
      iec_queues_.push_back(std::make_unique<Queue>(*device_));
    }
    error_counter_ = std::make_unique<Buffer>(device_, MemKind::Device, 2 * sizeof(cl_uint));
  }

  // One launch of each IEC kernel for `loops` messages each way; waits for all.
  void stream_iec(std::uint64_t size, std::uint64_t loops) {
    const cl_ulong bytes = size, count = loops, first = sequence_;
    const cl_uint me = static_cast<cl_uint>(comm_.rank());
    const cl_uint left = static_cast<cl_uint>(neighbours_.left), right = static_cast<cl_uint>(neighbours_.right);
    const cl_mem errors = error_counter_->mem();
    // Receivers first: on the emulator a send blocks until its reader is there.
    set_args(iec_kernels_[0], "beff_iec_recv_left", bytes, count, first, left, errors);
    set_args(iec_kernels_[1], "beff_iec_recv_right", bytes, count, first, right, errors);
    set_args(iec_kernels_[2], "beff_iec_send_right", bytes, count, first, me);
    set_args(iec_kernels_[3], "beff_iec_send_left", bytes, count, first, me);
    const std::size_t one = 1;
    for (std::size_t k = 0; k < iec_kernels_.size(); ++k) {
      cl_check(
          clEnqueueNDRangeKernel(iec_queues_[k]->get(), iec_kernels_[k], 1, nullptr, &one, &one, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel", "launching a b_eff IEC kernel");
      cl_check(clFlush(iec_queues_[k]->get()), "clFlush", "launching a b_eff IEC kernel");
    }
    for (const auto& queue : iec_queues_)
      cl_check(clFinish(queue->get()), "clFinish", "waiting for the b_eff IEC kernels");
    sequence_ += loops;
  }

  // Rabenseifner's rule: trial loops doubling until they last a tenth of the
  // target (the slowest rank decides, so every rank agrees), then scaled to
  // the target time.
  std::uint64_t adaptive_loop_length(std::uint64_t size) {
    std::uint64_t loops = 1;
    double slowest = 0;
    for (;;) {
      slowest = slowest_of(measure(size, loops));
      collect_device_errors();
      if (slowest >= kTrialShare * options_.target_time || loops >= options_.max_loop_length) break;
      loops *= 2;
    }
    // Once more at the final length: one descheduled trial must not shrink
    // the loop length (the faster of the two is the machine's speed).
    slowest = std::min(slowest, slowest_of(measure(size, loops)));
    collect_device_errors();
    const double scaled = std::ceil(options_.target_time * static_cast<double>(loops) / std::max(slowest, 1e-9));
    return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(scaled), 1, options_.max_loop_length);
  }

  double slowest_of(double seconds) const {
    double slowest = 0;
    comm_.check(MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm_.raw()), "MPI_Allreduce",
                "agreeing on the b_eff trial time");
    return slowest;
  }

  std::vector<std::vector<double>> gather(const std::vector<double>& mine) const {
    std::vector<double> all(mine.size() * static_cast<std::size_t>(comm_.size()));
    comm_.check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                              static_cast<int>(mine.size()), MPI_DOUBLE, comm_.raw()),
                "MPI_Allgather", "collecting every rank's b_eff times");
    std::vector<std::vector<double>> times;
    for (int rank = 0; rank < comm_.size(); ++rank)
      times.emplace_back(all.begin() + rank * mine.size(), all.begin() + (rank + 1) * mine.size());
    return times;
  }

  // Untimed exchanges in which every message is stamped and checked whole,
  // read back through a fresh host copy; receive buffers are cleared first
  // so that a message that never arrives cannot pass as the previous one.
  // A receive fault (tests) breaks what arrived before the check, the
  // kernel type's on the device included.
  void validate(std::uint64_t size) {
    if (options_.type == BeffType::Iec) return;  // its receive kernels checked every message
    const int me = comm_.rank();
    for (int v = 0; v < options_.validation_iterations; ++v) {
      const std::uint64_t sequence = sequence_;
      if (options_.type != BeffType::Kernel) {
        send_right_->write(message(size, beff_stamp(me, kRightward, sequence)).data(), size);
        send_left_->write(message(size, beff_stamp(me, kLeftward, sequence)).data(), size);
      }
      recv_left_->fill_zero();
      recv_right_->fill_zero();
      comm_.barrier();  // no message may arrive before its buffer is cleared
      ++sequence_;      // the exchange below is number `sequence`
      move(size, sequence);
      if (fault_) {
        (*fault_)(*recv_left_, 0, size);
        (*fault_)(*recv_right_, 0, size);
      }
      if (options_.type == BeffType::Kernel) launch_recv(size, sequence);
      if (device_) device_->finish();
      if (options_.type == BeffType::Kernel) {
        collect_device_errors();
      } else {
        errors_ += count_errors(*recv_left_, size, beff_stamp(neighbours_.left, kRightward, sequence));
        errors_ += count_errors(*recv_right_, size, beff_stamp(neighbours_.right, kLeftward, sequence));
      }
    }
  }

  static std::uint64_t count_errors(const Buffer& buffer, std::uint64_t size, std::uint64_t stamp) {
    std::vector<std::uint8_t> received(size);
    buffer.read(received.data(), size);
    const std::vector<std::uint8_t> expected = message(size, stamp);
    std::uint64_t errors = 0;
    for (std::uint64_t i = 0; i < size; ++i) errors += received[i] != expected[i];
    return errors;
  }

  std::size_t kernel_items(std::uint64_t size) const { return static_cast<std::size_t>(std::min(size, kKernelItems)); }

  void launch_send(std::uint64_t size, std::uint64_t sequence) {
    const cl_mem right = send_right_->mem(), left = send_left_->mem();
    const cl_ulong bytes = size;
    const cl_uchar fill = seed_fill(size);
    const cl_ulong stamp_right = beff_stamp(comm_.rank(), kRightward, sequence);
    const cl_ulong stamp_left = beff_stamp(comm_.rank(), kLeftward, sequence);
    set_args(send_kernel_, "beff_send", right, left, bytes, fill, stamp_right, stamp_left);
    // On the queue that stages to the host, so the copies that follow read
    // the finished message.
    enqueue(send_kernel_, device_->to_host_queue(), size, "beff_send");
  }

  void launch_recv(std::uint64_t size, std::uint64_t sequence) {
    const cl_mem left = recv_left_->mem(), right = recv_right_->mem(), errors = error_counter_->mem();
    const cl_ulong bytes = size;
    const cl_uchar fill = seed_fill(size);
    const cl_ulong stamp_left = beff_stamp(neighbours_.left, kRightward, sequence);
    const cl_ulong stamp_right = beff_stamp(neighbours_.right, kLeftward, sequence);
    set_args(recv_kernel_, "beff_recv", left, right, bytes, fill, stamp_left, stamp_right, errors);
    // After the copies of the received data, on the queue that made them;
    // the next exchange's copies into these buffers queue behind it.
    enqueue(recv_kernel_, device_->to_device_queue(), size, "beff_recv");
  }

  template <class... Args>
  static void set_args(cl_kernel kernel, const char* name, const Args&... args) {
    cl_uint index = 0;
    (cl_check(clSetKernelArg(kernel, index++, sizeof(Args), &args), "clSetKernelArg", name), ...);
  }

  void enqueue(cl_kernel kernel, cl_command_queue queue, std::uint64_t size, const char* name) const {
    const std::size_t items = kernel_items(size);
    cl_check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &items, nullptr, 0, nullptr, nullptr),
             "clEnqueueNDRangeKernel", name);
    cl_check(clFlush(queue), "clFlush", name);
  }

  // Adds the kernel type's device count of wrong bytes to errors_ and
  // clears it (the device checks every message it receives).
  void collect_device_errors() {
    if (options_.type != BeffType::Kernel && options_.type != BeffType::Iec) return;
    device_->finish();
    cl_uint counts[2] = {0, 0};
    const std::size_t slots = options_.type == BeffType::Iec ? 2 : 1;  // IEC: one per receive kernel
    error_counter_->read(counts, slots * sizeof(cl_uint));
    if (counts[0] || counts[1]) error_counter_->fill_zero();
    errors_ += counts[0] + counts[1];
  }

  const Communicator& comm_;
  const ReceiveFault* fault_ = receive_fault(comm_);  // tests only (comm/receive_fault.hpp)
  Device* device_;
  const BeffOptions& options_;
  const SizeHook<BeffSize>& on_size_;
  Transfers transfers_;
  RingNeighbours neighbours_;
  Route route_ = Route::Direct;
  std::unique_ptr<Buffer> send_right_, send_left_, recv_left_, recv_right_, error_counter_;
  cl_kernel send_kernel_ = nullptr, recv_kernel_ = nullptr;
  std::vector<cl_kernel> iec_kernels_;  // receive left, receive right, send right, send left
  std::vector<std::unique_ptr<Queue>> iec_queues_;
  // Every rank runs the same exchanges, so the count names an exchange alike everywhere.
  std::uint64_t sequence_ = 0;
  std::uint64_t errors_ = 0;  // wrong bytes this rank received in the current size
};

}  // namespace

void BeffOptions::validate() const {
  if (sizes.empty()) throw UsageError("no message sizes to run");
  if (loop_lengths.size() != sizes.size()) throw UsageError("b_eff needs one loop length per message size");
  if (repetitions < 1) throw UsageError("repetitions -n must be at least 1, got " + std::to_string(repetitions));
  if (validation_iterations < 0) throw UsageError("validation iterations must not be negative");
  if (target_time <= 0) throw UsageError("--target-time must be positive, got " + float_text(target_time));
}

namespace {
constexpr BeffType kBeffTypes[] = {BeffType::Cpu, BeffType::Pcie, BeffType::Kernel, BeffType::Iec};
}  // namespace

BeffType parse_beff_type(const std::string& name) {
  std::string names;
  for (BeffType type : kBeffTypes) {
    if (name == beff_type_name(type)) return type;
    names += beff_type_name(type) + ", ";
  }
  names.resize(names.size() - 2);
  throw UsageError("unknown b_eff communication type '" + name + "'; choose " + names + " or sim");
}

std::vector<std::string> beff_type_names() {
  std::vector<std::string> names;
  for (BeffType type : kBeffTypes) names.push_back(beff_type_name(type));
  return names;
}

std::string beff_type_name(BeffType type) {
  switch (type) {
    case BeffType::Cpu:
      return "cpu";
    case BeffType::Pcie:
      return "pcie";
    case BeffType::Kernel:
      return "kernel";
    case BeffType::Iec:
      return "iec";
  }
  return "?";
}

std::uint64_t beff_stamp(int sender, int direction, std::uint64_t sequence) {
  const std::uint64_t origin = static_cast<std::uint64_t>(sender) << 1 | static_cast<std::uint64_t>(direction);
  // The low byte, all a 1-byte message carries, counts up with the
  // sequence, so a stale or duplicated message never matches the one
  // expected (within 255 exchanges); the other bytes are a hash of all three.
  const std::uint64_t low = (mix(origin) + sequence) & 0xFF;
  return (mix(mix(sequence) ^ origin) & ~std::uint64_t(0xFF)) | low;
}

std::uint8_t beff_message_byte(std::uint64_t index, std::uint64_t size, std::uint64_t stamp) {
  const std::uint8_t fill = seed_fill(size);
  if (index < 8) return fill ^ static_cast<std::uint8_t>(stamp >> (8 * index));
  if (index + 8 >= size) return fill ^ static_cast<std::uint8_t>(~stamp >> (8 * (size - 1 - index)));
  return fill;
}

BeffRun run_beff(const Communicator& comm, Device* device, const BeffOptions& options,
                 const SizeHook<BeffSize>& on_size) {
  std::unique_ptr<Runner> runner;
  std::exception_ptr failure;
  try {
    runner = std::make_unique<Runner>(comm, device, options, on_size);
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  return runner->run();
}

}  // namespace fpgacomm
