// A checked view of an MPI communicator that someone else (mpi4py) owns.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

namespace fpgacomm {

class Communicator {
 public:
  explicit Communicator(MPI_Comm comm);

  MPI_Comm raw() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every MPI return code goes through here (mpi4py sets MPI_ERRORS_RETURN).
  // `context` says what we were doing: text, or a callable returning text,
  // so that hot paths build no string unless the call failed.
  template <class Context = const char*>
  void check(int code, const char* routine, Context&& context = "") const {
    if (code == MPI_SUCCESS) return;
    if constexpr (std::is_invocable_v<Context>)
      fail(code, routine, context());
    else
      fail(code, routine, context);
  }

  void barrier() const;
  std::vector<std::string> host_names() const;
  std::uint64_t sum(std::uint64_t value) const;
  // Element-wise sum across ranks.
  std::vector<double> sum(const std::vector<double>& values) const;

  // A collective verdict. Every rank passes what it caught (or nothing);
  // if any rank failed, every rank throws the same error: the message of
  // the lowest failing rank, prefixed with that rank, as a UsageError when
  // it was one. This keeps one rank's bad device from hanging the others.
  void agree(std::exception_ptr failure) const;

 private:
  [[noreturn]] void fail(int code, const char* routine, const std::string& context) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

// MPI_Get_library_version's text, without a terminator (core/c_text.hpp).
std::string mpi_library_version();

// An integer control variable of the MPI library's tool interface (MPI_T) as
// text, an enumeration's by the name of its value ("none" for Open MPI's
// btl_vader_single_copy_mechanism); "" where the library has none by that name.
std::string mpi_control_variable(const std::string& name);

}  // namespace fpgacomm
