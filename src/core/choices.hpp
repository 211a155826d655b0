// The choices a usage error offers, as the command line lists them.
#pragma once
#include <string>
#include <vector>

namespace fpgacomm {

// "a, b, c": the names in their order (OMB's default first where it has one).
inline std::string choice_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace fpgacomm
