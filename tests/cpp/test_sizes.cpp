#include "check.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

using namespace fpgacomm;

int main() {
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("4K") == 4096);
  CHECK(parse_size("4k") == 4096);
  CHECK(parse_size("3M") == 3ull << 20);
  CHECK(parse_size("1G") == 1ull << 30);
  CHECK_THROWS(UsageError, parse_size(""), "empty");
  CHECK_THROWS(UsageError, parse_size("K"), "not a number");
  CHECK_THROWS(UsageError, parse_size("4KB"), "trailing junk");
  CHECK_THROWS(UsageError, parse_size("4T"), "unknown suffix");
  CHECK_THROWS(UsageError, parse_size("99999999999999999999"), "too large");
  CHECK_THROWS(UsageError, parse_size("17179869184G"), "too large");

  const SizeRange defaults{1, 4ull << 20};
  CHECK(parse_size_range("128", defaults).min == 1);
  CHECK(parse_size_range("128", defaults).max == 128);
  CHECK(parse_size_range("2:128", defaults).min == 2);
  CHECK(parse_size_range("2K:", defaults).min == 2048);
  CHECK(parse_size_range("2K:", defaults).max == 4ull << 20);
  CHECK_THROWS(UsageError, parse_size_range("0:8", defaults), "starts at 0");
  CHECK_THROWS(UsageError, parse_size_range("8:2", defaults), "above MAX");
  CHECK_THROWS(UsageError, parse_size_range(":", defaults), "no bound");

  const auto sizes = doubling_sizes({1, 8});
  CHECK(sizes.size() == 4 && sizes[0] == 1 && sizes[3] == 8);
  const auto odd = doubling_sizes({3, 20});  // 3 6 12
  CHECK(odd.size() == 3 && odd[2] == 12);
  CHECK(doubling_sizes({5, 5}).size() == 1);
  const auto huge = doubling_sizes({1ull << 62, ~0ull});  // must not overflow
  CHECK(huge.size() == 2);
  return check::failures;
}
