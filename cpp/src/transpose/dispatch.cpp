// transpose(): validation, merging, variant choice and the hand-off to a variant or the CPU
// reference. Never synchronizes, allocates nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/transpose.hpp"
#include "launch.hpp"

namespace gpuprims {

using transpose_detail::TransposeLaunch;

const std::vector<TransposeVariantInfo>& transpose_variants() {
  static const std::vector<TransposeVariantInfo> variants = {
      {TransposeAlgorithm::kNaive, "naive",
       "a thread per output element in the output's order, decoding its index into both offsets: writes "
       "coalesced, reads strided (a 32-byte sector per element)", true},
      {TransposeAlgorithm::kSmemTiled, "smem_tiled",
       "32x32 tiles staged in shared memory, a block of 32x8 threads: reads and writes both coalesced, the "
       "tile read down its columns with 32-way bank conflicts (4-byte elements)", true},
      {TransposeAlgorithm::kSmemPadded, "smem_padded",
       "smem_tiled with one padding element per tile row: conflict-free column reads", true},
      {TransposeAlgorithm::kPacked, "packed",
       "tiles of 32x32 words moved as words on both sides (8-byte words: 64x64 float32, 128x128 2-byte tiles; "
       "4-byte words for bytes: 128x128), each output word packed from an XOR-swizzled tile (conflict-free); "
       "needs unit strides on both fast axes and word-aligned rows (smem_padded otherwise)", true},
      {TransposeAlgorithm::kRegisterBlocks, "register_blocks",
       "packed's word tiles with each thread's block of 2x2 (4-byte elements) or 4x4 (1- and 2-byte) elements "
       "transposed in registers, so shared memory moves whole words both ways; interior tiles skip bounds "
       "checks; a side whose layout cannot move words (odd rows, misaligned, strided) moves elements", true},
  };
  return variants;
}

Status parse_transpose_algorithm(const std::string& name, TransposeAlgorithm* out) {
  return parse_variant_name("transpose", transpose_variants(), name, out);
}

namespace {

// axes: a permutation of 0 .. ndim-1, negative entries counting from the end (numpy's rule).
Status normalize_axes(const char* op, const TensorView& x, const std::vector<int64_t>& axes,
                      std::vector<int64_t>* normalized) {
  const int64_t n = x.ndim;
  if (int64_t(axes.size()) != n) {
    return value_error(arg_error_prefix(op, "axes") + "expected a permutation of " + std::to_string(n) +
                       " axes (x has shape " + shape_string(x) + "), got " + std::to_string(axes.size()) + " axes");
  }
  std::vector<bool> seen(size_t(n), false);
  normalized->resize(size_t(n));
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k];
    if (a < -n || a >= n) {
      return value_error(arg_error_prefix(op, "axes") + "expected axes in [" + std::to_string(-n) + ", " +
                         std::to_string(n) + ") for an array of " + std::to_string(n) + " dimensions, got " +
                         std::to_string(a));
    }
    const int64_t u = a < 0 ? a + n : a;
    if (seen[size_t(u)]) {
      return value_error(arg_error_prefix(op, "axes") + "expected each axis once, got axis " + std::to_string(u) +
                         " twice");
    }
    seen[size_t(u)] = true;
    (*normalized)[k] = u;
  }
  return Status::ok();
}

Status check_output(const char* op, const TensorView& x, const std::vector<int64_t>& axes, const TensorView& out) {
  GPUPRIMS_TRY(check_same_device(op, x, "x", out, "out"));
  if (out.dtype != x.dtype) {
    return type_error(arg_error_prefix(op, "out") + "expected dtype " + dtype_name(x.dtype) + ", got " +
                      dtype_name(out.dtype));
  }
  if (out.readonly) return type_error(arg_error_prefix(op, "out") + "expected a writable array, got a read-only one");
  bool same = out.ndim == x.ndim;
  std::string expect = "(";
  for (int k = 0; k < x.ndim; ++k) {
    const int64_t e = x.shape[axes[size_t(k)]];
    same = same && out.shape[k] == e;
    expect += (k ? ", " : "") + std::to_string(e);
  }
  expect += x.ndim == 1 ? ",)" : ")";
  if (!same) return value_error(arg_error_prefix(op, "out") + "expected shape " + expect + ", got " + shape_string(out));
  GPUPRIMS_TRY(check_distinct_elements(op, out, "out"));
  return check_no_overlap(op, x, "x", out, "out", /*in_place_ok=*/false);
}

// "auto": register_blocks (every layout: element-wise on a side that cannot move words).
Status run_variant(TransposeAlgorithm algorithm, const TransposeLaunch& l) {
  if (algorithm == TransposeAlgorithm::kNaive) return transpose_detail::transpose_naive(l);
  if (l.axes.i == l.axes.j) return transpose_detail::transpose_rows(l);
  switch (algorithm) {
    case TransposeAlgorithm::kSmemTiled: return transpose_detail::transpose_smem_tiled(l);
    case TransposeAlgorithm::kSmemPadded: return transpose_detail::transpose_smem_padded(l);
    case TransposeAlgorithm::kPacked: return transpose_detail::transpose_packed(l);
    default: break;
  }
  return transpose_detail::transpose_register_blocks(l);
}

}  // namespace

Status transpose(const TensorView& x, const std::vector<int64_t>& axes, const TensorView& out,
                 TransposeAlgorithm algorithm, cudaStream_t stream) {
  const char* op = "transpose";
  std::vector<int64_t> perm;
  GPUPRIMS_TRY(normalize_axes(op, x, axes, &perm));
  GPUPRIMS_TRY(check_output(op, x, perm, out));
  if (x.device.kind == DeviceKind::kCPU) return transpose_detail::transpose_host(x, perm.data(), out);
  TransposeLaunch l;
  l.dims = transpose_detail::merge_dims(x, perm.data(), out);
  if (l.dims.empty) return Status::ok();
  GPUPRIMS_TRY(check_context_alive(op));
  GPUPRIMS_TRY(check_element_aligned(op, x, "x"));
  GPUPRIMS_TRY(check_element_aligned(op, out, "out"));
  l.axes = transpose_detail::fast_axes(l.dims);
  l.elem_size = dtype_size(x.dtype);
  l.src = x.data;
  l.dst = out.data;
  l.stream = stream;
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(x.device.id, op));
  return run_variant(algorithm, l);
}

}  // namespace gpuprims
