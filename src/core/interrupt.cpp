#include "core/interrupt.hpp"

#include <csignal>

namespace fpgacomm {
namespace {

// SIGHUP too: a closed terminal ends a run as SIGTERM does.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction previous[kCount];  // the handlers installed before ours, per kSignals entry
std::atomic<bool> claimed{false};

int index_of(int signal) {
  for (int i = 0; i < kCount; ++i) {
    if (kSignals[i] == signal) return i;
  }
  return 0;
}

void on_signal(int signal, siginfo_t* info, void* context) {
  int none = 0;
  pending_interrupt.compare_exchange_strong(none, signal);
  const struct sigaction& before = previous[index_of(signal)];
  if (before.sa_flags & SA_SIGINFO) {
    if (before.sa_sigaction) before.sa_sigaction(signal, info, context);
  } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN && before.sa_handler) {
    before.sa_handler(signal);
  }
}

}  // namespace

Interrupted::Interrupted(int signal)
    : signal_(signal), message_("interrupted by " + signal_name(signal)) {}

bool claim_interrupt() { return !claimed.exchange(true); }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(signal);
  }
}

void install_interrupt_handler() {
  for (int i = 0; i < kCount; ++i) {
    struct sigaction current = {};
    sigaction(kSignals[i], nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &on_signal) continue;  // ours already
    struct sigaction ours = {};
    ours.sa_sigaction = &on_signal;
    // Whether system calls restart stays as it was (Python's handlers let
    // them fail with EINTR, so that Python can run its handler and retry).
    ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
    sigemptyset(&ours.sa_mask);
    sigaction(kSignals[i], &ours, &previous[i]);
  }
}

}  // namespace fpgacomm
