// packed: elements moved as words on both sides (packed_tile_kernel) where the layout allows it,
// smem_padded otherwise: 8-byte words for 2-, 4- and 8-byte elements, 4-byte words for bytes.
// Bytes are this kernel's weak spot (H200, uint8 16384 x 16384, % of copy): 32.2 in 4-byte words
// (session 54 run 4), 41.1 in 8-byte words (a 64 KiB dynamic tile, 116 registers, two blocks per
// SM: run 3, not kept), 63.5 for an earlier 4-byte-word form without the load buffer and the
// swizzle (padded rows, whole words only: run 2). Why the byte path lost half is open.
#include <cstdint>
#include <type_traits>

#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {
namespace {

// packed_tile_kernel's preconditions: unit strides along both fast axes, and every row start a
// whole number of words from an aligned base (the words cut by the edges move element-wise).
bool packed_ok(const TileParams& p, int64_t pack, uintptr_t word_bytes) {
  bool ok = p.src_i == 1 && p.dst_j == 1 && p.src_j % pack == 0 && p.dst_i % pack == 0 &&
            reinterpret_cast<uintptr_t>(p.src) % word_bytes == 0 && reinterpret_cast<uintptr_t>(p.dst) % word_bytes == 0;
  for (int k = 0; ok && k < p.batch.ndim; ++k) {
    ok = p.batch.src_stride[k] % pack == 0 && p.batch.dst_stride[k] % pack == 0;
  }
  return ok;
}

template <class E>
Status launch_packed(const TransposeLaunch& l) {
  using W = std::conditional_t<sizeof(E) == 1, uint32_t, uint64_t>;
  constexpr int64_t kPack = sizeof(W) / sizeof(E);
  constexpr int64_t kSpan = kTile * kPack;
  TileParams p;
  GPUPRIMS_TRY(tile_params(l.dims, l.axes, kSpan, kSpan, l.src, l.dst, "transpose", &p));
  if (!packed_ok(p, kPack, sizeof(W))) return transpose_smem_padded(l);
  packed_tile_kernel<E, W><<<grid_for(p.tiles), dim3(kTile, kRows), 0, l.stream>>>(p);
  return check_launch("transpose", l.stream);
}

}  // namespace

Status transpose_packed(const TransposeLaunch& l) {
  return visit_element_size(l.elem_size, [&](auto tag) { return launch_packed<typename decltype(tag)::type>(l); });
}

}  // namespace transpose_detail
}  // namespace gpuprims
