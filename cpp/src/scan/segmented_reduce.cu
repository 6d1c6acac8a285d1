// segmented_reduce(): validation, the CPU reference and the GPU launch (a block per segment for long
// segments on average, else the merge-path range kernels).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/per_device.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/scan.hpp"
#include "gpuprims/scan/segmented_reduce_blocks.cuh"
#include "gpuprims/scan/segmented_reduce_ranges.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace {

using reduce_detail::AccWidth;
using reduce_detail::acc_t;
using scan_detail::Segments;

// Every input can go through the merge-path range kernels (scan/segmented_reduce_ranges.cuh): each
// warp takes 4096 work units (items + segment ends) whatever the lengths, so one huge segment
// among tiny ones, power-law lengths or runs of empty segments stay at the memory system's read
// rate. Shape and measurements against DeviceSegmentedReduce: docs/scan.md "Segmented reduce".
using Ranges = scan_detail::DefaultRangeShape;
// Unit-stride inputs whose segments average at least this many bytes take the
// block path (scan/segmented_reduce_blocks.cuh: a block per segment, segments over 16 of its
// rounds split over the GPU by a second kernel), which reads regular and mixed lengths of 4096
// float32 items and more faster than the range kernels. Session 19 device run 4 (H100, float32,
// x CUB, blocks path / ranges): 65536 x 4096 0.998 / 0.974, 16384 x 16384 0.987-0.998 /
// 0.930-0.948, lengths 1-9000 1.022 / 0.924, 131072 x 2048 1.127-1.137 / 1.145-1.146 (hence the
// bound between 8 and 16 KiB), one 2^28-item segment 165-167 / 162-163.
constexpr int64_t kBlockPathMinAverageBytes = 12 * 1024;
// The second kernel of a pair (the range fixup, the long-segment kernel) launched with
// programmatic stream serialization (sm_90+: its blocks are scheduled during the first kernel's
// last wave and wait in cudaGridDependencySynchronize), hiding its launch gap: session 12 device
// run 6 (bench/tune/segmented_reduce_tune.cu final, H200, x CUB) 65536 x 4096 0.980 against 0.973,
// 262144 x 1024 2.072 against 2.060, runs of empty segments 4.242 against 4.210, the irregular
// problems level.
constexpr bool kOverlapSecondKernel = true;
// Whether a second kernel may be launched overlapped on `device` (the current one): its wait for
// the first (cudaGridDependencySynchronize) is compiled into sm_90+ code only, so code the driver
// built from the compute_80 PTX (a newer GPU without matching SASS, an sm_80-only build: binary
// version 90 or more, PTX version 80) would run early without it. Every kernel of this file comes
// from one compilation with one architecture list, so one kernel's versions answer for all of
// them; cached per device. A failed query means no overlap.
bool second_kernel_overlaps(int device) {
  static PerDeviceAnswer answer;
  if (!kOverlapSecondKernel) return false;
  return answer.get(device, [] {
    cudaFuncAttributes attr;
    const cudaError_t e = cudaFuncGetAttributes(&attr, Ranges::fixup_kernel<float, reduce_detail::Sum>());
    if (e != cudaSuccess) cudaGetLastError();  // this query's own error, not sticky
    return int(e == cudaSuccess && attr.binaryVersion >= 90 && attr.ptxVersion >= 90);
  }) != 0;
}

// The block path's launch, with the long-segment list in stream scratch and its two counters
// from the stream's counters (zero between kernels; under graph capture, scratch zeroed by a
// memset node inside the graph).
template <class S, class Acc, class Op>
Status run_blocks(const S* x, const Segments& seg, int device, cudaStream_t stream) {
  using Shape = scan_detail::BlockPathShape;
  const int64_t max_entries = Shape::max_entries<S>(seg.n, seg.count);
  const int64_t max_chunks = Shape::max_chunks<S>(seg.n, seg.count);
  scan_detail::LongSegments<Acc> longs{};
  StreamScratch scratch;
  // From taking the counters to the long kernel's launch, which reads what the blocks kernel
  // appended through them: no other host thread's launch on this stream in between.
  StreamStateLock held(stream);
  int64_t long_blocks = 0;
  if (max_entries > 0) {
    void* list = nullptr;
    unsigned int* counters = nullptr;
    GPUPRIMS_TRY(scratch_and_counters(device, held, scan_detail::long_segments_bytes<Acc>(max_entries, max_chunks),
                                      4, &scratch, &list, &counters, "segmented_reduce"));
    longs = scan_detail::long_segments_in<Acc>(list, max_entries, max_chunks, counters);
    int sms = 0;
    GPUPRIMS_TRY(multiprocessor_count(device, &sms));
    long_blocks = std::min<int64_t>(max_chunks, int64_t(sms) * Shape::kMinBlocks);
  }
  GPUPRIMS_CUDA_CHECK("segmented_reduce",
                      (scan_detail::launch_segment_blocks<S, Acc, Op>(x, seg, longs, long_blocks,
                                                                      scan_detail::default_tail(seg.count, long_blocks),
                                                                      stream, second_kernel_overlaps(device))));
  return check_launch("segmented_reduce", stream);
}

// What the block path needs (besides partials of 4 or 8 bytes): a unit-stride x, a grid of one
// block per segment, and room in the list head's fields (24-bit slots, 40-bit chunks) for the
// bounds plus the appends of blocks that raced a full list (append_long: at most the resident
// blocks, each at most kMaxChunksPerSegment chunks). Inputs without it run the range kernels,
// whatever algorithm= says.
template <class S>
bool block_path_fits(const Segments& seg, bool unit_stride) {
  using Shape = scan_detail::BlockPathShape;
  constexpr int shift = scan_detail::kLongHeadShift;
  return unit_stride && seg.count <= INT32_MAX &&
         Shape::max_entries<S>(seg.n, seg.count) < (int64_t(1) << (63 - shift)) &&
         Shape::max_chunks<S>(seg.n, seg.count) < (int64_t(1) << (shift - 1));
}

// "auto"'s rule: the block path when the segments average kBlockPathMinAverageBytes or more.
template <class S>
bool long_on_average(const Segments& seg) {
  return seg.n / seg.count * int64_t(sizeof(S)) >= kBlockPathMinAverageBytes;
}

template <class T, class Op>
Status run_segments(const TensorView& in, const Segments& seg, SegmentedReduceAlgorithm algorithm, int device,
                    cudaStream_t stream) {
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
      store_as(seg.out, s * seg.out_step, seg.out_dtype, acc);
    }
    return Status::ok();
  }
  if (seg.count == 0) return Status::ok();
  const bool vector_ok = seg.step == 1 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  if constexpr (sizeof(Acc) >= 4) {  // (min / max of bool, 8- and 16-bit integers: the range kernels)
    // The block path reads any element-aligned unit-stride x (its 16-byte loads start at the
    // first 16-byte boundary of each segment); the range kernels need x itself 16-byte aligned.
    const bool unit_stride = seg.step == 1 && reinterpret_cast<uintptr_t>(x) % sizeof(S) == 0;
    if (algorithm != SegmentedReduceAlgorithm::kRanges && block_path_fits<S>(seg, unit_stride) &&
        (algorithm == SegmentedReduceAlgorithm::kBlocks || long_on_average<S>(seg))) {
      return run_blocks<S, Acc, Op>(x, seg, device, stream);
    }
  }
  const int64_t tiles = Ranges::tiles(seg);
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(Ranges::scratch_bytes(tiles), device, stream, "segmented_reduce"));
  const auto parts = Ranges::partials<Acc>(scratch.data(), tiles);
  GPUPRIMS_CUDA_CHECK("segmented_reduce",
                      (Ranges::launch<S, Acc, Op>(x, seg, vector_ok, parts, stream, second_kernel_overlaps(device))));
  return check_launch("segmented_reduce", stream);
}

template <class T>
Status run_op(const TensorView& in, const Segments& seg, ReduceOp op, SegmentedReduceAlgorithm algorithm, int device,
              cudaStream_t stream) {
  using namespace reduce_detail;
  switch (op) {
    case ReduceOp::kSum: return run_segments<T, Sum>(in, seg, algorithm, device, stream);
    case ReduceOp::kProd: return run_segments<T, Prod>(in, seg, algorithm, device, stream);
    case ReduceOp::kMin: return run_segments<T, Min>(in, seg, algorithm, device, stream);
    case ReduceOp::kMax: break;
  }
  return run_segments<T, Max>(in, seg, algorithm, device, stream);
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

const std::vector<SegmentedReduceVariantInfo>& segmented_reduce_variants() {
  static const std::vector<SegmentedReduceVariantInfo> variants = {
      {SegmentedReduceAlgorithm::kRanges, "ranges",
       "merge-path warp tiles of 4096 work units (items + segment ends), long segments cut at tile boundaries "
       "and folded in tile order by a second kernel: balanced on any lengths", true},
      {SegmentedReduceAlgorithm::kBlocks, "blocks",
       "a block per segment reading it in rounds of 16 KiB, segments over 16 rounds listed and split into "
       "chunks across the GPU by a second kernel, the partials folded in chunk order. Unit-stride inputs "
       "(strided ones, and min / max of bool and 8- or 16-bit integers, run ranges)", true},
  };
  return variants;
}

Status parse_segmented_reduce_algorithm(const std::string& name, SegmentedReduceAlgorithm* out) {
  return parse_variant_name("segmented_reduce", segmented_reduce_variants(), name, out);
}

Status segmented_reduce(const TensorView& in, const TensorView& offsets, const TensorView& out, ReduceOp op,
                        SegmentedReduceAlgorithm algorithm, cudaStream_t stream) {
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
  GPUPRIMS_TRY(check_same_device("segmented_reduce", in, "x", offsets, "offsets"));
  GPUPRIMS_TRY(check_same_device("segmented_reduce", in, "x", out, "out"));
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
  return visit_dtype(in.dtype, [&](auto tag) {
    return run_op<typename decltype(tag)::type>(in, seg, op, algorithm, device, stream);
  });
}

}  // namespace gpuprims
