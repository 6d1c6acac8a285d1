#pragma once
// DriverKernel: a kernel launched through the driver's cuLaunchKernel, its CUfunction looked up once
// per device. The runtime's cudaLaunchKernel costs the host 0.2-0.4 us more per launch (3.37-3.56 us
// against 3.12-3.18 us on the H200 machine, `_cub_ref.launch_probe`), which matters only where a
// whole call costs a few microseconds: a small reduce next to torch.sum (docs/reduce.md, host cost).
// The driver entry point comes from cudaGetDriverEntryPointByVersion, so nothing links libcuda and the
// module still imports on machines without a driver.
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

  // Launches on `stream` of `device`, which must be the current device. Where the driver path is not
  // available (no entry point, a device beyond the cache) or refuses the launch, the runtime's
  // cudaLaunchKernel launches instead and reports any failure the usual way: a refused launch
  // enqueued nothing, so repeating it through the runtime neither loses nor doubles work.
  Status launch(int device, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream, void** args,
                const char* op) const;

 private:
  static constexpr int kMaxDevices = 64;
  const void* kernel_;
  mutable std::atomic<void*> functions_[kMaxDevices] = {};  // CUfunction per device, null until looked up
};

}  // namespace gpuprims
