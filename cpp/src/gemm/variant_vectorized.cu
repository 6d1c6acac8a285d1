// vectorized: the 128x128 register-blocked float32 kernel (blocktile_128.cuh), 16-byte loads when rows are aligned.
#include "gpuprims/gemm/blocktile_128.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {

Status matmul_vectorized(const GemmLaunch& l) {
  const unsigned grid = tile_grid<Blocked128Base::kTileM, Blocked128Base::kTileN>(l.params);
  // 16-byte global loads need both A and B rows contiguous and aligned (dispatch's a_vec_rows,
  // b_vec_rows); otherwise the same kernel with the strided scalar loader.
  if (l.params.a_vec_rows && l.params.b_vec_rows) {
    blocked_128_kernel<Blocked128Step::kVectorized, true><<<grid, Blocked128Base::kThreads, 0, l.stream>>>(l.params);
  } else {
    blocked_128_kernel<Blocked128Step::kVectorized, false><<<grid, Blocked128Base::kThreads, 0, l.stream>>>(l.params);
  }
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
