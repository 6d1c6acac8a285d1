// register_blocks: packed's word tiles with each thread's kPack x kPack block of elements
// transposed in registers, so shared memory moves whole words both ways (register_block_kernel);
// a side whose layout cannot move words (odd row lengths, misaligned bases, strided fast axes) is
// read or written element by element by the same kernel.
#include "word_tile_launch.cuh"

namespace gpuprims {
namespace transpose_detail {

Status transpose_register_blocks(const TransposeLaunch& l) {
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    using W = WordOf<E>;
    return launch_word_tiles<E>(l, [](WordSides sides) -> void (*)(TileParams) {
      if (sides.src) return sides.dst ? register_block_kernel<E, W, true, true> : register_block_kernel<E, W, true, false>;
      return sides.dst ? register_block_kernel<E, W, false, true> : register_block_kernel<E, W, false, false>;
    });
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
