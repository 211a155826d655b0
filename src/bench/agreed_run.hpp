// Starting a benchmark runner on every rank at once: a runner whose
// constructor refuses the parameters on any rank (wrong rank count, bad
// option) makes every rank throw the same error, so none goes on alone.
#pragma once
#include <exception>
#include <memory>

#include "comm/communicator.hpp"

namespace fpgacomm {

template <class Runner, class... Arguments>
auto run_agreed(const Communicator& comm, Arguments&&... arguments) {
  std::unique_ptr<Runner> runner;
  std::exception_ptr failure;
  try {
    runner = std::make_unique<Runner>(comm, std::forward<Arguments>(arguments)...);
  } catch (...) {
    failure = std::current_exception();
  }
  comm.agree(failure);
  return runner->run();
}

}  // namespace fpgacomm
