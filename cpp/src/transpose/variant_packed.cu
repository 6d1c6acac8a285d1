// packed: tiles moved as words on both sides, each output word gathered element by element from the
// tile (packed_tile_kernel); smem_padded where a side cannot move words. Bytes are this kernel's
// weak spot (H200, uint8 16384 x 16384, % of copy): 32.2 in 4-byte words (session 54 run 4), 41.1
// in 8-byte words (a 64 KiB dynamic tile, 116 registers, two blocks per SM: run 3, not kept), 63.5
// for an earlier 4-byte-word form without the load buffer and the swizzle (padded rows, whole
// words only: run 2). register_blocks, the next step, takes the gathers out of shared memory.
#include "word_tile_launch.cuh"

namespace gpuprims {
namespace transpose_detail {

Status transpose_packed(const TransposeLaunch& l) {
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return launch_word_tiles<E>(l, [](WordSides sides) -> void (*)(TileParams) {
      return sides.src && sides.dst ? packed_tile_kernel<E, WordOf<E>> : nullptr;
    });
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
