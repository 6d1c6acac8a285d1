// split_row: several blocks per row, one launch per sweep (split_select.cuh), rows in batches that
// share one scratch allocation.
#include <algorithm>
#include <cstdint>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/topk/split_select.cuh"
#include "gpuprims/util/math.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace topk_detail {

namespace {

constexpr int64_t kScratchBudget = int64_t(256) << 20;  // bytes of scratch per batch of rows
constexpr int64_t kMaxGridY = 65535;

constexpr int64_t round_up16(int64_t b) { return (b + 15) / 16 * 16; }

}  // namespace

Status select_split_row(const TopkLaunch& l) {
  return visit_numeric_dtype(l.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using Key = typename KeyTraits<T>::Key;
    using D = Digits<Key>;
    constexpr int kThreads = 256;
    const TopkRows& rows = l.params.rows;
    const int64_t n = rows.row_len;
    // Buffer the candidates once they are at most a sixteenth of the row (and at least 4096):
    // reading them back then costs under the row's bytes again.
    const int64_t capacity = std::min<int64_t>(n, std::max<int64_t>(4096, n / 16));
    const int64_t state_bytes = round_up16(int64_t(sizeof(SplitRowState)));
    const int64_t hist_bytes = int64_t(D::kMaxBins) * 8;
    const int64_t buffer_bytes = round_up16(2 * capacity * 8) + round_up16(2 * capacity * int64_t(sizeof(Key)));
    const int64_t per_row = state_bytes + hist_bytes + buffer_bytes;
    const int64_t batch = std::max<int64_t>(1, std::min({rows.num_rows, kMaxGridY, kScratchBudget / per_row}));
    StreamScratch scratch;
    GPUPRIMS_TRY(scratch.allocate(size_t(batch * per_row), l.device, l.stream, "topk"));
    char* base = static_cast<char*>(scratch.data());
    SplitScratch s;
    s.state = reinterpret_cast<SplitRowState*>(base);
    s.hist = reinterpret_cast<unsigned long long*>(base + batch * state_bytes);
    s.buf_pos = reinterpret_cast<unsigned long long*>(base + batch * (state_bytes + hist_bytes));
    s.buf_key = base + batch * (state_bytes + hist_bytes) + round_up16(batch * 2 * capacity * 8);
    s.capacity = capacity;
    int sm_count = 0;
    GPUPRIMS_TRY(multiprocessor_count(l.device, &sm_count));
    for (int64_t first = 0; first < rows.num_rows; first += batch) {
      const int64_t count = std::min(batch, rows.num_rows - first);
      // One wave of blocks over the batch (about four of 256 threads per SM), each with at least
      // 16384 elements: ncu on 64 x 131072 float32 measured sweep 0 at 1.2 TB/s with 16 blocks
      // of 8192 per row in two waves, the per-block costs (clearing, flushing the histogram, the
      // last block's choice) not covered.
      constexpr int64_t kMinSlice = 16384;
      const int64_t most = std::max<int64_t>(1, ceil_div(n, kMinSlice));
      const int64_t per_row_blocks = std::min(most, std::max<int64_t>(1, 4 * int64_t(sm_count) / count));
      // The states and the histograms lie back to back: one memset zeroes the batch's.
      GPUPRIMS_CUDA_CHECK("topk", cudaMemsetAsync(base, 0, size_t(batch * (state_bytes + hist_bytes)), l.stream));
      const dim3 grid{unsigned(per_row_blocks), unsigned(count), 1};
      for (int sweep = 0; sweep <= D::kPasses; ++sweep) {
        split_sweep_kernel<T, kThreads><<<grid, kThreads, 0, l.stream>>>(l.params, s, first, sweep);
        GPUPRIMS_TRY(check_launch("topk", l.stream));
      }
    }
    return Status::ok();
  });
}

}  // namespace topk_detail
}  // namespace gpuprims
