// block_per_row: one block per row, every sweep of the selection in one launch (block_select.cuh).
#include "gpuprims/topk/block_select.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace topk_detail {

Status select_block_per_row(const TopkLaunch& l) {
  return visit_numeric_dtype(l.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using Key = typename KeyTraits<T>::Key;
    const int64_t rows = l.params.rows.num_rows;
    const bool short_rows = l.params.rows.row_len <= ShortRowShape<Key>::kCapacity;
    const auto kernel =
        short_rows ? block_select_kernel<T, ShortRowShape<Key>> : block_select_kernel<T, LongRowShape<Key>>;
    const int threads = short_rows ? ShortRowShape<Key>::kThreads : LongRowShape<Key>::kThreads;
    constexpr int64_t kMaxGrid = 0x7fffffff;
    for (int64_t first = 0; first < rows; first += kMaxGrid) {
      const int64_t count = rows - first < kMaxGrid ? rows - first : kMaxGrid;
      kernel<<<unsigned(count), threads, 0, l.stream>>>(l.params, first);
      GPUPRIMS_TRY(check_launch("topk", l.stream));
    }
    return Status::ok();
  });
}

}  // namespace topk_detail
}  // namespace gpuprims
