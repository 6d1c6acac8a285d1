// smem_tiled: 32x32 tiles through shared memory without padding (tile_kernel<E, 0>).
#include "tile_launch.cuh"

namespace gpuprims {
namespace transpose_detail {

Status transpose_smem_tiled(const TransposeLaunch& l) { return launch_tiles<0>(l); }

}  // namespace transpose_detail
}  // namespace gpuprims
