// segmented_reduce(): validation, the CPU reference and the GPU launch (merge-path range kernels).
#include <atomic>
#include <cstdint>
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/scan.hpp"
#include "gpuprims/scan/segmented_reduce_ranges.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace {

using reduce_detail::AccWidth;
using reduce_detail::acc_t;
using scan_detail::Segments;

// The merge-path range kernels (scan/segmented_reduce_ranges.cuh) for every input: each warp takes
// 4096 work units (items + segment ends) whatever the lengths, so one huge segment among tiny
// ones, power-law lengths or runs of empty segments stay at the memory system's read rate; the
// host cannot see the offsets, so no choice is made here. Shape and measurements against
// DeviceSegmentedReduce and the former per-segment kernels: docs/scan.md "Segmented reduce".
using Ranges = scan_detail::DefaultRangeShape;
// The fixup launched with programmatic stream serialization (sm_90+: its blocks are scheduled during
// the tile kernel's last wave and wait in cudaGridDependencySynchronize), hiding its launch gap:
// session 12 device run 6 (bench/tune/segmented_reduce_tune.cu final, H200, x CUB) 65536 x 4096
// 0.980 against 0.973, 262144 x 1024 2.072 against 2.060, runs of empty segments 4.242 against
// 4.210, the irregular problems level.
constexpr bool kOverlapFixup = true;
constexpr int kMaxDevices = 64;

// Whether the fixup may be launched overlapped on `device` (the current one): its wait for the tile
// kernel (cudaGridDependencySynchronize) is compiled into sm_90+ binaries only, so a binary the
// driver built from the compute_80 PTX (a newer GPU without matching SASS, an sm_80-only build)
// would run early without it. Cached per kernel and device; a failed query means no overlap.
template <class Acc, class Op>
bool fixup_overlaps(int device) {
  static std::atomic<int> known[kMaxDevices];  // 1 + (overlaps); 0: not asked yet
  if (!kOverlapFixup || device < 0 || device >= kMaxDevices) return false;
  int v = known[device].load(std::memory_order_relaxed);
  if (v == 0) {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, Ranges::fixup_kernel<Acc, Op>());
    if (e != cudaSuccess) cudaGetLastError();  // this query's own error, not sticky
    v = 1 + (e == cudaSuccess && attr.binaryVersion >= 90);
    known[device].store(v, std::memory_order_relaxed);
  }
  return v == 2;
}

template <class T, class Op>
Status run_segments(const TensorView& in, const Segments& seg, int device, cudaStream_t stream) {
  using S = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;
  // Integer min/max stay in the element type, so an empty segment's identity is the result dtype's
  // max/lowest (a 64-bit accumulator's identity would not survive the narrowing store).
  using Acc = std::conditional_t<reduce_detail::is_sum_or_prod<Op> || !std::is_integral<S>::value,
                                 acc_t<S, Op, AccWidth::kNormal>, S>;
  const auto* x = static_cast<const S*>(in.data);
  if (device < 0) {  // the CPU reference: left to right in the kernels' accumulator
    const Op op;
    for (int64_t s = 0; s < seg.count; ++s) {
      auto at = [&](int64_t i) {
        return seg.offsets_64 ? static_cast<const int64_t*>(seg.offsets)[i * seg.offset_step]
                              : int64_t(static_cast<const int32_t*>(seg.offsets)[i * seg.offset_step]);
      };
      Acc acc = Op::template identity<Acc>();
      for (int64_t i = at(s); i < at(s + 1); ++i) acc = op(acc, cast_value<Acc>(x[i * seg.step]));
      reduce_detail::store_as(seg.out, s * seg.out_step, seg.out_dtype, acc);
    }
    return Status::ok();
  }
  if (seg.count == 0) return Status::ok();
  const bool vector_ok = seg.step == 1 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const int64_t tiles = Ranges::tiles(seg);
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(Ranges::scratch_bytes(tiles), device, stream, "segmented_reduce"));
  const auto parts = Ranges::partials<Acc>(scratch.data(), tiles);
  GPUPRIMS_CUDA_CHECK("segmented_reduce",
                      (Ranges::launch<S, Acc, Op>(x, seg, vector_ok, parts, stream, fixup_overlaps<Acc, Op>(device))));
  return check_launch("segmented_reduce", stream);
}

template <class T>
Status run_op(const TensorView& in, const Segments& seg, ReduceOp op, int device, cudaStream_t stream) {
  using namespace reduce_detail;
  switch (op) {
    case ReduceOp::kSum: return run_segments<T, Sum>(in, seg, device, stream);
    case ReduceOp::kProd: return run_segments<T, Prod>(in, seg, device, stream);
    case ReduceOp::kMin: return run_segments<T, Min>(in, seg, device, stream);
    case ReduceOp::kMax: break;
  }
  return run_segments<T, Max>(in, seg, device, stream);
}

Status check_offsets_host(const Segments& seg) {
  int64_t previous = 0;
  for (int64_t i = 0; i <= seg.count; ++i) {
    const int64_t v = seg.offsets_64 ? static_cast<const int64_t*>(seg.offsets)[i * seg.offset_step]
                                     : int64_t(static_cast<const int32_t*>(seg.offsets)[i * seg.offset_step]);
    if (v < previous || v > seg.n) {
      return value_error("segmented_reduce: argument 'offsets': expected nondecreasing values in [0, " +
                         std::to_string(seg.n) + "], got " + std::to_string(v) + " at index " + std::to_string(i));
    }
    previous = v;
  }
  return Status::ok();
}

}  // namespace

Status segmented_reduce(const TensorView& in, const TensorView& offsets, const TensorView& out, ReduceOp op,
                        cudaStream_t stream) {
  if (in.ndim != 1 || offsets.ndim != 1 || out.ndim != 1) {
    return value_error("segmented_reduce: arguments 'x', 'offsets' and 'out' must be 1-D, got shapes " +
                       shape_string(in) + ", " + shape_string(offsets) + ", " + shape_string(out));
  }
  if (offsets.dtype != DType::kInt32 && offsets.dtype != DType::kInt64) {
    return type_error(std::string("segmented_reduce: argument 'offsets': expected int32 or int64, got ") +
                      dtype_name(offsets.dtype));
  }
  if (offsets.shape[0] < 1) {
    return value_error("segmented_reduce: argument 'offsets': expected at least one element (segments + 1)");
  }
  if (out.shape[0] != offsets.shape[0] - 1) {
    return value_error("segmented_reduce: argument 'out': expected length " + std::to_string(offsets.shape[0] - 1) +
                       ", got " + std::to_string(out.shape[0]));
  }
  if (in.device != offsets.device || in.device != out.device) {
    return value_error("segmented_reduce: 'x', 'offsets' and 'out' must be on one device");
  }
  if (out.readonly) return type_error("segmented_reduce: argument 'out': expected a writable array");
  GPUPRIMS_TRY(check_distinct_elements("segmented_reduce", out, "out"));
  GPUPRIMS_TRY(check_no_overlap("segmented_reduce", in, "x", out, "out", /*in_place_ok=*/false));
  GPUPRIMS_TRY(check_no_overlap("segmented_reduce", offsets, "offsets", out, "out", /*in_place_ok=*/false));
  const Segments seg{offsets.data, offsets.dtype == DType::kInt64, offsets.strides[0], offsets.shape[0] - 1,
                     in.shape[0], in.strides[0], out.data, out.strides[0], out.dtype};
  int device = -1;
  DeviceGuard guard;
  if (in.device.kind == DeviceKind::kCUDA) {
    GPUPRIMS_TRY(check_context_alive("segmented_reduce"));
    GPUPRIMS_TRY(guard.enter(in.device.id, "segmented_reduce"));
    device = in.device.id;
  } else {
    GPUPRIMS_TRY(check_offsets_host(seg));
  }
  switch (in.dtype) {
    case DType::kBool: return run_op<bool>(in, seg, op, device, stream);
    case DType::kInt32: return run_op<int32_t>(in, seg, op, device, stream);
    case DType::kInt64: return run_op<int64_t>(in, seg, op, device, stream);
    case DType::kUInt32: return run_op<uint32_t>(in, seg, op, device, stream);
    case DType::kUInt64: return run_op<uint64_t>(in, seg, op, device, stream);
    case DType::kFloat16: return run_op<half_t>(in, seg, op, device, stream);
    case DType::kBFloat16: return run_op<bfloat16_t>(in, seg, op, device, stream);
    case DType::kFloat32: return run_op<float>(in, seg, op, device, stream);
    case DType::kFloat64: return run_op<double>(in, seg, op, device, stream);
    default: break;
  }
  return type_error(std::string("segmented_reduce: argument 'x': expected bool, int32, int64, uint32, uint64, "
                                "float16, bfloat16, float32 or float64, got ") + dtype_name(in.dtype));
}

}  // namespace gpuprims
