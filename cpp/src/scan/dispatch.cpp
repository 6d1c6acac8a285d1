// scan(): validation, layout, variant choice and the hand-off to a variant or the CPU reference.
#include <cstdint>
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce.hpp"
#include "gpuprims/scan.hpp"
#include "gpuprims/scan/tile_shapes.hpp"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {

using scan_detail::ScanLaunch;

const std::vector<ScanVariantInfo>& scan_variants() {
  static const std::vector<ScanVariantInfo> variants = {
      {ScanAlgorithm::kHillisSteele, "hillis_steele",
       "Hillis-Steele tile scan, one item per thread, log2(512) barrier steps; scan-then-propagate across tiles", true},
      {ScanAlgorithm::kBlelloch, "blelloch",
       "Blelloch work-efficient up-/down-sweep, bank-conflict-free padding; scan-then-propagate across tiles", true},
      {ScanAlgorithm::kWarpShuffle, "warp_shuffle",
       "16 items per thread, 16-byte loads, warp-shuffle scans; scan-then-propagate across tiles", true},
      {ScanAlgorithm::kReduceThenScan, "reduce_then_scan",
       "three passes (tile totals, their scan, rescan with prefixes); bitwise deterministic, reads the input twice",
       true},
      {ScanAlgorithm::kDecoupledLookback, "decoupled_lookback",
       "single pass: tile ids from an atomic counter, prefixes by warp-parallel decoupled look-back; float sums "
       "and products may differ in the last bits between runs",
       false},
      {ScanAlgorithm::kLaggedLookback, "lagged_lookback",
       "single pass, every tile read twice: from DRAM for its aggregate, a lag of tiles later from L2 for its scan, "
       "so the DRAM read never waits for a prefix; float sums and products may differ in the last bits between runs",
       false},
      {ScanAlgorithm::kHeldLookback, "held_lookback",
       "single pass, every tile read once and held in shared memory by the block that read it, a persistent "
       "grid's round of tickets, until its predecessors' prefixes are published; float sums and products may "
       "differ in the last bits between runs",
       false},
      {ScanAlgorithm::kBlockPerRow, "block_per_row",
       "one block per row, the row an on-chip tile of 16 items per thread (longer rows in tiles): many rows of "
       "moderate length",
       true},
      {ScanAlgorithm::kWarpPerRow, "warp_per_row", "one warp per row, 4 items per lane per step: many short rows",
       true},
      {ScanAlgorithm::kColumns, "columns",
       "single pass over tiles of 16-256 adjacent columns x 16-256 items of a strided axis (warps read along lines "
       "of the array), a decoupled look-back per column; float sums and products may differ in the last bits "
       "between runs",
       false},
  };
  return variants;
}

Status parse_scan_algorithm(const std::string& name, ScanAlgorithm* out) {
  return parse_variant_name("scan", scan_variants(), name, out);
}

namespace scan_detail {

bool scan_pair_supported(DType in, DType out) {
  if (in == out) return true;
  // a float to a wider float of 4 or 8 bytes (not float16 <-> bfloat16)
  if (is_floating(in)) return is_floating(out) && dtype_size(out) > dtype_size(in) && dtype_size(out) >= 4;
  // numpy's promotion of sums and products, the reduce family's rule (min and max take it too,
  // when dtype= asks): bool and signed integers to int64, unsigned ones to uint64
  return out == reduce_default_result_dtype(ReduceOp::kSum, in);
}

}  // namespace scan_detail

namespace {

// x converted into out element by element (cast_value: numpy's conversion, with float -> integer
// saturating and NaN -> 0): a reduction over no axes, one thread per element (reduce's
// thread_per_output; each output is its one input element in out's dtype).
Status convert_into(const TensorView& in, const TensorView& out, cudaStream_t stream) {
  ReduceOptions no_axes;
  no_axes.all_axes = false;
  no_axes.algorithm = ReduceAlgorithm::kThreadPerOutput;
  return reduce(in, out, no_axes, stream);
}

bool float_sum_or_prod(const ScanLaunch& l) {
  return is_floating(l.out_dtype) && (l.op == ReduceOp::kSum || l.op == ReduceOp::kProd);
}

// Whether an SM of `device` holds the held scan's measured residency: 3 blocks, each with two 32 KiB
// slots, or 4 with two 24 KiB slots (64-bit accumulators): 192 KiB. GPUs whose SMs hold less (the
// per-block opt-in limit stands for it: 227 KiB on the H100 and H200, 99 KiB on consumer sm_120
// GPUs) would run fewer blocks, unmeasured.
bool held_scan_fits(int device) { return sm_holds_shared_memory(device, 3 * 64 * 1024); }

// Where "auto" may take the held scan at all: contiguous along the axis, 2^22 items or more, on a
// GPU of compute capability 9 or newer whose SMs hold its measured residency. The measurements:
// the 1-D rule in choose_algorithm and widening_rows_take_held.
bool held_scan_runs(const ScanLaunch& l) {
  const scan_detail::ScanLayout& t = l.layout;
  return t.in_step == 1 && t.len * t.rows >= (int64_t(1) << 22) && l.cc_major >= 9 && held_scan_fits(l.device);
}

// Contiguous rows of 1- or 2-byte items summed into a result of 4 or 8 bytes (bool / int8 / int16
// into int64, float16 / bfloat16 into float32 or float64), each at least one of the held scan's full
// tiles (256 x 16 items for 8-byte results, 256 x 32 for 4-byte ones) and 2^22 items in all, on the
// GPUs "auto" gives the held scan: its tiles store across lanes (held_transposes), where the row
// kernels' tile stores each lane's results as several vectors at a stride. Session 45 device run 7
// (H200, bench/results/h200/narrow_sums_row_scans_s45r7.txt, % of copy, held / block_per_row,
// torch.cumsum): bool 4096 x 8192 into int64 64.9 / 28.0 (18.9), bool 1024 x 32768 63.1 / 23.4
// (17.6), bfloat16 4096 x 8192 into float32 77.4 / 63.6 (15.5); int32 into int64, a lane's group 32
// bytes, stays with the row kernels (held 61.8 against block_per_row's 66.7 %). Float sums that must
// be reproducible (deterministic=True) keep the row kernels (choose_algorithm).
bool widening_rows_take_held(const ScanLaunch& l) {
  const scan_detail::ScanLayout& t = l.layout;
  // Results of 4 or 8 bytes accumulate in their own type, so acc = out for the tile's shape.
  const size_t in = dtype_size(l.in_dtype), out = dtype_size(l.out_dtype);
  if (in > 2 || out < 4 || !scan_detail::held_transposes_for(in, out, out) || t.out_step != 1) return false;
  return t.len >= int64_t(scan_detail::kLookbackThreads) * scan_detail::held_items_for(in, out, out) &&
         held_scan_runs(l);
}

// Strided axes with adjacent rows take column tiles from this many rows (columns of the matrix):
// their warp loads read neighbouring items of a line, where the look-back per row reads one item of
// each line it touches. Session 46 device run 1 (H200, bench/tune/scan_columns.py, float32, % of
// copy, column tiles of 64 columns / look-back): 2^23 x 8 5.5 / 3.7 (7 of 8 lanes idle), 2^22 x 16
// 10.2 / 2.3, 4096 x 8192 69.5 / 8.6; fewer columns were not measured.
constexpr int64_t kColumnsMinRows = 8;

// "auto": the single-pass look-back for long rows, the held one for large contiguous scans on
// Hopper-class GPUs (reduce-then-scan when float results must be reproducible); a block per row
// for many rows of more than 2048 items and for any rows that fit its one tile, a warp per row for
// many shorter rows; column tiles when the axis is strided and neighbouring rows are adjacent in
// memory.
ScanAlgorithm choose_algorithm(const ScanLaunch& l, bool deterministic) {
  const scan_detail::ScanLayout& t = l.layout;
  if (t.rows > 1 && widening_rows_take_held(l) && !(deterministic && float_sum_or_prod(l))) {
    return ScanAlgorithm::kHeldLookback;
  }
  const bool rows_adjacent = t.row_ndim > 0 && t.row_in_strides[t.row_ndim - 1] == 1;
  if (t.in_step != 1 && rows_adjacent && t.rows >= kColumnsMinRows && !(deterministic && float_sum_or_prod(l))) {
    return ScanAlgorithm::kColumns;
  }
  // Rows of up to 2048 items, four per SM or more: a warp per row. Session 41 device run 2 (H200,
  // bench/tune/scan_small_calls.py, CUDA-event medians, µs): 1000 x 2048 float32 15.2 against
  // block_per_row's 20.5 (float64 23.4 / 27.0), 500 x 1024 15.0 / 15.3 (a tie).
  if (t.len <= 2048 && t.rows >= int64_t(l.sm_count) * 4) return ScanAlgorithm::kWarpPerRow;
  // Contiguous rows of more than 2048 items, at least two per SM: a block per row. float32 rows
  // at 2^25 items (session 13 device run 4, % of a 1 GiB copy): 4096 items 90.7 against
  // warp_per_row's 87.7, 8192 89.7-90.3 / 84.2, 16384 88.0 / 85.5, 65536 85.0 / 45.9, 131072 (256
  // rows) 82.5-83.6 / 26.2, while a warp per row stays ahead up to 2048 items (89.5 against 45.4
  // there). The tile scans this takes long rows from ran at 76.5-79.4 % on 1-D 2^28-item float32 /
  // int32 scans (session 12 run 4; not measured on these shapes).
  if (t.len > 2048 && t.in_step == 1 && t.out_step == 1 && t.rows >= int64_t(l.sm_count) * 2) {
    return ScanAlgorithm::kBlockPerRow;
  }
  if (t.len <= 8192 && t.rows >= int64_t(l.sm_count) * 8) return ScanAlgorithm::kWarpPerRow;
  // Fewer rows that fit block_per_row's largest tile (512 threads x 16 items): one block a row, as
  // many blocks as the look-back's one or two tiles a row, without its tile-status buffer (allocated,
  // cleared and freed on every call) or its tile counter. Session 41 device run 2 (H200, CUDA-event
  // medians with out=, µs, block_per_row against the look-back): float32 1 x 1000 15.2 / 24.0,
  // 1 x 8192 14.6 / 18.6, 64 x 1024 14.9 / 18.4, 16 x 8192 15.2 / 18.7, 100 x 4096 15.2 / 19.2,
  // 250 x 8192 16.2 / 19.7; float64 1 x 8192 15.2 / 19.3, 16 x 8192 15.8 / 19.3, 250 x 8192
  // 19.0 / 26.1; and 1000 calls back to back (allocation included), 64 x 1024 float32 10.1 µs a
  // call against 13.2 (torch.cumsum 9.9). Contiguous rows only were measured.
  if (t.len <= scan_detail::kBlockPerRowMaxTile) return ScanAlgorithm::kBlockPerRow;
  if (deterministic && float_sum_or_prod(l)) return ScanAlgorithm::kReduceThenScan;
  // The held look-back for contiguous scans on Hopper and newer, from 2^22 items. H200, 1-D sums, x
  // the look-back (bench/tune/scan_held_dtypes.py, through the library): session 44 device run 6 (since
  // 64-bit accumulators share one 16-byte status word with their flag), int32 and float32
  // 1.06-1.10x at 2^22, 1.17-1.24x at 2^24-2^28 (90.0 % of copy at 2^28; 1.21-1.22x CUB in `python
  // -m gpuprims.bench scan`); int32 to its default int64 result 1.29x at 2^22, 1.47-1.53x at
  // 2^24-2^28; int64 1.04x / 1.10-1.12x (87.4 % of copy at 2^28, torch.cumsum 67.1 %); float64 1.09x
  // / 1.20-1.23x; float16 1.21x / 1.28-1.40x; bfloat16 to float32 1.00x / 1.15-1.29x. Session 45 run
  // 3, eleven pairs in two passes (before the widening scans' transposed store, which run 4 measured
  // 1.2-2.4x faster at 2^28): 2^22 0.94-1.30x, mean 1.08x (each pair ahead in one pass at least; calls
  // of 30-50 µs, host cost included); 2^23 0.94-1.45x, mean 1.16x; bool, int8 and int16 into int64
  // 1.09-1.31x at both sizes (bench/results/h200/scan_held_dtypes_s45r3_small.txt). Pairs not
  // measured follow the measured pair of their tile (item and accumulator sizes). Strided axes, older
  // GPUs and those whose SMs cannot hold the held scan's blocks (held_scan_fits) keep the look-back,
  // which is measured there.
  return held_scan_runs(l) ? ScanAlgorithm::kHeldLookback : ScanAlgorithm::kDecoupledLookback;
}

Status run_variant(ScanAlgorithm algorithm, const ScanLaunch& l) {
  using namespace scan_detail;
  switch (algorithm) {
    case ScanAlgorithm::kHillisSteele: return scan_hillis_steele(l);
    case ScanAlgorithm::kBlelloch: return scan_blelloch(l);
    case ScanAlgorithm::kWarpShuffle: return scan_warp_shuffle(l);
    case ScanAlgorithm::kReduceThenScan: return scan_reduce_then_scan(l);
    case ScanAlgorithm::kBlockPerRow: return scan_block_per_row(l);
    case ScanAlgorithm::kWarpPerRow: return scan_warp_per_row(l);
    case ScanAlgorithm::kColumns: return scan_columns(l);
    case ScanAlgorithm::kLaggedLookback: return scan_lagged_lookback(l);
    case ScanAlgorithm::kHeldLookback: return scan_held_lookback(l);
    case ScanAlgorithm::kDecoupledLookback:
    case ScanAlgorithm::kAuto: break;
  }
  return scan_decoupled_lookback(l);
}

}  // namespace

Status scan(const TensorView& in, const TensorView& out, const ScanOptions& options, cudaStream_t stream) {
  GPUPRIMS_TRY(check_same_device("scan", in, "x", out, "out"));
  if (out.readonly) return type_error("scan: argument 'out': expected a writable array, got a read-only one");
  if (in.ndim != out.ndim || in.ndim == 0) {
    return value_error("scan: argument 'out': expected shape " + shape_string(in) + ", got " + shape_string(out));
  }
  for (int d = 0; d < in.ndim; ++d) {
    if (in.shape[d] != out.shape[d]) {
      return value_error("scan: argument 'out': expected shape " + shape_string(in) + ", got " + shape_string(out));
    }
  }
  GPUPRIMS_TRY(check_distinct_elements("scan", out, "out"));
  GPUPRIMS_TRY(check_no_overlap("scan", in, "x", out, "out", /*in_place_ok=*/true));
  if (options.axis < 0 || options.axis >= in.ndim) {
    return value_error("scan: argument 'axis': expected an int in [0, " + std::to_string(in.ndim) + "), got " +
                       std::to_string(options.axis));
  }
  // numpy's cumsum(x, dtype=) converts x to dtype and scans in dtype. The pairs scan_pair_supported
  // names read x in the scan kernels (at no extra traffic); every other pair converts x into out
  // first and scans out in place (one more pass over out).
  const bool convert_first = !scan_detail::scan_pair_supported(in.dtype, out.dtype);
  if (convert_first) GPUPRIMS_TRY(check_no_overlap("scan", in, "x", out, "out", /*in_place_ok=*/false));
  const TensorView& scanned = convert_first ? out : in;
  ScanLaunch l{};
  GPUPRIMS_TRY(scan_detail::make_scan_layout(scanned, out, options.axis, &l.layout));
  l.in = scanned.data;
  l.in_dtype = scanned.dtype;
  l.out = out.data;
  l.out_dtype = out.dtype;
  l.op = options.op;
  l.exclusive = options.exclusive;
  l.stream = stream;
  // A named variant that is not run-to-run reproducible for float sums and products (the table's
  // `deterministic`: the look-backs) is refused when deterministic=True asks for that.
  if (options.deterministic && float_sum_or_prod(l)) {
    for (const ScanVariantInfo& v : scan_variants()) {
      if (v.algorithm == options.algorithm && !v.deterministic) {
        return value_error(std::string("scan: argument 'algorithm': '") + v.name +
                           "' float sums and products are not bitwise reproducible; use deterministic=False or "
                           "algorithm='reduce_then_scan'");
      }
    }
  }
  if (l.layout.len == 0 || l.layout.rows == 0) return Status::ok();
  if (in.device.kind == DeviceKind::kCPU) {
    l.device = -1;
    if (convert_first) GPUPRIMS_TRY(convert_into(in, out, stream));
    return scan_detail::scan_host(l);
  }

  GPUPRIMS_TRY(check_context_alive("scan"));
  GPUPRIMS_TRY(check_element_aligned("scan", in, "x"));
  GPUPRIMS_TRY(check_element_aligned("scan", out, "out"));
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(in.device.id, "scan"));
  l.device = in.device.id;
  GPUPRIMS_TRY(multiprocessor_count(l.device, &l.sm_count));
  GPUPRIMS_TRY(compute_capability_major(l.device, &l.cc_major));
  if (convert_first) GPUPRIMS_TRY(convert_into(in, out, stream));
  const ScanAlgorithm algorithm =
      options.algorithm == ScanAlgorithm::kAuto ? choose_algorithm(l, options.deterministic) : options.algorithm;
  return run_variant(algorithm, l);
}

}  // namespace gpuprims
