// Which OpenCL command moves a small host buffer to the device fastest, and
// what asking an event's status costs: the two runtime costs behind staged
// device-to-device latency and the staged pipeline's polling loop
// (bench/RESULTS.md, "Real accelerators"). Plain OpenCL, no fpgacomm, so
// that what it shows is the runtime's. Run two at once to see what a second
// process on the same device changes:
//
//   g++ -O2 -std=c++17 bench/copy_commands.cpp -lOpenCL -o copy_commands
//   ./copy_commands NVIDIA                      # one process
//   ./copy_commands NVIDIA & ./copy_commands NVIDIA; wait   # two at once
//
// Commands, each blocking on the host clock, checked by reading back:
//   write  clEnqueueWriteBuffer from pinned memory (what the engine does)
//   map    map the device region (write-invalidate), memcpy, unmap
//   copy   clEnqueueCopyBuffer from a pinned (ALLOC_HOST_PTR) buffer,
//          filled through a map/unmap beforehand (untimed)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cl_int status, const char* routine) {
  if (status == CL_SUCCESS) return;
  std::fprintf(stderr, "copy_commands: %s failed with %d\n", routine, status);
  std::exit(1);
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Setup {
  cl_context context;
  cl_command_queue queue;
  cl_mem device, pinned;  // the device buffer; a pinned host buffer, mapped at `host`
  unsigned char* host;
  size_t bytes;  // of each buffer
};

// The pinned buffer holds the data for `copy`: unmapped while the command reads it.
void unmap_pinned(Setup& s) {
  check(clEnqueueUnmapMemObject(s.queue, s.pinned, s.host, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  check(clFinish(s.queue), "clFinish");
}

void map_pinned(Setup& s) {
  cl_int status;
  s.host = static_cast<unsigned char*>(clEnqueueMapBuffer(s.queue, s.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                          s.bytes, 0, nullptr, nullptr, &status));
  check(status, "clEnqueueMapBuffer");
}

Setup open(const std::string& platform_part, size_t bytes) {
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id platform : platforms) {
    char name[256] = {};
    check(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name), name, nullptr), "clGetPlatformInfo");
    if (std::string(name).find(platform_part) == std::string::npos) continue;
    cl_device_id device;
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int status;
    Setup s{};
    s.bytes = bytes;
    s.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    s.queue = clCreateCommandQueueWithProperties(s.context, device, nullptr, &status);
    check(status, "clCreateCommandQueueWithProperties");
    s.device = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
    check(status, "clCreateBuffer");
    s.pinned = clCreateBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &status);
    check(status, "clCreateBuffer");
    map_pinned(s);
    std::printf("# platform '%s'\n", name);
    return s;
  }
  std::fprintf(stderr, "copy_commands: no platform whose name contains '%s'\n", platform_part.c_str());
  std::exit(2);
}

void move(Setup& s, const std::string& command, size_t n) {
  if (command == "write") {
    check(clEnqueueWriteBuffer(s.queue, s.device, CL_TRUE, 0, n, s.host, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  } else if (command == "map") {
    cl_int status;
    void* target = clEnqueueMapBuffer(s.queue, s.device, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, n, 0, nullptr,
                                      nullptr, &status);
    check(status, "clEnqueueMapBuffer");
    std::memcpy(target, s.host, n);
    check(clEnqueueUnmapMemObject(s.queue, s.device, target, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    check(clFinish(s.queue), "clFinish");
  } else {  // copy: the pinned buffer is unmapped here
    check(clEnqueueCopyBuffer(s.queue, s.pinned, s.device, 0, 0, n, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
    check(clFinish(s.queue), "clFinish");
  }
}

bool arrived(Setup& s, size_t n, unsigned char seed) {
  std::vector<unsigned char> back(n);
  check(clEnqueueReadBuffer(s.queue, s.device, CL_TRUE, 0, n, back.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  for (size_t i = 0; i < n; ++i)
    if (back[i] != static_cast<unsigned char>(seed + i * 7)) return false;
  return true;
}

// Seconds per blocking move of n bytes, after checking that one arrives intact.
double time_move(Setup& s, const std::string& command, size_t n, int iterations) {
  const unsigned char seed = static_cast<unsigned char>(n * 13 + command.size());
  for (size_t i = 0; i < n; ++i) s.host[i] = static_cast<unsigned char>(seed + i * 7);
  if (command == "copy") unmap_pinned(s);
  move(s, command, n);
  const bool ok = arrived(s, n, seed);
  const double start = now();
  for (int i = 0; i < iterations; ++i) move(s, command, n);
  const double seconds = (now() - start) / iterations;
  if (command == "copy") map_pinned(s);
  if (!ok) {
    std::fprintf(stderr, "copy_commands: %s of %zu bytes did not arrive intact\n", command.c_str(), n);
    std::exit(1);
  }
  return seconds;
}

// Nanoseconds per clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS), on a
// completed event and on one whose large copy is still running.
void time_status_queries(Setup& s, size_t big) {
  cl_event event;
  check(clEnqueueWriteBuffer(s.queue, s.device, CL_TRUE, 0, 8, s.host, 0, nullptr, &event), "clEnqueueWriteBuffer");
  const int calls = 100000;
  cl_int status;
  double start = now();
  for (int i = 0; i < calls; ++i)
    check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr), "clGetEventInfo");
  std::printf("# clGetEventInfo on a completed event: %.0f ns per call\n", (now() - start) / calls * 1e9);
  clReleaseEvent(event);
  check(clEnqueueWriteBuffer(s.queue, s.device, CL_FALSE, 0, big, s.host, 0, nullptr, &event), "clEnqueueWriteBuffer");
  check(clFlush(s.queue), "clFlush");
  int polls = 0;
  start = now();
  do {
    check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr), "clGetEventInfo");
    ++polls;
  } while (status != CL_COMPLETE);
  const double waited = now() - start;
  std::printf("# clGetEventInfo while a %zu-byte copy runs: %.0f ns per call (%d calls in %.1f us)\n", big,
              waited / polls * 1e9, polls, waited * 1e6);
  clReleaseEvent(event);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string platform = argc > 1 ? argv[1] : "NVIDIA";
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 300;
  const size_t largest = 256 << 10, big = 4 << 20;
  Setup s = open(platform, big);
  time_status_queries(s, big);
  const char* commands[] = {"write", "map", "copy"};
  std::printf("# microseconds per blocking move to the device (host clock), %d iterations\n%-10s", iterations, "size");
  for (const char* command : commands) std::printf("%10s", command);
  std::printf("\n");
  for (size_t n = 1; n <= largest; n *= 4) {
    std::printf("%-10zu", n);
    for (const char* command : commands) std::printf("%10.1f", time_move(s, command, n, iterations) * 1e6);
    std::printf("\n");
  }
  return 0;
}
