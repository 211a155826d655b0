// Interrupts (SIGINT, SIGTERM, SIGHUP, and SIGALRM, which the time limit
// sends its own main thread) that reach the C++ loops: Python runs its
// signal handlers only between calls into the core, so a sweep of minutes
// would otherwise hold an interrupt until it ends. A front end installs the
// handler once; every benchmark loop calls check_interrupt() once per
// iteration, outside the timed region, and leaves by throwing Interrupted.
#pragma once
#include <atomic>
#include <string>

#include "core/error.hpp"

namespace fpgacomm {

// The first interrupting signal's number, 0 while none came. Set from the
// signal handler: a lock-free atomic, so async-signal-safe.
inline std::atomic<int> pending_interrupt{0};

// A benchmark loop stopped by a signal. Not an Error: nothing failed, and the
// front end ends the run with status 128 + signal.
// Its message is interrupt_text(signal).
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  int signal_;
  std::string message_;
};

// True for the first caller only: a loop throwing Interrupted, or Python's
// handler raising it, claims the interrupt, so that one signal raises once
// (Python's handler, chained to ours, runs again after the loop has thrown).
bool claim_interrupt();

// Throws Interrupted when a signal came: one relaxed load while none did.
inline void check_interrupt() {
  if (const int signal = pending_interrupt.load(std::memory_order_relaxed)) {
    claim_interrupt();
    throw Interrupted(signal);
  }
}

// Installs, for SIGINT, SIGTERM, SIGHUP and SIGALRM, a handler that records the signal and
// then calls the handler installed before it (Python's, which raises in
// Python at its next chance). Again after Python replaced it: idempotent.
void install_interrupt_handler();

// "SIGINT", "SIGTERM", "SIGHUP", "SIGALRM", or "signal N".
std::string signal_name(int signal);

// What ended the run, as a Result's incomplete and the ending message say
// it: "time limit (--timeout)" for SIGALRM; else the signal as received,
// with where it came from when that tells the user something: "interrupted
// by SIGINT (Ctrl-C)" from a terminal, "interrupted by SIGTERM from mpirun"
// from the launcher that started this process, "interrupted by SIGHUP".
// The origin is the first interrupting signal's, recorded by the handler.
std::string interrupt_text(int signal);

}  // namespace fpgacomm
