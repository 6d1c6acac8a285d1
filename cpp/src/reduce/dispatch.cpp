// reduce(): validation, variant choice and the hand-off to a variant or the CPU reference.
#include <cstdint>
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce.hpp"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {

using reduce_detail::ReduceLaunch;

const std::vector<ReduceVariantInfo>& reduce_variants() {
  static const std::vector<ReduceVariantInfo> variants = {
      {ReduceAlgorithm::kAtomicNaive, "atomic_naive",
       "one global atomic per element; float results may vary in the last bits between runs", false},
      {ReduceAlgorithm::kSmemInterleaved, "smem_interleaved",
       "shared-memory tree with interleaved addressing (divergent warps), one partial per block, multi-pass", true},
      {ReduceAlgorithm::kSmemSequential, "smem_sequential",
       "shared-memory tree with sequential addressing and the first add during load, multi-pass", true},
      {ReduceAlgorithm::kWarpShuffle, "warp_shuffle",
       "8 items per thread and warp-shuffle block reduction, one partial per block, multi-pass", true},
      {ReduceAlgorithm::kAtomicPerBlock, "atomic_per_block",
       "grid-stride loop, warp-shuffle block reduction, one atomic per block; float results may vary "
       "in the last bits between runs", false},
      {ReduceAlgorithm::kVectorized, "vectorized",
       "16-byte loads, 4 in flight per thread, fixed grid, warp shuffles, single pass with a last-block "
       "combine; run-to-run deterministic", true},
      {ReduceAlgorithm::kThreadPerOutput, "thread_per_output",
       "one thread per output element looping over its row: for many short rows", true},
      {ReduceAlgorithm::kWarpPerRow, "warp_per_row",
       "a warp per row (4, 8 or 16 lanes for rows under 2 KiB), about 4 16-byte loads in flight per lane, "
       "shuffles, no workspace: for many contiguous rows of 64 bytes to a few KiB", true},
      {ReduceAlgorithm::kColumnTiles, "column_tiles",
       "tiles of 128 adjacent outputs (256 of 2-byte items) x 8 reduced rows, each lane's adjacent outputs "
       "read as one 16-byte vector where aligned (each warp reads 512 contiguous bytes), split across "
       "blocks with a deterministic last-block combine: reductions along an outer axis", true},
      {ReduceAlgorithm::kBulkCopy, "bulk_copy",
       "vectorized's partition, each block's chunk streamed into 5 shared-memory stages of 8 KiB by sm_90 "
       "bulk copies (cp.async.bulk on mbarriers); single pass, run-to-run deterministic. Contiguous rows on "
       "sm_90 and newer (other inputs and GPUs run vectorized)", true},
      {ReduceAlgorithm::kWindow, "window",
       "small blocks in index order (512 threads x 4 16-byte loads, 32 KiB each) with no fence or ticket, the "
       "blocks in flight reading one window of memory; a second launch combines the partials in index order; "
       "run-to-run deterministic. Contiguous rows (strided ones run vectorized)", true},
  };
  return variants;
}

Status parse_reduce_algorithm(const std::string& name, ReduceAlgorithm* out) {
  return parse_variant_name("reduce", reduce_variants(), name, out);
}

Status parse_reduce_op(const std::string& name, ReduceOp* out) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax}) {
    if (name == reduce_op_name(op)) {
      *out = op;
      return Status::ok();
    }
  }
  return value_error("reduce: argument 'op': expected one of 'sum', 'prod', 'min', 'max', got '" + name + "'");
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMax: return "max";
  }
  return "?";
}

DType reduce_default_result_dtype(ReduceOp op, DType in) {
  if (op == ReduceOp::kMin || op == ReduceOp::kMax || is_floating(in)) return in;
  switch (in) {
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: return DType::kUInt64;
    default: return DType::kInt64;  // bool and signed integers
  }
}

namespace {

// "auto": the vectorized single pass for one long run or rows of contiguous elements; column tiles
// when neighbouring outputs are adjacent in memory but each row is strided (an outer axis); one
// thread per output for many short rows, where a block per row would idle most of its threads.
ReduceAlgorithm choose_algorithm(const ReduceLaunch& l) {
  const ReduceLayout& layout = l.layout;
  const bool outputs_adjacent = layout.keep_ndim > 0 && layout.keep_in_strides[layout.keep_ndim - 1] == 1;
  if (!layout.row_contiguous && layout.num_rows > 1 && outputs_adjacent) return ReduceAlgorithm::kColumnTiles;
  const bool many_rows = layout.num_rows >= int64_t(l.sm_count) * 64;
  const int64_t row_bytes = layout.row_len * int64_t(dtype_size(l.in_dtype));
  if (many_rows && (!layout.row_contiguous || row_bytes < 64)) return ReduceAlgorithm::kThreadPerOutput;
  // Contiguous rows of 64 bytes to 16 KiB, at least 16 per SM: a warp (or a group of lanes) each,
  // where `vectorized` gives each a block and thread_per_output reads a row per thread
  // (bench/tune/reduce_short_rows.py, session 38 run 3, H100, 2^28 float32 in rows of 16 / 32 /
  // 128 / 1024 / 2048 / 3136 / 4096 elements: warp_per_row 1229 / 1736 / 3009 / 3147 / 3142 / 3115
  // / 3101 GB/s; vectorized 56 / 112 / 439 / 2287 / 3161 / 2961 / 3145; thread_per_output 466 /
  // 188 at 16 / 32; torch.sum 634 / 620 / 2192 / 3044 / 3075 / 2985 / 3052; docs/reduce.md).
  constexpr int64_t kWarpRowBytes = int64_t(16) << 10;
  if (layout.row_contiguous && layout.num_rows >= int64_t(l.sm_count) * 16 && row_bytes < kWarpRowBytes) {
    return ReduceAlgorithm::kWarpPerRow;
  }
  // Rows of a MiB and more on sm_90 and newer: small blocks in index order and a second launch
  // (reduce_window.cuh: 1.014-1.020x CUB at 1 GiB on an H100 where bulk_copy ran 0.981-0.988x and
  // vectorized 0.992-0.997x; 1.009-1.016x in the benchmark, sessions 14, 16, 29). On the H200 the
  // bulk-copy single pass and window trade places from one machine to the next, and on average
  // neither leads (x CUB int32 / float32, bulk_copy against window: sessions 15 0.984 / 0.996 and
  // 0.980 / 0.996, then 0.996 / 0.989 and 0.999 / 0.994; 16 0.990 / 0.993 and 0.987 / 0.992; 29
  // 0.997 / 0.991 and 0.998 / 0.992; 30 1.001-1.002 / 0.984-0.985 and 1.004 / 0.991-0.992; 36, four
  // passes, 0.989-0.992 / 0.993-0.995 and 0.985-0.989 / 0.999-1.003), so window serves both GPUs
  // (sessions 30-35 took bulk_copy where an SM has an H200's DRAM bandwidth). Shorter rows keep the
  // vectorized single pass.
  constexpr int64_t kLongRowBytes = int64_t(1) << 20;
  if (layout.row_contiguous && l.cc_major >= 9 && layout.row_len * dtype_size(l.in_dtype) >= kLongRowBytes) {
    return ReduceAlgorithm::kWindow;
  }
  return ReduceAlgorithm::kVectorized;
}

Status run_variant(ReduceAlgorithm algorithm, const ReduceLaunch& l) {
  using namespace reduce_detail;
  switch (algorithm) {
    case ReduceAlgorithm::kAtomicNaive: return reduce_atomic_naive(l);
    case ReduceAlgorithm::kSmemInterleaved: return reduce_smem_interleaved(l);
    case ReduceAlgorithm::kSmemSequential: return reduce_smem_sequential(l);
    case ReduceAlgorithm::kWarpShuffle: return reduce_warp_shuffle(l);
    case ReduceAlgorithm::kAtomicPerBlock: return reduce_atomic_per_block(l);
    case ReduceAlgorithm::kThreadPerOutput: return reduce_thread_per_output(l);
    case ReduceAlgorithm::kWarpPerRow: return reduce_warp_per_row(l);
    case ReduceAlgorithm::kColumnTiles: return reduce_column_tiles(l);
    case ReduceAlgorithm::kBulkCopy: return reduce_bulk_copy(l);
    case ReduceAlgorithm::kWindow: return reduce_window(l);
    case ReduceAlgorithm::kVectorized:
    case ReduceAlgorithm::kAuto: break;
  }
  return reduce_vectorized(l);
}

// The dtype of the accumulator the variants use for `l`: read off the same dispatch that instantiates
// them (reduce_ops.hpp's AccumulatorOf), so the rule is written once.
template <class T, class Acc, class Op>
struct AccumulatorDType {
  static DType run(const ReduceLaunch&) { return dtype_of<Acc>::value; }
};

DType accumulator_dtype(const ReduceLaunch& l) { return reduce_detail::dispatch_reduce_types<AccumulatorDType>(l); }

// Rows whose reduced elements are several contiguous runs (dimensions that do not merge: axis=(0, 2)
// of a contiguous 3-d array, axis=(0, 2, 3) of NCHW, a full sum of x[:, :k]) reach the kernels as
// strided rows, read element by element through ReduceLayout::elem_offset (a 64-bit division per
// reduced dimension): float32 (64, 4096, 1024) axis=(0, 2) ran at 0.32x torch.sum (session 37 run 3,
// H100). Where the innermost run holds 512 bytes or more, the reduction runs in two steps instead,
// each over contiguous rows: every run into a scratch of accumulators (the accumulator's own dtype,
// so nothing is rounded between the steps and integers wrap as in one step), then the runs of
// each output. Both steps run `algorithm` (auto chooses each).
constexpr int64_t kMinRunBytes = 512;

Status run_in_two_steps(ReduceAlgorithm algorithm, const ReduceLaunch& l, const ReduceLayout& inner,
                        const ReduceLayout& outer) {
  ReduceLaunch first = l, second = l;
  first.layout = inner;
  first.out_dtype = accumulator_dtype(l);
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(size_t(inner.num_rows) * dtype_size(first.out_dtype), l.device, l.stream, "reduce"));
  first.out = scratch.data();
  second.layout = outer;
  second.in = scratch.data();
  second.in_dtype = first.out_dtype;
  const bool automatic = algorithm == ReduceAlgorithm::kAuto;
  GPUPRIMS_TRY(run_variant(automatic ? choose_algorithm(first) : algorithm, first));
  return run_variant(automatic ? choose_algorithm(second) : algorithm, second);
}

}  // namespace

Status reduce(const TensorView& in, const TensorView& out, const ReduceOptions& options, cudaStream_t stream) {
  GPUPRIMS_TRY(check_same_device("reduce", in, "x", out, "out"));
  if (out.readonly) return type_error("reduce: argument 'out': expected a writable array, got a read-only one");
  // Never in place: the atomic variants clear out before they read x.
  GPUPRIMS_TRY(check_distinct_elements("reduce", out, "out"));
  GPUPRIMS_TRY(check_no_overlap("reduce", in, "x", out, "out", /*in_place_ok=*/false));

  ReduceLaunch l{};
  GPUPRIMS_TRY(reduce_detail::make_reduce_layout(in, out, options, &l.layout, &l.in));
  // numpy's rule: min/max over an empty axis raise even when the result itself is empty.
  if (l.layout.row_len == 0 && (options.op == ReduceOp::kMin || options.op == ReduceOp::kMax)) {
    return value_error(std::string("reduce: zero-size array to reduction operation ") +
                       reduce_op_name(options.op) + " which has no identity");
  }
  l.in_dtype = in.dtype;
  l.op = options.op;
  l.width = out.dtype == DType::kFloat64 ? reduce_detail::AccWidth::kWide : reduce_detail::AccWidth::kNormal;
  l.out = out.data;
  l.out_dtype = out.dtype;
  l.stream = stream;
  if (in.device.kind == DeviceKind::kCPU) {
    l.device = -1;
    return reduce_detail::reduce_host(l);
  }

  GPUPRIMS_TRY(check_context_alive("reduce"));
  GPUPRIMS_TRY(check_element_aligned("reduce", in, "x"));
  GPUPRIMS_TRY(check_element_aligned("reduce", out, "out"));
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(in.device.id, "reduce"));
  l.device = in.device.id;
  GPUPRIMS_TRY(multiprocessor_count(l.device, &l.sm_count));
  GPUPRIMS_TRY(compute_capability_major(l.device, &l.cc_major));
  ReduceLayout inner, outer;
  const ReduceLayout& t = l.layout;
  if (t.num_rows > 0 && t.row_len > 0 && reduce_detail::split_inner_run(t, &inner, &outer) &&
      inner.row_len * int64_t(dtype_size(in.dtype)) >= kMinRunBytes) {
    return run_in_two_steps(options.algorithm, l, inner, outer);
  }
  const ReduceAlgorithm algorithm =
      options.algorithm == ReduceAlgorithm::kAuto ? choose_algorithm(l) : options.algorithm;
  return run_variant(algorithm, l);
}

}  // namespace gpuprims
