#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

namespace gpuprims {

// How many blocks of `threads` threads of `kernel` one multiprocessor holds at once (at least 1),
// each with `dynamic_smem` bytes of dynamic shared memory.
// Callers cache it per kernel (a function-local static): the answer depends on the kernel's
// registers and shared memory and on the architecture, not on the call.
template <class Kernel>
int resident_blocks_per_sm(Kernel kernel, int threads, size_t dynamic_smem = 0) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem) != cudaSuccess) {
    cudaGetLastError();  // not sticky; the launch itself will report a real problem
    blocks = 1;
  }
  return blocks > 0 ? blocks : 1;
}

}  // namespace gpuprims
