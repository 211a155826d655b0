#include <csignal>

#include "check.hpp"
#include "core/interrupt.hpp"

using namespace fpgacomm;

namespace {
volatile std::sig_atomic_t chained = 0;  // what the handler installed before ours saw
void earlier_handler(int signal) { chained = signal; }
}  // namespace

int main() {
  check_interrupt();  // no signal yet: nothing thrown
  std::signal(SIGTERM, &earlier_handler);
  install_interrupt_handler();
  install_interrupt_handler();  // again: ours is not chained to itself
  std::raise(SIGTERM);
  CHECK(pending_interrupt.load() == SIGTERM);
  CHECK(chained == SIGTERM);  // the earlier handler (Python's, in the module) still runs
  CHECK_THROWS(Interrupted, check_interrupt(), "interrupted by SIGTERM");
  try {
    check_interrupt();
  } catch (const Interrupted& stop) {
    CHECK(stop.signal() == SIGTERM);
  }
  // The loop that threw claimed the interrupt: Python's handler must not raise it again.
  CHECK(!claim_interrupt());
  std::raise(SIGINT);  // a later signal keeps the first one's number
  CHECK(pending_interrupt.load() == SIGTERM);
  CHECK(signal_name(SIGINT) == "SIGINT");
  return check::failures;
}
