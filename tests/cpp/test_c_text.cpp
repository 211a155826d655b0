#include "check.hpp"
#include "core/c_text.hpp"

using namespace fpgacomm;

int main() {
  // Open MPI counts the terminator in MPI_Get_library_version's length.
  const char counted[] = "Open MPI v4.1.4";
  CHECK(c_text(counted, sizeof(counted)) == "Open MPI v4.1.4");
  // A fixed-size buffer (MPI_MAX_PROCESSOR_NAME) holds the name and NULs.
  const char padded[16] = "host-a";
  CHECK(c_text(padded, sizeof(padded)) == "host-a");
  // A length that stops before the terminator keeps every character.
  CHECK(c_text("abcdef", 3) == "abc");
  CHECK(c_text("", 0).empty());
  return check::failures;
}
