// The element types of OSU Micro-Benchmarks' -T (MPI_CHAR, its default,
// MPI_INT, MPI_FLOAT): a message of `size` bytes carries size / bytes
// elements, and a size smaller than one element is skipped.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fpgacomm {

enum class Datatype { Char, Int, Float };

// "mpi_char", "mpi_int" or "mpi_float", in any case; throws UsageError.
Datatype parse_datatype(const std::string& name);
std::vector<std::string> datatype_names();
std::string datatype_name(Datatype type);  // "MPI_CHAR", as OMB prints it
int datatype_bytes(Datatype type);
MPI_Datatype mpi_datatype(Datatype type);

// The bytes a message of `size` bytes moves: its whole elements; 0 where
// it holds none, and OMB skips the size.
std::uint64_t message_bytes(std::uint64_t size, Datatype type);

// Throws a UsageError, naming the datatype and the fix, when no size holds one element.
void require_an_element(const std::vector<std::uint64_t>& sizes, Datatype type);

// Writes the whole number `value` as one element of `type` at `out`
// (MPI_CHAR: its low byte).
void encode_element(Datatype type, std::uint64_t value, std::uint8_t* out);

}  // namespace fpgacomm
