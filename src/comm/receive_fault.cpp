#include "comm/receive_fault.hpp"

#include <memory>

namespace fpgacomm {
namespace {

// The attribute's key, made by the first attach: until a test attaches a
// fault there is none, and a run's look-up is this one comparison.
int fault_key = MPI_KEYVAL_INVALID;

int destroy_fault(MPI_Comm, int, void* fault, void*) {
  delete static_cast<ReceiveFault*>(fault);
  return MPI_SUCCESS;
}

}  // namespace

void attach_receive_fault(const Communicator& comm, ReceiveFault fault) {
  if (fault_key == MPI_KEYVAL_INVALID)
    comm.check(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, destroy_fault, &fault_key, nullptr),
               "MPI_Comm_create_keyval", "making the key of receive faults");
  auto held = std::make_unique<ReceiveFault>(std::move(fault));
  comm.check(MPI_Comm_set_attr(comm.raw(), fault_key, held.get()), "MPI_Comm_set_attr", "attaching a receive fault");
  held.release();  // the communicator owns it now
}

const ReceiveFault* receive_fault(const Communicator& comm) {
  if (fault_key == MPI_KEYVAL_INVALID) return nullptr;
  void* fault = nullptr;
  int found = 0;
  comm.check(MPI_Comm_get_attr(comm.raw(), fault_key, &fault, &found), "MPI_Comm_get_attr",
             "looking up a receive fault");
  return found ? static_cast<const ReceiveFault*>(fault) : nullptr;
}

}  // namespace fpgacomm
