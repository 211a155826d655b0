#include "comm/communicator.hpp"

#include <cstring>

#include "core/c_text.hpp"
#include "core/error.hpp"

namespace fpgacomm {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS)
    throw MpiError("MPI_Get_library_version", MPI_ERR_OTHER, "");
  return c_text(text, static_cast<std::size_t>(length));
}

std::string mpi_control_variable(const std::string& name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return "";
  std::string value;
  int index = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) == MPI_SUCCESS) {
    char cvar_name[256], description[1024];
    int name_length = sizeof cvar_name, description_length = sizeof description, verbosity = 0, bind = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype = MPI_T_ENUM_NULL;
    MPI_T_cvar_handle handle;
    int count = 0, number = 0;
    if (MPI_T_cvar_get_info(index, cvar_name, &name_length, &verbosity, &type, &enumtype, description,
                            &description_length, &bind, &scope) == MPI_SUCCESS &&
        type == MPI_INT && MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      if (count == 1 && MPI_T_cvar_read(handle, &number) == MPI_SUCCESS) {
        value = std::to_string(number);
        // An enumeration's value by its name ("none", "cma"), as ompi_info prints it.
        int items = 0, enum_name_length = sizeof cvar_name;
        if (enumtype != MPI_T_ENUM_NULL &&
            MPI_T_enum_get_info(enumtype, &items, cvar_name, &enum_name_length) == MPI_SUCCESS) {
          for (int i = 0; i < items; ++i) {
            int item = 0, item_length = sizeof cvar_name;
            if (MPI_T_enum_get_item(enumtype, i, &item, cvar_name, &item_length) == MPI_SUCCESS && item == number)
              value = c_text(cvar_name, std::strlen(cvar_name));
          }
        }
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return value;
}

MpiError::MpiError(const std::string& routine, int code, const std::string& context)
    : ApiError(
          "MPI", routine, code,
          [code] {
            char text[MPI_MAX_ERROR_STRING];
            int length = 0;
            if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return std::string("unknown MPI error");
            return c_text(text, static_cast<std::size_t>(length));
          }(),
          context) {}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw UsageError("MPI is not initialised (import mpi4py.MPI first) or already finalised");
  if (comm == MPI_COMM_NULL) throw UsageError("the communicator is MPI_COMM_NULL");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Communicator::fail(int code, const char* routine, const std::string& context) const {
  throw MpiError(routine, code, "on rank " + std::to_string(rank_) + (context.empty() ? "" : ", " + context));
}

void Communicator::barrier() const { check(MPI_Barrier(comm_), "MPI_Barrier"); }

std::vector<std::string> Communicator::host_names() const {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm_),
        "MPI_Allgather", "gathering host names");
  std::vector<std::string> hosts;
  for (int r = 0; r < size_; ++r)
    hosts.push_back(c_text(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME));
  return hosts;
}

std::uint64_t Communicator::sum(std::uint64_t value) const {
  std::uint64_t total = 0;
  check(MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return total;
}

std::vector<double> Communicator::sum(const std::vector<double>& values) const {
  std::vector<double> total(values.size());
  check(MPI_Allreduce(values.data(), total.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, comm_),
        "MPI_Allreduce");
  return total;
}

void Communicator::agree(std::exception_ptr failure) const {
  int my_kind = 0;  // 0 fine, 1 usage error, 2 any other failure
  std::string message;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const UsageError& e) {
      my_kind = 1;
      message = e.what();
    } catch (const std::exception& e) {
      my_kind = 2;
      message = e.what();
    }
  }
  const int mine = failure ? rank_ : size_;
  int first = size_;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce", "agreeing on a verdict");
  if (first == size_) return;
  int kind = my_kind;
  check(MPI_Bcast(&kind, 1, MPI_INT, first, comm_), "MPI_Bcast");
  int length = static_cast<int>(message.size());
  check(MPI_Bcast(&length, 1, MPI_INT, first, comm_), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  check(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm_), "MPI_Bcast");
  const std::string text = "rank " + std::to_string(first) + ": " + message;
  if (kind == 1) {
    UsageError error(text);
    error.set_agreed();
    throw error;
  }
  Error error(text);
  error.set_agreed();
  throw error;
}

}  // namespace fpgacomm
