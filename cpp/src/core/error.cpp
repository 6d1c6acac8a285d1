#include "gpuprims/core/error.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace gpuprims {
namespace {

// Errors after which the CUDA context is unusable: every later call returns the same error.
bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

std::atomic<int> g_sticky_error{0};  // the first sticky cudaError_t seen, 0 if none

bool sync_after_each_op() {
  static const bool enabled = [] {
    const char* v = std::getenv("GPUPRIMS_SYNC");
    return v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

}  // namespace

Status cuda_status(cudaError_t err, const char* op, const char* what) {
  if (err == cudaSuccess) return Status::ok();
  std::string msg = std::string(op) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                    ") in " + what;
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so it cannot leak into the next launch check
    return Status(ErrorKind::kOutOfMemory, msg);
  }
  if (is_sticky(err)) {
    int expected = 0;
    g_sticky_error.compare_exchange_strong(expected, static_cast<int>(err));
    return Status(ErrorKind::kCudaFatal,
                  msg + "; the CUDA context is lost and the process must be restarted");
  }
  cudaGetLastError();
  return Status(ErrorKind::kCudaError, msg);
}

Status check_context_alive(const char* op) {
  const int sticky = g_sticky_error.load(std::memory_order_relaxed);
  if (sticky == 0) return Status::ok();
  const auto err = static_cast<cudaError_t>(sticky);
  return Status(ErrorKind::kCudaFatal, std::string(op) + ": an earlier " + cudaGetErrorName(err) +
                                           " lost the CUDA context; the process must be restarted");
}

Status check_launch(const char* op, cudaStream_t stream) {
  GPUPRIMS_TRY(cuda_status(cudaGetLastError(), op, "kernel launch"));
  if (sync_after_each_op()) {
    GPUPRIMS_TRY(cuda_status(cudaStreamSynchronize(stream), op, "cudaStreamSynchronize (GPUPRIMS_SYNC=1)"));
  }
  return Status::ok();
}

}  // namespace gpuprims
