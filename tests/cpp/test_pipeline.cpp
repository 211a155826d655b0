#include "check.hpp"
#include "comm/pipeline.hpp"
#include "core/error.hpp"

using namespace fpgacomm;

int main() {
  const auto whole = plan_chunks(10 << 20, 1 << 20, false);
  CHECK(whole.size() == 1 && whole[0].offset == 0 && whole[0].bytes == (10u << 20));

  const auto fits = plan_chunks(1 << 20, 1 << 20, true);
  CHECK(fits.size() == 1 && fits[0].bytes == (1u << 20));

  const auto chunks = plan_chunks(2500, 1000, true);
  CHECK(chunks.size() == 3);
  CHECK(chunks[0].offset == 0 && chunks[0].bytes == 1000);
  CHECK(chunks[1].offset == 1000 && chunks[1].bytes == 1000);
  CHECK(chunks[2].offset == 2000 && chunks[2].bytes == 500);

  std::uint64_t covered = 0;
  for (const auto& c : plan_chunks((1ull << 30) + 7, 4 << 20, true)) {
    CHECK(c.offset == covered);
    covered += c.bytes;
  }
  CHECK(covered == (1ull << 30) + 7);
  CHECK(plan_chunks(0, 1000, true).size() == 1);
  CHECK_THROWS(UsageError, plan_chunks(10, 0, true), "at least 1 byte");
  return check::failures;
}
