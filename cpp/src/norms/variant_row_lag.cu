// row_lag: rows beyond one block in one launch, each chunk read from DRAM once and again from L2
// (row_lag.cuh). Where it cannot run (float64, rows that are not whole aligned 16-byte vectors) the
// call runs split_row, which computes the same function.
#include <climits>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_lag.cuh"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// 256 threads x 32 values (chunks of 8192 elements), phase B's whole re-read issued before the
// row's wait, a persistent grid of the resident blocks R taking tickets with the next one claimed
// early, lag L = 5R/8: bench/tune/norms_cluster_tune.cu, H100, session 17 device run 8 (the chunk
// moments about their own anchors, chunk_moments.cuh), float32 256 x 262144 layer_norm / rms_norm,
// % of copy over two passes: L = R/2 68.7-69.9 / 76.1-77.5, 5R/8 70.8-70.9 / 77.9-78.8, 3R/4
// 70.3-71.0 / 77.4-78.9, 7R/8 69.9-70.3 / 76.6-77.4, R 68.8-69.3 / 75.0-76.0; one block per ticket
// at R/2 65.6-66.3 / 72.4-73.1. (Run 5, with every chunk's moments about the row's first element,
// which test_layer_norm_far_first_element_long_rows showed to err by up to 300 rounding units:
// 79-81 / 83-85 at 5R/8 and a cliff below R/2, 55-58 / 62 at 3R/8.) The norm kind runs 3 blocks
// per SM (80 registers), the softmax kind 4 (64).
constexpr int kThreads = 256;
constexpr int kValues = 32;
template <class T, RowKind kKind>
using LagConfig = RowLagConfig<kThreads, kValues / Vec16<T>::kLanes, kKind == RowKind::kSoftmax ? 4 : 3,
                               /*apply unroll: the whole re-read first*/ 0, /*prefetch*/ true>;
constexpr int kLagEighths = 5;

template <class T, RowKind kKind>
Status run(const NormLaunch& l) {
  using Acc = acc_t<T>;
  using Cfg = LagConfig<T, kKind>;
  const char* op = norm_op_name(l.op);
  const int64_t rows = l.params.layout.num_rows;
  const int64_t per_row = max_of<int64_t>(1, ceil_div(l.params.layout.row_len, Cfg::template chunk_len<T>()));
  if (per_row > INT_MAX) return norms_split_row(l);  // rows of more than 2^44 elements
  static const int per_sm = resident_blocks_per_sm(row_lag_kernel<T, kKind, Cfg>, Cfg::kThreads);
  const int64_t resident = int64_t(per_sm) * l.sm_count;
  const int64_t lag = max_of<int64_t>(per_row, resident * kLagEighths / 8);
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(row_lag_scratch_bytes<kKind, Acc>(rows, rows * per_row), l.device, l.stream, op));
  GPUPRIMS_CUDA_CHECK(op, (launch_row_lag<T, kKind, Cfg>(l.params, scratch.data(), lag, resident, l.stream)));
  return check_launch(op, l.stream);
}

}  // namespace

Status norms_row_lag(const NormLaunch& l) {
  if (!l.params.vec_ok) return norms_split_row(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) == 8) {
      return norms_split_row(l);
    } else {
      return row_kind(l.op) == RowKind::kSoftmax ? run<T, RowKind::kSoftmax>(l) : run<T, RowKind::kNorm>(l);
    }
  });
}

// Where "auto" ran split_row before (cluster_row's measured range ends at 8 CTAs, 131072
// float32 elements) and row_lag measured ahead of both: the float32 norm kind on sm_90
// (bench/tune/norms_cluster_tune.cu, % of copy). H100, session 17 run 8, 256 x 262144 layer_norm /
// rms_norm: row_lag 70.8-70.9 / 77.9-78.8, cluster_row 65.7-66.4 / 68.2-68.8, split_row 59.9-60.4 /
// 64.3-64.9. H200, session 12 run 2 (the schedule at R/2, chunk moments about the row's first
// element): 65.8-66.4 / 68.5-70.0 against cluster_row 50.8-52.6 and split_row 60.9-62.5. At
// 640 x 100000 (7 CTAs) it ties cluster_row on the H100 (78.7 / 82.5 against 78.1 / 81.8), so
// shorter rows keep cluster_row; the softmax kind and float16 / bfloat16 too (cluster_row ahead on
// both GPUs); sm_80 was not measured.
bool row_lag_preferred(const NormLaunch& l) {
  constexpr int64_t kMinRow = 131072;
  if (l.dtype != DType::kFloat32 || row_kind(l.op) != RowKind::kNorm || !l.params.vec_ok ||
      l.params.layout.row_len <= kMinRow) {
    return false;
  }
  int major = 0;
  return compute_capability_major(l.device, &major).is_ok() && major >= 9;
}

}  // namespace norms
}  // namespace gpuprims
