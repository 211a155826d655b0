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
                                       const std::vector<std::uint64_t>& sizes, int repetitions, bool wire,
                                       bool copies) {
  if (repetitions < 1) throw UsageError("the copy calibration needs at least one repetition");
  if (wire && comm.size() < 2) throw UsageError("measuring the wire needs at least 2 ranks");
  const std::uint64_t most = std::max<std::uint64_t>(1, largest(sizes));
  Buffer pinned(&device, MemKind::PinnedHost, most);
  Buffer on_device(&device, MemKind::Device, most);
  std::fill(pinned.host_data(), pinned.host_data() + most, std::uint8_t(0x5a));
  const int me = comm.rank();
  std::vector<CopySample> samples;
  for (std::uint64_t bytes : sizes) {
    const std::uint64_t n = std::max<std::uint64_t>(1, bytes);
    std::vector<double> writes, reads, wires;
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
    if (wire && me < 2) {
      const int peer = 1 - me;
      const int count = static_cast<int>(n);
      for (int rep = -1; rep < repetitions; ++rep) {
        const double start = MPI_Wtime();
        if (me == 0) {
          comm.check(MPI_Send(pinned.host_data(), count, MPI_BYTE, peer, kWireTag, comm.raw()), "MPI_Send");
          comm.check(MPI_Recv(pinned.host_data(), count, MPI_BYTE, peer, kWireTag, comm.raw(), MPI_STATUS_IGNORE),
                     "MPI_Recv");
        } else {
          comm.check(MPI_Recv(pinned.host_data(), count, MPI_BYTE, peer, kWireTag, comm.raw(), MPI_STATUS_IGNORE),
                     "MPI_Recv");
          comm.check(MPI_Send(pinned.host_data(), count, MPI_BYTE, peer, kWireTag, comm.raw()), "MPI_Send");
        }
        if (rep >= 0) wires.push_back((MPI_Wtime() - start) / 2);
      }
    }
    CopySample sample;
    sample.bytes = bytes;
    sample.to_device = median(writes);
    sample.to_host = median(reads);
    sample.wire = median(wires);
    if (wire)
      comm.check(MPI_Bcast(&sample.wire, 1, MPI_DOUBLE, 0, comm.raw()), "MPI_Bcast",
                 "sharing the calibration's wire time");
    samples.push_back(sample);
  }
  return samples;
}

std::vector<double> measure_wire_window(const Communicator& comm, Device& device, std::uint64_t bytes,
                                        const std::vector<int>& in_flight, int repetitions) {
  if (comm.size() < 2) throw UsageError("measuring the wire needs at least 2 ranks");
  if (repetitions < 1) throw UsageError("the wire calibration needs at least one repetition");
  if (bytes < 1 || bytes > (std::uint64_t(1) << 30))
    throw UsageError("the wire calibration's message of " + std::to_string(bytes) + " bytes is out of range");
  const int most = in_flight.empty() ? 0 : *std::max_element(in_flight.begin(), in_flight.end());
  if (most < 1 || *std::min_element(in_flight.begin(), in_flight.end()) < 1)
    throw UsageError("the wire calibration needs at least one message in flight");
  const int me = comm.rank();
  std::vector<std::unique_ptr<Buffer>> slots;
  if (me < 2)
    for (int i = 0; i < most; ++i) slots.push_back(std::make_unique<Buffer>(&device, MemKind::PinnedHost, bytes));
  std::vector<double> rates;
  const int count = static_cast<int>(bytes);
  // Each repetition moves the same bytes whatever the slots: 4 x most messages.
  for (int k : in_flight) {
    std::vector<double> times;
    const int messages = 4 * most;
    for (int rep = -1; rep < repetitions && me < 2; ++rep) {
      char ack = 0;
      const double start = MPI_Wtime();
      std::vector<MPI_Request> requests(k, MPI_REQUEST_NULL);
      // Up to k messages in flight, each slot reused once its message is done.
      for (int m = 0; m < messages; ++m) {
        const int slot = m % k;
        if (requests[slot] != MPI_REQUEST_NULL)
          comm.check(MPI_Wait(&requests[slot], MPI_STATUS_IGNORE), "MPI_Wait");
        std::uint8_t* data = slots[slot]->host_data();
        if (me == 0)
          comm.check(MPI_Isend(data, count, MPI_BYTE, 1, kWireTag, comm.raw(), &requests[slot]), "MPI_Isend");
        else
          comm.check(MPI_Irecv(data, count, MPI_BYTE, 0, kWireTag, comm.raw(), &requests[slot]), "MPI_Irecv");
      }
      comm.check(MPI_Waitall(k, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      if (me == 0)
        comm.check(MPI_Recv(&ack, 1, MPI_CHAR, 1, kWireTag + 1, comm.raw(), MPI_STATUS_IGNORE), "MPI_Recv");
      else
        comm.check(MPI_Send(&ack, 1, MPI_CHAR, 0, kWireTag + 1, comm.raw()), "MPI_Send");
      if (rep >= 0) times.push_back(MPI_Wtime() - start);
    }
    double rate = me == 0 ? double(bytes) * messages / median(times) : 0;
    comm.check(MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, comm.raw()), "MPI_Bcast", "sharing the wire calibration");
    rates.push_back(rate);
  }
  return rates;
}

}  // namespace fpgacomm
