// warptile: the register-blocked float32 kernel (blocktile_128.cuh). Aligned rows: the tiling of
// WarptileStreamK with the tiles past its last whole wave split Stream-K (warptile_streamk.cuh);
// other layouts: WarptileSmallConfig on the strided loader.
#include "gpuprims/core/stream.hpp"
#include "gpuprims/gemm/warptile_streamk.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace gemm {
namespace {

// tile_end: only the tiles before it in TileOrder.
template <class Cfg, bool kVecLoads>
void launch_config(const GemmLaunch& l, int64_t tile_end = INT64_MAX) {
  const unsigned grid = grid_extent(tile_end, tile_grid<Cfg::kTileM, Cfg::kTileN>(l.params));
  blocked_128_kernel<Blocked128Step::kWarptile, kVecLoads, Cfg><<<grid, Cfg::kThreads, 0, l.stream>>>(l.params, tile_end);
}

// The whole waves of tiles by blocked_128_kernel, then the tiles past them split over a grid of
// kMinBlocks blocks per SM (what the kernel's registers allow on sm_90; where fewer are resident,
// as on sm_80 builds, the rest of the grid queues: slower, never stuck). Products whose split
// would give some block no unit (short K, few tiles) run whole: Stream-K gains nothing there and
// would cost a workspace and a wide launch. Workspace: a partial slot per block from the
// stream-ordered pool (no host synchronization; the pool keeps the memory between calls) and the
// stream's persistent counters, which the kernel leaves at zero; under graph capture, counters
// from the scratch too, zeroed by a memset node.
Status launch_streamk(const GemmLaunch& l) {
  using Split = WarptileStreamK;
  using Cfg = Split::Config;
  static_assert(Split::kMode == StreamKMode::kSplitOnly, "the whole tiles run in blocked_128_kernel");
  const int64_t grid = int64_t(l.sm_count) * Cfg::kMinBlocks;
  StreamKSchedule w = streamk_schedule<Cfg>(l.params, grid, Split::kWaves, Split::kUnitSlices, Split::kMode,
                                            nullptr, nullptr);
  if (w.units < grid) {
    launch_config<Cfg, true>(l);
    return Status::ok();
  }
  // Counters and workspace first: a failure then leaves C untouched.
  const size_t partial_bytes = size_t(grid) * Cfg::kTileM * Cfg::kTileN * sizeof(float);
  StreamScratch scratch;
  StreamStateLock held(l.stream);
  void* partials = nullptr;
  GPUPRIMS_TRY(scratch_and_counters(l.device, held, partial_bytes, 1 + size_t(w.split_tiles), &scratch, &partials,
                                    &w.counters, "matmul"));
  w.partials = static_cast<float*>(partials);
  if (w.split_begin > 0) launch_config<Cfg, true>(l, w.split_begin);
  warptile_streamk_kernel<Cfg><<<static_cast<unsigned>(grid), Cfg::kThreads, 0, l.stream>>>(l.params, w);
  return Status::ok();
}

}  // namespace

Status matmul_warptile(const GemmLaunch& l) {
  // 16-byte global loads need both A and B rows contiguous and aligned (dispatch's a_vec_rows,
  // b_vec_rows); otherwise the strided scalar loader, without Stream-K (one instantiation fewer:
  // layouts that need it are not the ones tuned for peak throughput).
  if (l.params.a_vec_rows && l.params.b_vec_rows) {
    GPUPRIMS_TRY(launch_streamk(l));
  } else {
    launch_config<WarptileSmallConfig, false>(l);
  }
  return check_launch("matmul", l.stream);
}

}  // namespace gemm
}  // namespace gpuprims
