// What a sweep does after each size: every rank calls the hook with that
// size's timing, outside any timed region, so that a front end can print
// the row as it is measured (OSU Micro-Benchmarks prints each size when it
// ends). One shape for every family; the timing type is the family's own.
#pragma once
#include <functional>

namespace fpgacomm {

template <class Timing>
using SizeHook = std::function<void(const Timing&)>;

}  // namespace fpgacomm
