// decoupled_lookback: one pass, each tile's prefix from the status words of the tiles before it.
#include "gpuprims/scan/lookback_scan_kernel.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

template <class In, class Out, class Op>
struct LookbackRunner {
  static Status run(const ScanLaunch& l) {
    using Tile = StripedTile<In, Out, Op, kLookbackThreads>;
    using Acc = typename Tile::Acc;
    const int64_t tiles_per_row = ceil_div(l.layout.len, Tile::kTileItems);
    const int64_t tiles = l.layout.rows * tiles_per_row;
    // One zeroed block: the tile counter, then the status words (see tile_status.cuh).
    const std::size_t counter_bytes = 256;
    const std::size_t bytes = counter_bytes + align_up(TileStatus<Acc>::bytes(tiles));
    StreamScratch scratch;
    GPUPRIMS_TRY(scratch.allocate(bytes, l.device, l.stream, "scan"));
    GPUPRIMS_CUDA_CHECK("scan", cudaMemsetAsync(scratch.data(), 0, bytes, l.stream));
    auto* counter = static_cast<unsigned long long*>(scratch.data());
    const TileStatus<Acc> status = TileStatus<Acc>::at(static_cast<char*>(scratch.data()) + counter_bytes, tiles);
    // Persistent blocks: as many as fit on the GPU at once (each loops over tiles).
    static const int per_sm = resident_blocks_per_sm(lookback_scan_kernel<In, Out, Op>, kLookbackThreads);
    const int64_t blocks = std::min<int64_t>(tiles, int64_t(per_sm) * l.sm_count);
    lookback_scan_kernel<In, Out, Op><<<unsigned(blocks), kLookbackThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, tiles_per_row, tiles, counter,
        status, l.exclusive, vector_path_ok<In, Out>(l));
    return check_launch("scan", l.stream);
  }
};

}  // namespace

Status scan_decoupled_lookback(const ScanLaunch& l) { return dispatch_scan_types<LookbackRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
