#pragma once
// The launch of tile_kernel shared by smem_tiled and smem_padded (kPad 0 and 1).
#include "gpuprims/transpose/transpose_kernels.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace transpose_detail {

template <int kPad>
Status launch_tiles(const TransposeLaunch& l) {
  TileParams p;
  GPUPRIMS_TRY(tile_params(l.dims, l.axes, kTile, kTile, l.src, l.dst, "transpose", &p));
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    tile_kernel<E, kPad><<<grid_for(p.tiles), dim3(kTile, kRows), 0, l.stream>>>(p);
    return check_launch("transpose", l.stream);
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
