// Text that a C API wrote into a buffer of known length (MPI's and
// OpenCL's string queries): some count the terminating NUL in the length
// they give (Open MPI's MPI_Get_library_version, OpenCL's info queries), and
// a NUL must not reach a Result, a message or a log. One rule for all of them.
#pragma once
#include <cstddef>
#include <string>

namespace fpgacomm {

// The first `length` characters of `text`, cut at the first NUL.
inline std::string c_text(const char* text, std::size_t length) {
  const std::string value(text, length);
  return value.substr(0, value.find('\0'));
}

}  // namespace fpgacomm
