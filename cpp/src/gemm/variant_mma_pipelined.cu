// mma_pipelined: mma.sync + ldmatrix + 3-stage cp.async pipeline (mma_pipelined.cuh). float16 and
// bfloat16 (dispatch enforces it).
#include "gpuprims/gemm/mma_pipelined.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

template <class T>
void launch(const GemmLaunch& l) {
  const unsigned grid = tile_grid<kMmaTile, kMmaTile>(l.params);
  // cp.async needs both operands' rows contiguous and 16-byte aligned; otherwise every chunk is
  // gathered element by element into the same shared layout.
  if (l.params.a_vec_rows && l.params.b_vec_rows) {
    mma_pipelined_kernel<T, true><<<grid, kMmaThreads, 0, l.stream>>>(l.params);
  } else {
    mma_pipelined_kernel<T, false><<<grid, kMmaThreads, 0, l.stream>>>(l.params);
  }
}

}  // namespace

Status matmul_mma_pipelined(const GemmLaunch& l) {
  if (l.dtype == DType::kBFloat16) launch<bfloat16_t>(l);
  else launch<half_t>(l);
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
