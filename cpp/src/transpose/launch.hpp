#pragma once
// What dispatch hands a transpose variant: one validated, merged copy on one GPU.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "gpuprims/core/dtype.hpp"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "plan.hpp"

namespace gpuprims {
namespace transpose_detail {

struct TransposeLaunch {
  MergedDims dims;
  FastAxes axes;       // i != j: a transposition; i == j: rows copied as they are (transpose_rows)
  size_t elem_size;    // 1, 2, 4 or 8 bytes
  const void* src;
  void* dst;
  cudaStream_t stream;
};

// One entry per variant, each in its own translation unit (variant_<name>.cu).
Status transpose_naive(const TransposeLaunch& l);
Status transpose_smem_tiled(const TransposeLaunch& l);
Status transpose_smem_padded(const TransposeLaunch& l);
Status transpose_packed(const TransposeLaunch& l);           // words on both sides, else smem_padded
Status transpose_register_blocks(const TransposeLaunch& l);  // every layout (elements on a side without words)
Status transpose_rows(const TransposeLaunch& l);             // rows.cu: the copies without a transposition
// host.cpp: the CPU reference, on the unmerged views (axes validated, non-negative).
Status transpose_host(const TensorView& x, const int64_t* axes, const TensorView& out);

// Elements move as unsigned integers of their size: f(type_tag<E>{}) with E of `size` bytes (1, 2,
// 4, or 8 for anything else: every dtype is one of the four).
template <class F>
Status visit_element_size(size_t size, F&& f) {
  switch (size) {
    case 1: return f(type_tag<uint8_t>{});
    case 2: return f(type_tag<uint16_t>{});
    case 4: return f(type_tag<uint32_t>{});
    default: break;
  }
  return f(type_tag<uint64_t>{});
}

// Blocks of a grid-stride loop over `work` items, one item per block up to the grid's x limit.
inline unsigned grid_for(int64_t work) {
  return static_cast<unsigned>(work < 1 ? 1 : (work > 0x7fffffff ? 0x7fffffff : work));
}

}  // namespace transpose_detail
}  // namespace gpuprims
