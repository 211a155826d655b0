#include "cl/device.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/c_text.hpp"
#include "core/error.hpp"

namespace fpgacomm {
namespace {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + what + " '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return "";
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return c_text(log.data(), log.size());
}

void build(cl_program program, const DeviceInfo& info, const std::string& origin) {
  const cl_int status = clBuildProgram(program, 1, &info.id, "", nullptr, nullptr);
  if (status != CL_SUCCESS)
    throw ClError("clBuildProgram", status,
                  "building " + origin + " for " + info.label() + ":\n" + build_log(program, info.id));
}

cl_command_queue make_queue(cl_context context, const DeviceInfo& info) {
  cl_int status = CL_SUCCESS;
  // Profiling stays on so device-side times can be read from events.
  cl_command_queue queue = clCreateCommandQueue(context, info.id, CL_QUEUE_PROFILING_ENABLE, &status);
  cl_check(status, "clCreateCommandQueue", "opening " + info.label());
  return queue;
}

}  // namespace

Device::Device(DeviceInfo info, std::string kernel_dir, std::string binary_path)
    : info_(std::move(info)), kernel_dir_(std::move(kernel_dir)), binary_path_(std::move(binary_path)) {
  cl_int status = CL_SUCCESS;
  const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                              reinterpret_cast<cl_context_properties>(info_.platform), 0};
  context_ = clCreateContext(properties, 1, &info_.id, nullptr, nullptr, &status);
  cl_check(status, "clCreateContext", "opening " + info_.label());
  to_device_ = make_queue(context_, info_);
  to_host_ = make_queue(context_, info_);
  if (!binary_path_.empty()) program("");  // FPGAs need their bitstream before any buffer
}

Device::~Device() {
  // Cleanup never throws: a failing release is reported and passed over.
  auto warn = [this](cl_int status, const char* routine) {
    if (status != CL_SUCCESS)
      std::cerr << "fpgacomm: warning: " << routine << " failed with " << cl_error_name(status) << " on "
                << info_.label() << "\n";
  };
  for (auto& [name, kernel] : kernels_) warn(clReleaseKernel(kernel), "clReleaseKernel");
  for (auto& [name, program] : programs_) warn(clReleaseProgram(program), "clReleaseProgram");
  if (to_host_) warn(clReleaseCommandQueue(to_host_), "clReleaseCommandQueue");
  if (to_device_) warn(clReleaseCommandQueue(to_device_), "clReleaseCommandQueue");
  if (context_) warn(clReleaseContext(context_), "clReleaseContext");
}

cl_program Device::program(const std::string& file) {
  // With a vendor binary every kernel comes from it; else from kernels/<file>.cl.
  const std::string key = binary_path_.empty() ? file : "";
  if (auto found = programs_.find(key); found != programs_.end()) return found->second;
  cl_int status = CL_SUCCESS;
  cl_program program = nullptr;
  std::string origin;
  if (!binary_path_.empty()) {
    origin = "binary '" + binary_path_ + "'";
    const std::string binary = read_file(binary_path_, "device binary");
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    const std::size_t size = binary.size();
    cl_int binary_status = CL_SUCCESS;
    program = clCreateProgramWithBinary(context_, 1, &info_.id, &size, &bytes, &binary_status, &status);
    cl_check(status, "clCreateProgramWithBinary", "loading " + origin);
    cl_check(binary_status, "clCreateProgramWithBinary", "loading " + origin + " (device rejected it)");
  } else {
    const std::string path = kernel_dir_ + "/" + file + ".cl";
    origin = "'" + path + "'";
    const std::string source = read_file(path, "kernel source");
    const char* text = source.c_str();
    program = clCreateProgramWithSource(context_, 1, &text, nullptr, &status);
    cl_check(status, "clCreateProgramWithSource", "loading " + origin);
  }
  try {
    build(program, info_, origin);
  } catch (...) {
    clReleaseProgram(program);
    throw;
  }
  programs_[key] = program;
  return program;
}

cl_kernel Device::kernel(const std::string& file, const std::string& name) {
  const std::string key = file + "/" + name;
  if (auto found = kernels_.find(key); found != kernels_.end()) return found->second;
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program(file), name.c_str(), &status);
  cl_check(status, "clCreateKernel", "creating kernel '" + name + "'");
  kernels_[key] = kernel;
  return kernel;
}

void Device::release_program(const std::string& file) {
  const std::string key = binary_path_.empty() ? file : "";
  const auto found = programs_.find(key);
  if (found == programs_.end()) return;
  for (auto kernel = kernels_.begin(); kernel != kernels_.end();) {
    // With a binary every kernel is the binary's, whatever file it was asked under.
    if (key.empty() || kernel->first.rfind(file + "/", 0) == 0) {
      cl_check(clReleaseKernel(kernel->second), "clReleaseKernel", "releasing kernel '" + kernel->first + "'");
      kernel = kernels_.erase(kernel);
    } else {
      ++kernel;
    }
  }
  cl_check(clReleaseProgram(found->second), "clReleaseProgram", "releasing the program of " + file);
  programs_.erase(found);
}

void Device::touch(cl_mem buffer) {
  cl_kernel placeholder = kernel("placeholder", "placeholder");
  cl_check(clSetKernelArg(placeholder, 0, sizeof(cl_mem), &buffer), "clSetKernelArg", "touching a buffer");
  const std::size_t one = 1;
  cl_check(clEnqueueNDRangeKernel(to_device_, placeholder, 1, nullptr, &one, &one, 0, nullptr, nullptr),
           "clEnqueueNDRangeKernel", "launching the placeholder kernel");
  cl_check(clFinish(to_device_), "clFinish", "waiting for the placeholder kernel");
}

void Device::finish() {
  cl_check(clFinish(to_device_), "clFinish");
  cl_check(clFinish(to_host_), "clFinish");
}

}  // namespace fpgacomm
