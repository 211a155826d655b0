// Exceptions of the core. Each says what was being done and, where the user
// can act, how to fix it; the bindings map them to Python classes.
#pragma once
#include <stdexcept>
#include <string>

namespace fpgacomm {

// Any failure of the library.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // True when every rank of the communicator raised this same error (see
  // Communicator::agree), so a front end may report it once and exit
  // without aborting the others.
  bool agreed() const { return agreed_; }
  void set_agreed() { agreed_ = true; }

 private:
  bool agreed_ = false;
};

// Bad input: a parameter, an environment variable or a request the device
// cannot meet. The message names the problem and the fix.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A call into an API (OpenCL or MPI) returned an error code.
class ApiError : public Error {
 public:
  ApiError(const std::string& api, const std::string& routine, int code, const std::string& code_name,
           const std::string& context);
  const std::string& routine() const { return routine_; }
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }

 private:
  std::string routine_;
  int code_;
  std::string code_name_;
};

class ClError : public ApiError {
 public:
  ClError(const std::string& routine, int code, const std::string& context);
};

class MpiError : public ApiError {
 public:
  MpiError(const std::string& routine, int code, const std::string& context);
};

}  // namespace fpgacomm
