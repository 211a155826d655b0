#include "comm/datatype.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/choices.hpp"
#include "core/error.hpp"

namespace fpgacomm {

Datatype parse_datatype(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "mpi_char") return Datatype::Char;
  if (lower == "mpi_int") return Datatype::Int;
  if (lower == "mpi_float") return Datatype::Float;
  throw UsageError("unknown datatype '" + name + "'; choose " + choice_list(datatype_names()) + " (-T)");
}

std::vector<std::string> datatype_names() { return {"mpi_char", "mpi_int", "mpi_float"}; }

std::string datatype_name(Datatype type) {
  switch (type) {
    case Datatype::Char:
      return "MPI_CHAR";
    case Datatype::Int:
      return "MPI_INT";
    case Datatype::Float:
      return "MPI_FLOAT";
  }
  return "?";
}

int datatype_bytes(Datatype type) {
  switch (type) {
    case Datatype::Char:
      return sizeof(char);
    case Datatype::Int:
      return sizeof(int);
    case Datatype::Float:
      return sizeof(float);
  }
  return 1;
}

MPI_Datatype mpi_datatype(Datatype type) {
  switch (type) {
    case Datatype::Char:
      return MPI_CHAR;
    case Datatype::Int:
      return MPI_INT;
    case Datatype::Float:
      return MPI_FLOAT;
  }
  return MPI_CHAR;
}

std::uint64_t message_bytes(std::uint64_t size, Datatype type) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(datatype_bytes(type));
  return size / bytes * bytes;
}

void require_an_element(const std::vector<std::uint64_t>& sizes, Datatype type) {
  for (std::uint64_t size : sizes)
    if (message_bytes(size, type) > 0) return;
  const std::string bytes = std::to_string(datatype_bytes(type));
  throw UsageError("no message size of -m holds one " + datatype_name(type) + " (" + bytes +
                   " bytes); use larger sizes, e.g. -m " + bytes + ":");
}

void encode_element(Datatype type, std::uint64_t value, std::uint8_t* out) {
  switch (type) {
    case Datatype::Char:
      *out = static_cast<std::uint8_t>(value);
      return;
    case Datatype::Int: {
      const int element = static_cast<int>(value);
      std::memcpy(out, &element, sizeof element);
      return;
    }
    case Datatype::Float: {
      const float element = static_cast<float>(value);
      std::memcpy(out, &element, sizeof element);
      return;
    }
  }
}

}  // namespace fpgacomm
