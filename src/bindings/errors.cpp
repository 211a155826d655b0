#include "bindings/bindings.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {
namespace {

// Raises `type(message)` with the attribute `agreed` (see Error::agreed).
void raise(PyObject* type, const Error& error) {
  py::object instance = py::reinterpret_borrow<py::object>(type)(error.what());
  instance.attr("agreed") = error.agreed();
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  // pybind11 tries the newest translator first, so the base class comes first.
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<UsageError> usage(m, "UsageError", error.ptr());
  static py::exception<ApiError> api(m, "ApiError", error.ptr());
  static py::exception<ClError> cl(m, "ClError", api.ptr());
  static py::exception<MpiError> mpi(m, "MpiError", api.ptr());
  // A KeyboardInterrupt, so that `except Exception` lets it pass, as Python's own.
  static py::exception<Interrupted> interrupted(m, "Interrupted", PyExc_KeyboardInterrupt);
  interrupted.doc() = "A run stopped by SIGINT, SIGTERM or SIGHUP; `signal` holds its number.";
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const Interrupted& e) {
      py::object instance = py::reinterpret_borrow<py::object>(interrupted.ptr())(e.what());
      instance.attr("signal") = e.signal();
      PyErr_SetObject(interrupted.ptr(), instance.ptr());
    } catch (const UsageError& e) {
      raise(usage.ptr(), e);
    } catch (const ClError& e) {
      raise(cl.ptr(), e);
    } catch (const MpiError& e) {
      raise(mpi.ptr(), e);
    } catch (const Error& e) {
      raise(error.ptr(), e);
    }
  });
}

}  // namespace fpgacomm::bindings
