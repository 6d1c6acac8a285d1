#pragma once
// DriverKernel: a kernel launched through the driver's cuLaunchKernel with its context-free kernel
// handle (cudaGetKernel: a CUkernel, launched in the context of the stream, or the current one for
// the NULL stream), looked up once. The runtime's cudaLaunchKernel cost the host 0.2-0.5 us more per
// launch in session 11 device run 1 (3.06-3.31 us against 2.83 us, `_cub_ref.launch_probe`), which
// matters only where a whole call costs a few microseconds: a small reduce next to torch.sum
// (docs/reduce.md, host cost); run 6 saw no difference outside the machine's noise (3.8-4.4 us for
// all three forms). The driver entry point comes from cudaGetDriverEntryPointByVersion, so nothing
// links libcuda and the module still imports on machines without a driver.
#include <atomic>
#include <cstddef>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"

namespace gpuprims {

class DriverKernel {
 public:
  // `kernel`: the address of a __global__ function, as cudaLaunchKernel takes it.
  explicit DriverKernel(const void* kernel) : kernel_(kernel) {}
  DriverKernel(const DriverKernel&) = delete;
  DriverKernel& operator=(const DriverKernel&) = delete;

  // Launches on `stream`. Where the driver path is not available (no entry point, no kernel handle)
  // or refuses the launch, the runtime's cudaLaunchKernel launches instead and reports any failure
  // the usual way: a refused launch enqueued nothing, so repeating it neither loses nor doubles work.
  Status launch(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, void** args, const char* op) const;

 private:
  const void* kernel_;
  // The CUkernel once looked up; kNoHandle after a failed lookup (not retried).
  mutable std::atomic<void*> handle_{nullptr};
};

}  // namespace gpuprims
