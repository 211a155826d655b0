#include "core/interrupt.hpp"

#include <unistd.h>

#include <csignal>
#include <fstream>

namespace fpgacomm {
namespace {

// SIGHUP too: a closed terminal ends a run as SIGTERM does. SIGALRM: the
// time limit's request to stop and save (cli/command.py's watchdog).
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM};
constexpr int kCount = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction previous[kCount];  // the handlers installed before ours, per kSignals entry
std::atomic<bool> claimed{false};

// Where the first interrupting signal came from (siginfo's sender).
enum Origin : int { kUnknown, kTerminal, kParent };
std::atomic<int> origin{kUnknown};

int index_of(int signal) {
  for (int i = 0; i < kCount; ++i) {
    if (kSignals[i] == signal) return i;
  }
  return 0;
}

void on_signal(int signal, siginfo_t* info, void* context) {
  int none = 0;
  if (pending_interrupt.compare_exchange_strong(none, signal) && info != nullptr) {
    // The terminal driver sends Ctrl-C's SIGINT (and a hang-up's SIGHUP) as the kernel.
    if (info->si_code == SI_KERNEL)
      origin.store(kTerminal);
    else if (info->si_code == SI_USER && info->si_pid == getppid())
      origin.store(kParent);
  }
  const struct sigaction& before = previous[index_of(signal)];
  if (before.sa_flags & SA_SIGINFO) {
    if (before.sa_sigaction) before.sa_sigaction(signal, info, context);
  } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN && before.sa_handler) {
    before.sa_handler(signal);
  }
}

}  // namespace

Interrupted::Interrupted(int signal) : signal_(signal), message_(interrupt_text(signal)) {}

bool claim_interrupt() { return !claimed.exchange(true); }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGALRM:
      return "SIGALRM";
    default:
      return "signal " + std::to_string(signal);
  }
}

namespace {

// The name of process `pid` (/proc/PID/comm), "" where unknown.
std::string process_name(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace

std::string interrupt_text(int signal) {
  if (signal == SIGALRM) return "time limit (--timeout)";
  std::string text = "interrupted by " + signal_name(signal);
  switch (origin.load()) {
    case kTerminal:
      return text + (signal == SIGINT ? " (Ctrl-C)" : " (from the terminal)");
    case kParent: {
      // Named where it is a launcher, which signals its ranks when it is itself
      // interrupted (Open MPI's mpirun sends SIGTERM whatever it got): the user
      // learns why a Ctrl-C reads as SIGTERM. Any other parent is no news.
      const std::string parent = process_name(getppid());
      for (const char* launcher : {"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "slurmstepd"})
        if (parent == launcher) return text + " from " + parent;
      return text;
    }
    default:
      return text;
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
