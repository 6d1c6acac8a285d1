// smem_padded: 32x33 tiles, conflict-free column reads (tile_kernel<E, 1>).
#include "tile_launch.cuh"

namespace gpuprims {
namespace transpose_detail {

Status transpose_smem_padded(const TransposeLaunch& l) { return launch_tiles<1>(l); }

}  // namespace transpose_detail
}  // namespace gpuprims
