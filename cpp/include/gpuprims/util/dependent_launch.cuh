#pragma once
// Launching the second kernel of a pair with programmatic stream serialization (sm_90+): its
// blocks may be scheduled while the first kernel's last wave runs, and it must wait in
// cudaGridDependencySynchronize before reading what the first wrote. With `overlap` false it is
// an ordinary stream-ordered launch (older GPUs, code built without the wait).
#include <cuda_runtime.h>

namespace gpuprims {

template <class... Params, class... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, bool overlap,
                             Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = overlap ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Args&&>(args)...);
}

}  // namespace gpuprims
