// Breaking received data on purpose, for tests only: a test attaches a
// ReceiveFault to a communicator of its own (fpgacomm._core.testing), and a
// benchmark run over that communicator applies it to each region its
// validation reads, after the timed part of an iteration and before the
// check (docs/METHODS.md, "Faults injected by tests"). The validation code
// does not know it exists, so a test proves that validation catches data
// that arrived wrong. A run looks the fault up once; nothing in a transfer
// consults it, and users' communicators carry none.
#pragma once
#include <cstdint>
#include <functional>

#include "cl/buffer.hpp"
#include "comm/communicator.hpp"

namespace fpgacomm {

using ReceiveFault = std::function<void(Buffer& buffer, std::uint64_t offset, std::uint64_t bytes)>;

// Caches `fault` on `comm` (an MPI attribute), replacing an earlier one;
// freeing the communicator destroys it.
void attach_receive_fault(const Communicator& comm, ReceiveFault fault);

// The fault attached to `comm`, or nullptr.
const ReceiveFault* receive_fault(const Communicator& comm);

}  // namespace fpgacomm
