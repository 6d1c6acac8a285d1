#pragma once
// Compiler glue shared by host-only (g++) and CUDA (nvcc) translation units.

#if defined(__CUDACC__)
#define GPUPRIMS_HD __host__ __device__ __forceinline__
#else
#define GPUPRIMS_HD inline
#endif

namespace gpuprims {
// The most dimensions an array may keep after merging contiguous dimensions. Kernel parameters hold
// sizes and strides inline, so this bounds the parameter block.
constexpr int kMaxDims = 8;
}  // namespace gpuprims
