// row_lag: rows beyond one block in one launch, each chunk read from DRAM once and again from L2
// (row_lag.cuh). Where it cannot run (float64, rows that are not whole aligned 16-byte vectors) the
// call runs split_row, which computes the same function. "auto" ran it for float32 norm-kind rows of
// 131073 to 262144 elements on sm_90 from session 17 to session 20; row_hold (which shares its
// chunks, phase A and phase B) replaced it there in session 21 (variant_row_hold.cu).
#include <climits>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms/row_lag.cuh"
#include "gpuprims/util/occupancy.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace norms {
namespace {

// 256 threads x 32 values (chunks of 8192 elements), phase B's whole re-read issued before the
// row's wait, a persistent grid of the resident blocks R taking tickets with the next one claimed
// early, lag L = 5R/8 or 3R/4 (lag_eighths below; bench/tune/norms_cluster_tune.cu, float32 256 x
// 262144 layer_norm / rms_norm, % of copy). H100, session 18 device runs 2-3 (phase B folding the
// row's partials from registers: row_lag.cuh HeldPartials), eight passes: 5R/8 77.1-78.3 /
// 82.7-83.5, 3R/4 76.1-77.7 / 81.3-82.4 (5R/8 ahead in every pass; session 17's kernel in the same
// runs 70.2-71.2 / 77.5-78.4). Session 17 (partials loaded in every pass of the combination), run
// 8: L = R/2 68.7-69.9 / 76.1-77.5, 5R/8 70.8-70.9 / 77.9-78.8, 3R/4 70.3-71.0 / 77.4-78.9, 7R/8
// 69.9-70.3 / 76.6-77.4, R 68.8-69.3 / 75.0-76.0; one block per ticket at R/2 65.6-66.3 /
// 72.4-73.1. H200, run 15 (session 17's kernel): R/2 46.3-48.1 / 47.8-52.4 (a cliff: phase B waits
// for chunks still in flight), 5R/8 54.7-55.6 / 59.7-60.3, 3R/4 55.6-56.5 / 60.9-61.3. The norm
// kind runs 3 blocks per SM (80 registers), the softmax kind 4 (64).
constexpr int kThreads = 256;
constexpr int kValues = 32;
template <class T, RowKind kKind>
using LagConfig = RowLagConfig<kThreads, kValues / Vec16<T>::kLanes, kKind == RowKind::kSoftmax ? 4 : 3,
                               /*prefetch*/ true>;
// The lag in eighths of R: 5 where each SM has little DRAM bandwidth to cover (H100: 5R/8 ahead of
// 3R/4 in all eight passes above), 6 where it has more (H200, session 19 device run 19, two passes,
// layer_norm / rms_norm: 3R/4 63.0-63.2 / 69.1-69.4 against 5R/8 61.9-62.3 / 67.5-67.7).
int lag_eighths(int device) { return wide_dram_per_sm(device) ? 6 : 5; }

template <class T, RowKind kKind>
Status run(const NormLaunch& l) {
  using Acc = acc_t<T>;
  using Cfg = LagConfig<T, kKind>;
  const char* op = norm_op_name(l.op);
  const int64_t rows = l.params.layout.num_rows;
  const int64_t per_row = Cfg::template chunks_per_row<T>(l.params.layout.row_len);
  if (per_row > INT_MAX) return norms_split_row(l);  // rows of more than 2^44 elements
  static const int per_sm = resident_blocks_per_sm(row_lag_kernel<T, kKind, Cfg>, Cfg::kThreads);
  const int64_t resident = int64_t(per_sm) * l.sm_count;
  const int64_t lag = resident * lag_eighths(l.device) / 8;  // launch_row_lag raises it to per_row if below
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(row_lag_scratch_bytes<kKind, Acc>(rows, rows * per_row), l.device, l.stream, op));
  GPUPRIMS_CUDA_CHECK(op, (launch_row_lag<T, kKind, Cfg>(l.params, scratch.data(), lag, resident, l.stream)));
  return check_launch(op, l.stream);
}

}  // namespace

Status norms_row_lag(const NormLaunch& l) {
  return run_vector_rows(l, [&](auto tag, auto kind) { return run<typename decltype(tag)::type, kind.value>(l); });
}

}  // namespace norms
}  // namespace gpuprims
