// A benchmark's per-size hook (bench/size_hook.hpp) calling a Python
// callable: the sweep runs without the GIL, and the hook takes it only for
// the call.
#pragma once
#include <pybind11/pybind11.h>

#include "bench/size_hook.hpp"

namespace fpgacomm::bindings {

// No hook for None; otherwise one calling `callback(row(timing))`, where
// `row` converts the family's timing as its run's final rows do. The
// callable is borrowed: the Python caller holds it for the whole call.
template <class Timing, class Row>
SizeHook<Timing> python_size_hook(const pybind11::object& callback, Row row) {
  if (callback.is_none()) return {};
  return [callable = pybind11::handle(callback), row](const Timing& timing) {
    pybind11::gil_scoped_acquire gil;
    callable(row(timing));
  };
}

}  // namespace fpgacomm::bindings
