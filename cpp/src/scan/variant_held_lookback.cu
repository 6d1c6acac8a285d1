// held_lookback: one pass, each tile read once and kept in shared memory by the block that read it
// until its prefix is cheap to find (held_lookback_scan_kernel.cuh).
#include <algorithm>

#include "gpuprims/core/per_device.hpp"
#include "gpuprims/scan/held_lookback_scan_kernel.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

// Blocks of held_lookback_scan_kernel<In, Out, Op> resident per SM on `device` (the current one),
// with the kernel's dynamic shared memory limit raised on the way; 0 where the device cannot give
// a block its slots. Cached per device; a failed call means 0 (the look-back runs) and its error is
// cleared: these calls fail only on configuration, never with a sticky error.
template <class In, class Out, class Op>
int resident_held_blocks(int device) {
  static PerDeviceAnswer answer;
  return answer.get(device, [] {
    const auto kernel = held_lookback_scan_kernel<In, Out, Op>;
    constexpr int kSmem = held_scan_smem_bytes<In, Out, Op>();
    int blocks = 0;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kLookbackThreads, kSmem) != cudaSuccess) {
      blocks = 0;
    }
    cudaGetLastError();
    return blocks;
  });
}

template <class In, class Out, class Op>
struct HeldLookbackRunner {
  static Status run(const ScanLaunch& l) {
    const int resident = resident_held_blocks<In, Out, Op>(l.device);
    if (resident == 0) return scan_decoupled_lookback(l);
    SinglePassTiles<HeldTile<In, Out, Op>> tiles;
    GPUPRIMS_TRY(tiles.prepare(l));
    // A persistent grid of the resident blocks (more would only wait for a free SM; any grid is
    // correct, held_lookback_scan_kernel.cuh).
    const auto grid = static_cast<unsigned>(std::min<int64_t>(tiles.count, int64_t(resident) * l.sm_count));
    constexpr int kSmem = held_scan_smem_bytes<In, Out, Op>();
    held_lookback_scan_kernel<In, Out, Op><<<grid, kLookbackThreads, kSmem, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles.per_row, tiles.count,
        tiles.counter, tiles.status, l.exclusive, vector_path_ok<In, Out>(l));
    return check_launch("scan", l.stream);
  }
};

}  // namespace

Status scan_held_lookback(const ScanLaunch& l) { return dispatch_scan_types<HeldLookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
