#include "core/interrupt.hpp"

#include <csignal>

namespace fpgacomm {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
struct sigaction previous[2];  // the handlers installed before ours, per kSignals entry
std::atomic<bool> claimed{false};

void on_signal(int signal, siginfo_t* info, void* context) {
  int none = 0;
  pending_interrupt.compare_exchange_strong(none, signal);
  const struct sigaction& before = previous[signal == SIGINT ? 0 : 1];
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
    default: return "signal " + std::to_string(signal);
  }
}

void install_interrupt_handler() {
  for (int i = 0; i < 2; ++i) {
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
