// The bitonic network (bitonic_sort.cuh) over each row: the k results into rank order
// (sorted=True), or the whole row, whose first k entries are then the result (the sort variant).
// Shared-memory tiles for up to one tile's entries, global compare-exchange steps between tile
// passes beyond.
#include <algorithm>
#include <cstdint>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/topk/bitonic_sort.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace topk_detail {

namespace {

constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kScratchBudget = int64_t(512) << 20;  // bytes of keys and positions per batch of rows

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

namespace {

// Sorts `count` entries of each row (the results, or the whole row), storing the first k.
Status sort_rows(const TopkLaunch& l, SortSource source, int64_t count_per_row) {
  return visit_numeric_dtype(l.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using Key = typename KeyTraits<T>::Key;
    const TopkRows& rows = l.params.rows;
    SortScratch s{nullptr, nullptr, next_pow2(count_per_row)};
    const auto tiles = [&](int64_t first, int64_t count, int64_t lo, int64_t hi, SortSource from, bool to) {
      const dim3 grid{unsigned(std::max<int64_t>(1, s.padded / kSortTile)), unsigned(count), 1};
      // A thread per compare pair (a warp at least): short rows of results sort in small blocks.
      const int64_t tile = std::min<int64_t>(s.padded, kSortTile);
      const unsigned threads = unsigned(std::min<int64_t>(kSortMaxThreads, std::max<int64_t>(32, tile / 2)));
      sort_tiles_kernel<T><<<grid, threads, 0, l.stream>>>(l.params, s, first, lo, hi, from, to);
      return check_launch("topk", l.stream);
    };
    if (s.padded <= kSortTile) {
      for (int64_t first = 0; first < rows.num_rows; first += kMaxGridY) {
        GPUPRIMS_TRY(tiles(first, std::min(kMaxGridY, rows.num_rows - first), 2, s.padded, source, true));
      }
      return Status::ok();
    }
    const int64_t per_row = s.padded * int64_t(sizeof(Key) + sizeof(int64_t));
    const int64_t batch = std::max<int64_t>(1, std::min({rows.num_rows, kMaxGridY, kScratchBudget / per_row}));
    StreamScratch scratch;
    GPUPRIMS_TRY(scratch.allocate(size_t(batch * per_row), l.device, l.stream, "topk"));
    s.pos = static_cast<int64_t*>(scratch.data());
    s.keys = s.pos + batch * s.padded;
    for (int64_t first = 0; first < rows.num_rows; first += batch) {
      const int64_t count = std::min(batch, rows.num_rows - first);
      GPUPRIMS_TRY(tiles(first, count, 2, kSortTile, source, false));
      const int64_t pairs = count * (s.padded / 2);
      const unsigned steps_grid = unsigned(std::min<int64_t>(ceil_div<int64_t>(pairs, 256), 65536));
      for (int64_t size = 2 * kSortTile; size <= s.padded; size <<= 1) {
        for (int64_t stride = size / 2; stride >= kSortTile; stride >>= 1) {
          sort_step_kernel<Key><<<steps_grid, 256, 0, l.stream>>>(s, count, size, stride);
          GPUPRIMS_TRY(check_launch("topk", l.stream));
        }
        GPUPRIMS_TRY(tiles(first, count, size, size, SortSource::kScratch, size == s.padded));
      }
    }
    return Status::ok();
  });
}

}  // namespace

Status sort_results(const TopkLaunch& l) { return sort_rows(l, SortSource::kResults, l.params.rows.k); }

Status select_sort(const TopkLaunch& l) { return sort_rows(l, SortSource::kRow, l.params.rows.row_len); }

}  // namespace topk_detail
}  // namespace gpuprims
