// wmma: tensor cores through nvcuda::wmma (wmma_kernel.cuh). float16, bfloat16, and float32 as
// TF32 when the caller allows it (dispatch enforces both).
#include "gpuprims/gemm/wmma_kernel.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_wmma(const GemmLaunch& l) {
  const unsigned grid = tile_grid<kWmmaTile, kWmmaTile>(l.params);
  switch (l.dtype) {
    case DType::kFloat16: wmma_kernel<half_t><<<grid, kWmmaThreads, 0, l.stream>>>(l.params); break;
    case DType::kBFloat16: wmma_kernel<bfloat16_t><<<grid, kWmmaThreads, 0, l.stream>>>(l.params); break;
    default: wmma_kernel<float><<<grid, kWmmaThreads, 0, l.stream>>>(l.params); break;
  }
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
