#include "comm/calibration.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "cl/buffer.hpp"
#include "cl/check.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

constexpr int kTokenTag = 0x7f10, kWireTag = 0x7f11;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Runs `body` on every rank in turn, rank 0 first, passing an empty token.
template <class Body>
void in_turn(const Communicator& comm, Body&& body) {
  const int n = comm.size(), me = comm.rank();
  if (n == 1) {
    body();
    return;
  }
  char token = 0;
  if (me != 0)
    comm.check(MPI_Recv(&token, 0, MPI_CHAR, me - 1, kTokenTag, comm.raw(), MPI_STATUS_IGNORE), "MPI_Recv",
               "waiting for this rank's turn in the copy calibration");
  body();
  comm.check(MPI_Send(&token, 0, MPI_CHAR, (me + 1) % n, kTokenTag, comm.raw()), "MPI_Send",
             "passing the turn in the copy calibration");
  if (me == 0)
    comm.check(MPI_Recv(&token, 0, MPI_CHAR, n - 1, kTokenTag, comm.raw(), MPI_STATUS_IGNORE), "MPI_Recv",
               "closing a round of the copy calibration");
}

// One copy as the staged engine issues it: enqueued without blocking,
// flushed, waited for; seconds from the enqueue to completion.
double timed_copy(Device& device, bool to_device, cl_mem mem, void* host, std::uint64_t bytes) {
  cl_event event = nullptr;
  const double start = MPI_Wtime();
  if (to_device) {
    cl_check(clEnqueueWriteBuffer(device.to_device_queue(), mem, CL_FALSE, 0, bytes, host, 0, nullptr, &event),
             "clEnqueueWriteBuffer", "calibrating copies to the device");
    cl_check(clFlush(device.to_device_queue()), "clFlush");
  } else {
    cl_check(clEnqueueReadBuffer(device.to_host_queue(), mem, CL_FALSE, 0, bytes, host, 0, nullptr, &event),
             "clEnqueueReadBuffer", "calibrating copies to the host");
    cl_check(clFlush(device.to_host_queue()), "clFlush");
  }
  const cl_int waited = clWaitForEvents(1, &event);
  const double seconds = MPI_Wtime() - start;
  clReleaseEvent(event);
  cl_check(waited, "clWaitForEvents", "waiting for a calibration copy");
  return seconds;
}

std::uint64_t largest(const std::vector<std::uint64_t>& sizes) {
  if (sizes.empty()) throw UsageError("the copy calibration needs at least one size");
  return *std::max_element(sizes.begin(), sizes.end());
}

}  // namespace

std::vector<CopySample> measure_copies(const Communicator& comm, Device& device,
                                       const std::vector<std::uint64_t>& sizes, int repetitions, bool copies) {
  if (repetitions < 1) throw UsageError("the copy calibration needs at least one repetition");
  const std::uint64_t most = std::max<std::uint64_t>(1, largest(sizes));
  Buffer pinned(&device, MemKind::PinnedHost, most);
  Buffer on_device(&device, MemKind::Device, most);
  std::fill(pinned.host_data(), pinned.host_data() + most, std::uint8_t(0x5a));
  std::vector<CopySample> samples;
  for (std::uint64_t bytes : sizes) {
    const std::uint64_t n = std::max<std::uint64_t>(1, bytes);
    std::vector<double> writes, reads;
    // One untimed turn first: the first copy of a size pays for set-up.
    for (int rep = -1; rep < repetitions; ++rep)
      in_turn(comm, [&] {
        if (!copies) return;
        const double w = timed_copy(device, true, on_device.mem(), pinned.host_data(), n);
        const double r = timed_copy(device, false, on_device.mem(), pinned.host_data(), n);
        if (rep >= 0) {
          writes.push_back(w);
          reads.push_back(r);
        }
      });
    samples.push_back({bytes, median(writes), median(reads)});
  }
  return samples;
}

std::vector<double> measure_pipeline(const Communicator& comm, Device& device, std::uint64_t bytes, int messages,
                                     const std::vector<TransferOptions>& candidates, int repetitions, bool stages) {
  if (comm.size() < 2) throw UsageError("measuring the staged pipeline needs at least 2 ranks");
  if (repetitions < 1 || messages < 1)
    throw UsageError("the pipeline calibration needs at least one repetition and one message");
  if (bytes < 1 || bytes > kMaxWireChunk)
    throw UsageError("the pipeline calibration's message of " + std::to_string(bytes) + " bytes is out of range");
  const int me = comm.rank();
  Buffer buffer(&device, stages ? MemKind::Device : MemKind::Host, bytes);
  const Route mine = stages ? Route::Staged : Route::Direct;
  const Route peer = me < 2 ? exchange_route(comm, 1 - me, mine) : Route::Direct;
  std::vector<std::unique_ptr<Transfers>> engines;
  for (TransferOptions options : candidates) {
    options.path = Path::Staged;
    engines.push_back(std::make_unique<Transfers>(comm, &device, options));
  }
  std::vector<std::vector<double>> times(candidates.size());
  char ack = 0;
  for (int rep = -1; rep < repetitions && me < 2; ++rep)
    for (std::size_t i = 0; i < engines.size(); ++i) {
      const double start = MPI_Wtime();
      if (me == 0) {
        for (int m = 0; m < messages; ++m) engines[i]->post_send(buffer, 0, bytes, 1, kWireTag, peer);
        engines[i]->wait_all();
        comm.check(MPI_Recv(&ack, 1, MPI_CHAR, 1, kWireTag + 1, comm.raw(), MPI_STATUS_IGNORE), "MPI_Recv",
                   "waiting for the pipeline calibration's acknowledgement");
      } else {
        for (int m = 0; m < messages; ++m) engines[i]->post_recv(buffer, 0, bytes, 0, kWireTag, peer, bytes);
        engines[i]->wait_all();
        comm.check(MPI_Send(&ack, 1, MPI_CHAR, 0, kWireTag + 1, comm.raw()), "MPI_Send",
                   "acknowledging the pipeline calibration's message");
      }
      if (rep >= 0) times[i].push_back(MPI_Wtime() - start);
    }
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(median(t));
  comm.check(MPI_Bcast(medians.data(), static_cast<int>(medians.size()), MPI_DOUBLE, 0, comm.raw()), "MPI_Bcast",
             "sharing the pipeline calibration");
  return medians;
}

}  // namespace fpgacomm
