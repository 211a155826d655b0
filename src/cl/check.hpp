// The one guard every OpenCL call goes through (pyopencl's way): a failure
// becomes a ClError naming the routine, the code's name and what we were doing.
#pragma once
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>
#include <type_traits>

namespace fpgacomm {

const char* cl_error_name(cl_int code);

[[noreturn]] void cl_fail(cl_int code, const char* routine, const std::string& context);

// `context`: text, or a callable returning text (built only on failure).
template <class Context = const char*>
void cl_check(cl_int code, const char* routine, Context&& context = "") {
  if (code == CL_SUCCESS) return;
  if constexpr (std::is_invocable_v<Context>)
    cl_fail(code, routine, context());
  else
    cl_fail(code, routine, context);
}

// One profiling timestamp of a finished command, in device-clock
// nanoseconds (point: CL_PROFILING_COMMAND_QUEUED, _SUBMIT, _START or _END);
// its queue needs CL_QUEUE_PROFILING_ENABLE, as Device's queues have.
cl_ulong profiling_ns(cl_event event, cl_profiling_info point, const char* what);

}  // namespace fpgacomm
