#pragma once
// The launch shared by packed and register_blocks: tiles of 32 x 32 words W (8-byte words for 2-,
// 4- and 8-byte elements, 4-byte words for bytes).
#include <cstdint>
#include <type_traits>

#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

template <class E>
using WordOf = std::conditional_t<sizeof(E) == 1, uint32_t, uint64_t>;

// Which sides of the copy can move whole words: a unit stride along the side's fast axis (i for
// the source, j for the destination), an aligned base, and every other stride a multiple of the
// word's kPack elements, so that every row starts on a word (the words cut by the array's edges
// move element-wise).
struct WordSides {
  bool src, dst;
};

inline WordSides word_sides(const TileParams& p, int64_t pack, uintptr_t word_bytes) {
  const auto fits = [&](const void* base, int64_t fast_stride, int64_t row_stride, const int64_t* batch_stride) {
    bool ok = fast_stride == 1 && row_stride % pack == 0 && reinterpret_cast<uintptr_t>(base) % word_bytes == 0;
    for (int k = 0; ok && k < p.batch.ndim; ++k) ok = batch_stride[k] % pack == 0;
    return ok;
  };
  return {fits(p.src, p.src_i, p.src_j, p.batch.src_stride), fits(p.dst, p.dst_j, p.dst_i, p.batch.dst_stride)};
}

// pick(sides): the kernel for E and WordOf<E> that runs those sides, or nullptr for smem_padded.
template <class E, class Pick>
Status launch_word_tiles(const TransposeLaunch& l, Pick pick) {
  using W = WordOf<E>;
  constexpr int64_t kPack = sizeof(W) / sizeof(E);
  TileParams p;
  GPUPRIMS_TRY(tile_params(l.dims, l.axes, kTile * kPack, kTile * kPack, l.src, l.dst, "transpose", &p));
  void (*kernel)(TileParams) = pick(word_sides(p, kPack, sizeof(W)));
  if (kernel == nullptr) return transpose_smem_padded(l);
  kernel<<<grid_for(p.tiles), dim3(kTile, kRows), 0, l.stream>>>(p);
  return check_launch("transpose", l.stream);
}

}  // namespace transpose_detail
}  // namespace gpuprims
