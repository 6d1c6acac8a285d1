// block_per_row: a block per row, the row one on-chip tile (row_scans.cuh).
#include "runners.cuh"

namespace gpuprims {
namespace scan_detail {
namespace {

// 256 threads (a 4096-item tile) for rows up to 4096 items, 512 (8192 items) beyond: the smallest
// tile that holds the row, so few threads idle on short rows and long ones take few tiles.
template <class In, class Out, class Op>
struct BlockPerRowRunner {
  template <int kThreads>
  static Status launch(const ScanLaunch& l) {
    constexpr int64_t kMaxGrid = (int64_t(1) << 31) - 1;
    block_per_row_kernel<In, Out, Op, kThreads><<<unsigned(std::min(l.layout.rows, kMaxGrid)), kThreads, 0, l.stream>>>(
        static_cast<const storage_t<In>*>(l.in), static_cast<Out*>(l.out), l.layout, l.exclusive,
        vector_path_ok<In, Out>(l));
    return check_launch("scan", l.stream);
  }
  static Status run(const ScanLaunch& l) {
    return l.layout.len <= 256 * kBlockRowItemsPerThread ? launch<256>(l) : launch<512>(l);
  }
  static_assert(kBlockPerRowMaxTile == 512 * kBlockRowItemsPerThread,
                "dispatch's one-tile bound (launch.hpp) is the 512-thread tile");
};

}  // namespace

Status scan_block_per_row(const ScanLaunch& l) { return dispatch_scan_types<BlockPerRowRunner>(l); }

}  // namespace scan_detail
}  // namespace gpuprims
