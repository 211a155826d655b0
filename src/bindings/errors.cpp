#include "core/error.hpp"

#include "bindings/bindings.hpp"

namespace py = pybind11;

namespace fpgacomm::bindings {

void bind_errors(py::module_& m) {
  // pybind11 tries the newest translator first, so the base class comes first.
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<UsageError> usage(m, "UsageError", error.ptr());
  static py::exception<ApiError> api(m, "ApiError", error.ptr());
  static py::exception<ClError> cl(m, "ClError", api.ptr());
  static py::exception<MpiError> mpi(m, "MpiError", api.ptr());
  static py::exception<ValidationError> validation(m, "ValidationError", error.ptr());
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const UsageError& e) {
      usage(e.what());
    } catch (const ClError& e) {
      cl(e.what());
    } catch (const MpiError& e) {
      mpi(e.what());
    } catch (const ValidationError& e) {
      validation(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
}

}  // namespace fpgacomm::bindings
