// matmul() and gemv(): validation, stride normalization, variant choice and the hand-off to a
// variant or the CPU reference. Never synchronizes, allocates nothing.
#include <cstdint>
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/gemm.hpp"
#include "launch.hpp"

namespace gpuprims {

const std::vector<GemmVariantInfo>& matmul_variants() {
  static const std::vector<GemmVariantInfo> v = {
      {int(GemmAlgorithm::kNaive), "naive",
       "a thread per output element, consecutive threads on consecutive rows: uncoalesced B and C "
       "accesses on row-major data (all floating dtypes)", true},
      {int(GemmAlgorithm::kCoalesced), "coalesced",
       "a thread per output element, consecutive threads on consecutive columns: a warp reads one A "
       "element (broadcast) and 32 consecutive B elements (all floating dtypes)", true},
      {int(GemmAlgorithm::kSmemTiled), "smem_tiled",
       "32x32 tiles of A and B staged in shared memory, a thread per output: each global element read "
       "once per tile instead of once per output (all floating dtypes)", true},
      {int(GemmAlgorithm::kBlocktile1d), "blocktile_1d",
       "64x64 block tile, 8-deep K slices, each thread 8 outputs of a column: one B value from shared "
       "memory serves 8 multiply-adds (float32)", true},
      {int(GemmAlgorithm::kBlocktile2d), "blocktile_2d",
       "128x128 block tile, each thread an 8x8 output block as outer products of 8 A and 8 B register "
       "values: 16 shared loads per 64 multiply-adds (float32)", true},
      {int(GemmAlgorithm::kVectorized), "vectorized",
       "blocktile_2d with 16-byte global loads (when rows are aligned), the A tile stored transposed, "
       "float4 shared-memory reads and 16-byte C stores (float32)", true},
      {int(GemmAlgorithm::kWarptile), "warptile",
       "vectorized with warp-level tiling (a sub-tile per warp, conflict-free float4 shared "
       "reads) and double-buffered shared memory: the next K slice is loaded while this one is "
       "multiplied, one barrier per slice; the tiles past the last whole wave split Stream-K over every SM; "
       "tiling: WarptileStreamK in warptile_streamk.cuh (float32)", true},
      {int(GemmAlgorithm::kWmma), "wmma",
       "tensor cores through nvcuda::wmma: 128x128 block tile, 32-deep K slices in padded shared memory, "
       "each warp 4x2 16x16 fragments accumulated in float32 (float16, bfloat16; float32 as TF32 only "
       "with allow_tf32)", true},
      {int(GemmAlgorithm::kMmaPipelined), "mma_pipelined",
       "mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled shared memory, filled by a multi-stage cp.async "
       "pipeline (16-byte copies when rows are contiguous and aligned, element gathers otherwise); "
       "tiling: MmaPipelinedConfig, or MmaPipelinedLargeConfig for products of a wave of its tiles on devices "
       "that allow its shared memory, in mma_pipelined.cuh (float16, bfloat16)", true},
  };
  return v;
}

const std::vector<GemmVariantInfo>& gemv_variants() {
  static const std::vector<GemmVariantInfo> v = {
      {int(GemvAlgorithm::kNaive), "naive",
       "a thread per row: coalesced when A is column-major, one 32-byte sector per element otherwise", true},
      {int(GemvAlgorithm::kWarpPerRow), "warp_per_row",
       "a warp per row, lanes striding along K, a shuffle reduction: coalesced on row-major A", true},
      {int(GemvAlgorithm::kVectorized), "vectorized",
       "a warp per row with 16-byte loads of A and x and four loads in flight per lane (when rows and x "
       "are contiguous and 16-byte aligned, else warp_per_row)", true},
  };
  return v;
}

Status parse_matmul_algorithm(const std::string& name, GemmAlgorithm* out) {
  return parse_variant_name("matmul", matmul_variants(), name, out);
}
Status parse_gemv_algorithm(const std::string& name, GemvAlgorithm* out) {
  return parse_variant_name("gemv", gemv_variants(), name, out);
}

namespace {

using gemm::GemmLaunch;
using gemm::GemvLaunch;
using gemm::MatrixStrides;


Status check_float(const char* op, const TensorView& v, const char* arg) {
  if (!is_floating(v.dtype)) {
    return type_error(arg_error_prefix(op, arg) + "expected float16, bfloat16, float32 or float64, got " + dtype_name(v.dtype));
  }
  return Status::ok();
}

Status check_same_dtype(const char* op, const TensorView& first, const char* first_arg, const TensorView& v,
                        const char* arg) {
  if (v.dtype != first.dtype) {
    return type_error(std::string(op) + ": arguments '" + first_arg + "' and '" + arg +
                      "' must have the same dtype, got " + dtype_name(first.dtype) + " and " + dtype_name(v.dtype));
  }
  return Status::ok();
}

Status check_output(const char* op, const TensorView& first, const TensorView& out) {
  GPUPRIMS_TRY(check_same_device(op, first, "a", out, "out"));
  if (out.dtype != first.dtype) {
    return type_error(arg_error_prefix(op, "out") + "expected dtype " + dtype_name(first.dtype) + ", got " +
                      dtype_name(out.dtype));
  }
  if (out.readonly) return type_error(arg_error_prefix(op, "out") + "expected a writable array, got a read-only one");
  return check_distinct_elements(op, out, "out");
}

// The strides of a (batch, rows, cols) view of a 2-D or 3-D array. A dimension of size 1 gets
// stride 0 (batch) or the stride that makes it look contiguous, so layout tests below see the
// layout that matters: a (1, K) row is "row-major" whatever stride its size-1 axis carries.
MatrixStrides matrix_strides(const TensorView& v) {
  const int d = v.ndim - 2;
  MatrixStrides s{d == 1 && v.shape[0] > 1 ? v.strides[0] : 0, v.strides[d], v.strides[d + 1]};
  if (v.shape[d + 1] <= 1) s.col = 1;
  if (v.shape[d] <= 1) s.row = 0;
  return s;
}

// Rows of a (batch, rows, cols) view are contiguous (unit column stride) and each starts on a
// 16-byte boundary in every batch: the 16-byte load paths' precondition.
bool rows_vector_aligned(const TensorView& v, const MatrixStrides& s) {
  const int64_t lanes = 16 / static_cast<int64_t>(dtype_size(v.dtype));
  return s.col == 1 && s.row % lanes == 0 && s.batch % lanes == 0 && reinterpret_cast<uintptr_t>(v.data) % 16 == 0;
}

bool float32_only(GemmAlgorithm a) {
  return a == GemmAlgorithm::kBlocktile1d || a == GemmAlgorithm::kBlocktile2d || a == GemmAlgorithm::kVectorized ||
         a == GemmAlgorithm::kWarptile;
}

const char* matmul_algorithm_name(GemmAlgorithm a) {
  for (const auto& v : matmul_variants()) {
    if (v.algorithm == int(a)) return v.name;
  }
  return "auto";
}

// "auto": mma_pipelined for float16 / bfloat16, wmma for float32 when TF32 is allowed, warptile
// (the fastest SIMT step) for float32 otherwise, smem_tiled for float64.
Status run_matmul_variant(GemmAlgorithm algorithm, bool allow_tf32, const GemmLaunch& l) {
  switch (algorithm) {
    case GemmAlgorithm::kNaive: return gemm::matmul_naive(l);
    case GemmAlgorithm::kCoalesced: return gemm::matmul_coalesced(l);
    case GemmAlgorithm::kSmemTiled: return gemm::matmul_smem_tiled(l);
    case GemmAlgorithm::kBlocktile1d: return gemm::matmul_blocktile_1d(l);
    case GemmAlgorithm::kBlocktile2d: return gemm::matmul_blocktile_2d(l);
    case GemmAlgorithm::kVectorized: return gemm::matmul_vectorized(l);
    case GemmAlgorithm::kWarptile: return gemm::matmul_warptile(l);
    case GemmAlgorithm::kWmma: return gemm::matmul_wmma(l);
    case GemmAlgorithm::kMmaPipelined: return gemm::matmul_mma_pipelined(l);
    case GemmAlgorithm::kAuto: break;
  }
  switch (l.dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return gemm::matmul_mma_pipelined(l);
    case DType::kFloat32: return allow_tf32 ? gemm::matmul_wmma(l) : gemm::matmul_warptile(l);
    default: break;
  }
  return gemm::matmul_smem_tiled(l);
}

Status run_gemv_variant(GemvAlgorithm algorithm, const GemvLaunch& l) {
  switch (algorithm) {
    case GemvAlgorithm::kNaive: return gemm::gemv_naive(l);
    case GemvAlgorithm::kWarpPerRow: return gemm::gemv_warp_per_row(l);
    case GemvAlgorithm::kVectorized: return gemm::gemv_vectorized(l);
    case GemvAlgorithm::kAuto: break;
  }
  // A column-major A is read coalesced by a thread per row; everything else by a warp per row.
  const gemm::GemvParams& p = l.params;
  if (p.a_row == 1 && p.a_col != 1) return gemm::gemv_naive(l);
  return gemm::gemv_vectorized(l);
}

}  // namespace

Status matmul(const TensorView& a, const TensorView& b, const TensorView& c, const MatmulOptions& options,
              cudaStream_t stream) {
  const char* op = "matmul";
  GPUPRIMS_TRY(check_float(op, a, "a"));
  GPUPRIMS_TRY(check_same_dtype(op, a, "a", b, "b"));
  GPUPRIMS_TRY(check_same_device(op, a, "a", b, "b"));
  GPUPRIMS_TRY(check_output(op, a, c));
  GPUPRIMS_TRY(check_no_overlap(op, a, "a", c, "out", /*in_place_ok=*/false));
  GPUPRIMS_TRY(check_no_overlap(op, b, "b", c, "out", /*in_place_ok=*/false));
  const auto check_ndim = [&](const TensorView& v, const char* arg) {
    if (v.ndim == 2 || v.ndim == 3) return Status::ok();
    return value_error(arg_error_prefix(op, arg) + "expected a 2-D or 3-D array, got shape " + shape_string(v));
  };
  GPUPRIMS_TRY(check_ndim(a, "a"));
  GPUPRIMS_TRY(check_ndim(b, "b"));
  const int64_t m = a.shape[a.ndim - 2], k = a.shape[a.ndim - 1];
  const int64_t kb = b.shape[b.ndim - 2], n = b.shape[b.ndim - 1];
  if (kb != k) {
    return value_error(std::string(op) + ": arguments 'a' and 'b' have mismatched inner dimensions: a is " +
                       shape_string(a) + " and b is " + shape_string(b));
  }
  const int64_t a_batch = a.ndim == 3 ? a.shape[0] : 1, b_batch = b.ndim == 3 ? b.shape[0] : 1;
  if (a_batch != b_batch && a_batch != 1 && b_batch != 1) {
    return value_error(std::string(op) + ": arguments 'a' and 'b' have batch sizes that do not broadcast: a is " +
                       shape_string(a) + " and b is " + shape_string(b));
  }
  const int out_ndim = a.ndim > b.ndim ? a.ndim : b.ndim;
  const int64_t batch = a_batch == 1 ? b_batch : a_batch;
  const bool shape_ok = c.ndim == out_ndim && c.shape[out_ndim - 2] == m && c.shape[out_ndim - 1] == n &&
                        (out_ndim == 2 || c.shape[0] == batch);
  if (!shape_ok) {
    const std::string expect = out_ndim == 3 ? "(" + std::to_string(batch) + ", " + std::to_string(m) + ", " +
                                                   std::to_string(n) + ")"
                                             : "(" + std::to_string(m) + ", " + std::to_string(n) + ")";
    return value_error(arg_error_prefix(op, "out") + "expected shape " + expect + ", got " + shape_string(c));
  }
  if (float32_only(options.algorithm) && a.dtype != DType::kFloat32) {
    return type_error(arg_error_prefix(op, "a") + "algorithm '" + matmul_algorithm_name(options.algorithm) +
                      "' takes float32 inputs, got " + dtype_name(a.dtype) +
                      " (naive, coalesced and smem_tiled take every floating dtype)");
  }
  if (options.algorithm == GemmAlgorithm::kWmma &&
      (a.dtype == DType::kFloat64 || (a.dtype == DType::kFloat32 && !options.allow_tf32))) {
    return type_error(arg_error_prefix(op, "a") + "algorithm 'wmma' takes float16 or bfloat16 inputs, or float32 with "
                      "allow_tf32=True, got " + dtype_name(a.dtype) +
                      (a.dtype == DType::kFloat32 ? " with allow_tf32=False" : ""));
  }
  if (options.algorithm == GemmAlgorithm::kMmaPipelined && a.dtype != DType::kFloat16 &&
      a.dtype != DType::kBFloat16) {
    return type_error(arg_error_prefix(op, "a") + "algorithm 'mma_pipelined' takes float16 or bfloat16 inputs, got " +
                      dtype_name(a.dtype));
  }

  GemmLaunch l{};
  gemm::GemmParams& p = l.params;
  p.a = a.data;
  p.b = b.data;
  p.c = c.data;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  p.sa = matrix_strides(a);
  p.sb = matrix_strides(b);
  p.sc = matrix_strides(c);
  l.dtype = a.dtype;
  l.stream = stream;
  if (a.device.kind == DeviceKind::kCPU) return gemm::matmul_host(l);
  if (batch == 0 || m == 0 || n == 0) return Status::ok();

  GPUPRIMS_TRY(check_context_alive(op));
  GPUPRIMS_TRY(check_element_aligned(op, a, "a"));
  GPUPRIMS_TRY(check_element_aligned(op, b, "b"));
  GPUPRIMS_TRY(check_element_aligned(op, c, "out"));
  p.a_vec_rows = rows_vector_aligned(a, p.sa);
  p.b_vec_rows = rows_vector_aligned(b, p.sb);
  p.c_vec_rows = rows_vector_aligned(c, p.sc);
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(a.device.id, op));
  l.device = a.device.id;
  // Both cached per device after the first call: no CUDA call here on later calls.
  GPUPRIMS_TRY(multiprocessor_count(a.device.id, &l.sm_count));
  GPUPRIMS_TRY(shared_memory_per_block_optin(a.device.id, &l.smem_optin));
  return run_matmul_variant(options.algorithm, options.allow_tf32, l);
}

Status gemv(const TensorView& a, const TensorView& x, const TensorView& y, GemvAlgorithm algorithm,
            cudaStream_t stream) {
  const char* op = "gemv";
  GPUPRIMS_TRY(check_float(op, a, "a"));
  GPUPRIMS_TRY(check_same_dtype(op, a, "a", x, "x"));
  GPUPRIMS_TRY(check_same_device(op, a, "a", x, "x"));
  GPUPRIMS_TRY(check_output(op, a, y));
  GPUPRIMS_TRY(check_no_overlap(op, a, "a", y, "out", /*in_place_ok=*/false));
  GPUPRIMS_TRY(check_no_overlap(op, x, "x", y, "out", /*in_place_ok=*/false));
  if (a.ndim != 2) return value_error(arg_error_prefix(op, "a") + "expected a 2-D array, got shape " + shape_string(a));
  if (x.ndim != 1 || x.shape[0] != a.shape[1]) {
    return value_error(arg_error_prefix(op, "x") + "expected shape (" + std::to_string(a.shape[1]) +
                       ",) (a's column count), got " + shape_string(x));
  }
  if (y.ndim != 1 || y.shape[0] != a.shape[0]) {
    return value_error(arg_error_prefix(op, "out") + "expected shape (" + std::to_string(a.shape[0]) + ",), got " +
                       shape_string(y));
  }
  GemvLaunch l{};
  gemm::GemvParams& p = l.params;
  const MatrixStrides s = matrix_strides(a);
  p.a = a.data;
  p.x = x.data;
  p.y = y.data;
  p.m = a.shape[0];
  p.k = a.shape[1];
  p.a_row = s.row;
  p.a_col = s.col;
  p.x_stride = p.k <= 1 ? 1 : x.strides[0];
  p.y_stride = p.m <= 1 ? 1 : y.strides[0];
  l.dtype = a.dtype;
  l.stream = stream;
  if (a.device.kind == DeviceKind::kCPU) return gemm::gemv_host(l);
  if (p.m == 0) return Status::ok();

  GPUPRIMS_TRY(check_context_alive(op));
  GPUPRIMS_TRY(check_element_aligned(op, a, "a"));
  GPUPRIMS_TRY(check_element_aligned(op, x, "x"));
  GPUPRIMS_TRY(check_element_aligned(op, y, "out"));
  p.vec_rows = rows_vector_aligned(a, s) && p.x_stride == 1 && reinterpret_cast<uintptr_t>(x.data) % 16 == 0;
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(a.device.id, op));
  return run_gemv_variant(algorithm, l);
}

}  // namespace gpuprims
