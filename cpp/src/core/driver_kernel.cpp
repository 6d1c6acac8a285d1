#include "gpuprims/core/driver_kernel.hpp"

#include <cstdint>

#include <cuda.h>  // driver API types only: cuLaunchKernel is looked up at run time, not linked

namespace gpuprims {
namespace {

using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);

// cuLaunchKernel of the installed driver, or null where the runtime cannot provide it.
LaunchFn driver_launch() {
  static const LaunchFn fn = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult status;
    const cudaError_t rc = cudaGetDriverEntryPointByVersion("cuLaunchKernel", &found, 12000, cudaEnableDefault, &status);
    if (rc != cudaSuccess) cudaGetLastError();  // the failed query's own error, not the caller's
    return rc == cudaSuccess && status == cudaDriverEntryPointSuccess ? reinterpret_cast<LaunchFn>(found) : nullptr;
  }();
  return fn;
}

void* const kNoHandle = reinterpret_cast<void*>(uintptr_t(1));

}  // namespace

Status DriverKernel::launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, void** args,
                            const char* op) const {
  const LaunchFn cu_launch = driver_launch();
  void* handle = handle_.load(std::memory_order_acquire);
  if (cu_launch != nullptr && handle == nullptr) {
    // Context-free (cudaGetKernel, not cudaGetFuncBySymbol's per-context function): valid on every
    // device and context, including a primary context recreated after a device reset.
    cudaKernel_t kernel = nullptr;
    if (cudaGetKernel(&kernel, kernel_) == cudaSuccess) {
      handle = kernel;
    } else {
      cudaGetLastError();  // the lookup's own error; the runtime launch below reports the caller's
      handle = kNoHandle;
    }
    handle_.store(handle, std::memory_order_release);
  }
  if (cu_launch != nullptr && handle != kNoHandle &&
      cu_launch(static_cast<CUfunction>(handle), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                static_cast<unsigned>(shared_bytes), stream, args, nullptr) == CUDA_SUCCESS) {
    return Status::ok();
  }
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel_, grid, block, args, shared_bytes, stream));
  return Status::ok();
}

}  // namespace gpuprims
