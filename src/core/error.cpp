#include "core/error.hpp"

namespace fpgacomm {

ApiError::ApiError(const std::string& api, const std::string& routine, int code, const std::string& code_name,
                   const std::string& context)
    : Error(api + " error in " + routine + ": " + code_name + " (" + std::to_string(code) + ")" +
            (context.empty() ? "" : " while " + context)),
      routine_(routine),
      code_(code),
      code_name_(code_name) {}

}  // namespace fpgacomm
