// The one guard every OpenCL call goes through (pyopencl's way): a failure
// becomes a ClError naming the routine, the code's name and what we were doing.
#pragma once
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>

namespace fpgacomm {

const char* cl_error_name(cl_int code);

void cl_check(cl_int code, const char* routine, const std::string& context = "");

}  // namespace fpgacomm
