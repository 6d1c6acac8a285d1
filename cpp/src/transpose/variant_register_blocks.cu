// register_blocks: packed's word tiles with each thread's kPack x kPack block of elements
// transposed in registers, so shared memory moves whole words both ways (register_block_kernel).
#include "word_tile_launch.cuh"

namespace gpuprims {
namespace transpose_detail {

Status transpose_register_blocks(const TransposeLaunch& l) {
  return visit_element_size(l.elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    return launch_word_tiles<E>(l, register_block_kernel<E, WordOf<E>>);
  });
}

}  // namespace transpose_detail
}  // namespace gpuprims
