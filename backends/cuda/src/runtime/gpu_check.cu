#include <string>
#include <string_view>

#include "cocktail/error.hpp"
#include "runtime/gpu_check.hpp"

namespace cocktail::gpu {

namespace {

// "runtime/gpu_buffer.cu" of the full path the build gave: enough to find the line.
std::string_view source_file(std::string_view file) {
  const std::size_t src = file.rfind("/src/");
  return src == std::string_view::npos ? file : file.substr(src + 5);
}

std::string where(const char* file, int line) {
  return std::string(source_file(file)) + ":" + std::to_string(line);
}

std::string runtime_message(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " [" + cudaGetErrorName(status) + "]";
}

}  // namespace

void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  // A failed call is also the runtime's "last error"; left there, the next launch check would
  // blame an innocent kernel for it. (A kernel fault is sticky and stays whatever we do.)
  (void)cudaGetLastError();
  throw Error(std::string(kBackendName) + " backend: " + call + " failed (" + where(file, line) +
              "): " + runtime_message(status));
}

void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) return;
  throw Error(std::string(kBackendName) + " backend: launching " + kernel + " failed (" +
              where(file, line) + "): " + runtime_message(status));
}

}  // namespace cocktail::gpu
