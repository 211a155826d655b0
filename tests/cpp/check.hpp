// A minimal test harness: each CHECK that fails prints where and why, and
// the test's exit code is the number of failures, which ctest reads.
#pragma once
#include <iostream>
#include <string>

namespace check {
inline int failures = 0;

inline void report(bool ok, const char* expr, const char* file, int line) {
  if (ok) return;
  ++failures;
  std::cerr << file << ":" << line << ": CHECK failed: " << expr << "\n";
}

// Runs `body`, which must throw an exception of type E whose message contains `part`.
template <class E, class F>
void throws(F body, const std::string& part, const char* expr, const char* file, int line) {
  try {
    body();
  } catch (const E& e) {
    if (std::string(e.what()).find(part) != std::string::npos) return;
    ++failures;
    std::cerr << file << ":" << line << ": " << expr << " threw '" << e.what() << "', expected to mention '" << part
              << "'\n";
    return;
  }
  ++failures;
  std::cerr << file << ":" << line << ": " << expr << " did not throw\n";
}
}  // namespace check

#define CHECK(expr) check::report(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
#define CHECK_THROWS(E, stmt, part) check::throws<E>([&] { stmt; }, part, #stmt, __FILE__, __LINE__)
