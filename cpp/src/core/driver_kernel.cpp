#include "gpuprims/core/driver_kernel.hpp"

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
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &found, 12000, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // a missing entry point is not an error of the caller's launch
      return LaunchFn{nullptr};
    }
    return reinterpret_cast<LaunchFn>(found);
  }();
  return fn;
}

}  // namespace

Status DriverKernel::launch(int device, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, void** args,
                            const char* op) const {
  const LaunchFn cu_launch = driver_launch();
  if (cu_launch != nullptr && device >= 0 && device < kMaxDevices) {
    void* fn = functions_[device].load(std::memory_order_acquire);
    if (fn == nullptr) {
      // The function of the current device's primary context (loads the module under lazy loading).
      cudaFunction_t looked_up = nullptr;
      if (cudaGetFuncBySymbol(&looked_up, kernel_) == cudaSuccess) {
        fn = looked_up;
        functions_[device].store(fn, std::memory_order_release);
      } else {
        cudaGetLastError();  // the runtime launch below reports what is wrong, if anything
      }
    }
    if (fn != nullptr && cu_launch(static_cast<CUfunction>(fn), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   static_cast<unsigned>(shared_bytes), stream, args, nullptr) == CUDA_SUCCESS) {
      return Status::ok();
    }
  }
  GPUPRIMS_CUDA_CHECK(op, cudaLaunchKernel(kernel_, grid, block, args, shared_bytes, stream));
  return Status::ok();
}

}  // namespace gpuprims
