// Benchmark options (src/bench/*Options) as Python classes, in the manner of
// the fabric's FabricSpec: built from keywords, every field readable and
// writable, and validate() refusing what no run can take before any device
// is opened.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "core/error.hpp"

namespace fpgacomm::bindings {

// Runs `check`. A UsageError from it depends on the options alone, so every
// rank given the same options raises it alike: it leaves marked agreed
// (Error::agreed), and a front end reports it once.
template <class Check>
decltype(auto) alike_on_every_rank(Check&& check) {
  try {
    return std::forward<Check>(check)();
  } catch (UsageError& error) {
    error.set_agreed();
    throw;
  }
}

// A property of `Options` whose Python value is text, parsed on assignment
// (a memory kind, a datatype, a path); a bad name is an agreed UsageError.
template <class Options, class Value>
void text_property(pybind11::class_<Options>& cls, const char* name, Value Options::*field,
                   std::string (*to_text)(Value), Value (*parse)(const std::string&), const char* doc) {
  cls.def_property(
      name, [field, to_text](const Options& options) { return to_text(options.*field); },
      [field, parse](Options& options, const std::string& text) {
        options.*field = alike_on_every_rank([&] { return parse(text); });
      },
      doc);
}

// The class of `Options`: default construction, and construction from
// keywords naming its fields (a TypeError names one it has not).
template <class Options>
pybind11::class_<Options> options_class(pybind11::module_& m, const char* name, const char* doc) {
  namespace py = pybind11;
  py::class_<Options> cls(m, name, doc);
  cls.def(py::init<>());
  cls.def(py::init([name](const py::kwargs& fields) {
            py::object options = py::type::of<Options>()();
            for (const auto& [key, value] : fields) {
              if (!py::hasattr(options, key))
                throw py::type_error(std::string(name) + " has no field '" + py::str(key).cast<std::string>() + "'");
              py::setattr(options, key, value);
            }
            return options.cast<Options>();
          }),
          "Every field not given keeps its default.");
  return cls;
}

// options_class with validate(), for options that have one.
template <class Options>
pybind11::class_<Options> validated_options_class(pybind11::module_& m, const char* name, const char* doc) {
  return options_class<Options>(m, name, doc)
      .def(
          "validate", [](const Options& options) { alike_on_every_rank([&] { options.validate(); }); },
          "Raises the agreed UsageError naming the first parameter no run can take, and its fix.");
}

}  // namespace fpgacomm::bindings
