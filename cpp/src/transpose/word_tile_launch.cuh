#pragma once
// The launch shared by packed and register_blocks: tiles of 32 x 32 words W (8-byte words for 2-,
// 4- and 8-byte elements, 4-byte words for bytes) where the layout allows words on both sides,
// smem_padded otherwise.
#include <cstdint>
#include <type_traits>

#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

template <class E>
using WordOf = std::conditional_t<sizeof(E) == 1, uint32_t, uint64_t>;

// The word kernels' preconditions: unit strides along both fast axes, and every row start a whole
// number of words from an aligned base (the words cut by the edges move element-wise).
inline bool words_fit(const TileParams& p, int64_t pack, uintptr_t word_bytes) {
  bool ok = p.src_i == 1 && p.dst_j == 1 && p.src_j % pack == 0 && p.dst_i % pack == 0 &&
            reinterpret_cast<uintptr_t>(p.src) % word_bytes == 0 && reinterpret_cast<uintptr_t>(p.dst) % word_bytes == 0;
  for (int k = 0; ok && k < p.batch.ndim; ++k) {
    ok = p.batch.src_stride[k] % pack == 0 && p.batch.dst_stride[k] % pack == 0;
  }
  return ok;
}

// kernel: a word-tile kernel instantiated for E and WordOf<E>.
template <class E>
Status launch_word_tiles(const TransposeLaunch& l, void (*kernel)(TileParams)) {
  using W = WordOf<E>;
  constexpr int64_t kSpan = kTile * int64_t(sizeof(W) / sizeof(E));
  TileParams p;
  GPUPRIMS_TRY(tile_params(l.dims, l.axes, kSpan, kSpan, l.src, l.dst, "transpose", &p));
  if (!words_fit(p, sizeof(W) / sizeof(E), sizeof(W))) return transpose_smem_padded(l);
  kernel<<<grid_for(p.tiles), dim3(kTile, kRows), 0, l.stream>>>(p);
  return check_launch("transpose", l.stream);
}

}  // namespace transpose_detail
}  // namespace gpuprims
