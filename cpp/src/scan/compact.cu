// compact() / nonzero(): validation, the CPU reference and the single-pass GPU compaction.
#include <cstdint>
#include <string>
#include <type_traits>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/scan.hpp"
#include "gpuprims/scan/compact_kernel.cuh"
#include "runners.cuh"

namespace gpuprims {
namespace {

using scan_detail::mask_set;
using scan_detail::Strided1D;

Status check_1d(const TensorView& v, const char* arg) {
  if (v.ndim != 1) {
    return value_error(std::string("compact: argument '") + arg + "': expected a 1-D array, got shape " +
                       shape_string(v));
  }
  return Status::ok();
}

template <class Bits, class MaskBits>
void compact_host(const CompactArgs& a, const Strided1D& s, MaskBits keep) {
  const auto* mask = static_cast<const MaskBits*>(a.mask->data);
  int64_t count = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    if (!mask_set(mask[i * s.mask_step], keep)) continue;
    if (count < s.out_len) {
      if constexpr (std::is_void<Bits>::value) {
        static_cast<int64_t*>(a.out->data)[count * s.out_step] = i;
      } else {
        static_cast<Bits*>(a.out->data)[count * s.out_step] = static_cast<const Bits*>(a.values->data)[i * s.value_step];
      }
    }
    ++count;
  }
  *static_cast<int64_t*>(a.count->data) = count;
}

template <class Bits, class MaskBits>
Status compact_device(const CompactArgs& a, const Strided1D& s, MaskBits keep, int device, cudaStream_t stream) {
  using namespace scan_detail;
  if (s.n == 0) {
    GPUPRIMS_CUDA_CHECK("compact", cudaMemsetAsync(a.count->data, 0, sizeof(int64_t), stream));
    return Status::ok();
  }
  const int64_t tiles = ceil_div(s.n, compact_tile<Bits>());
  CounterAndStatus<CountStatus> scratch;
  GPUPRIMS_TRY(scratch.allocate(tiles, device, stream, "compact"));
  const auto* mask = static_cast<const MaskBits*>(a.mask->data);
  const bool mask_vector_ok = s.mask_step == 1 && reinterpret_cast<uintptr_t>(mask) % 16 == 0;
  const Bits* values = a.values ? static_cast<const Bits*>(a.values->data) : nullptr;
  const bool values_vector_ok = values && s.value_step == 1 && reinterpret_cast<uintptr_t>(values) % 16 == 0;
  return for_each_grid(tiles, "compact", stream, [&](int64_t, unsigned blocks) {
    compact_kernel<Bits, MaskBits><<<blocks, kCompactThreads, 0, stream>>>(
        values, mask, keep, a.out->data, static_cast<int64_t*>(a.count->data), s, tiles, scratch.counter, scratch.status,
        mask_vector_ok, values_vector_ok);
  });
}

template <class Bits, class MaskBits>
Status run_compact(const CompactArgs& a, const Strided1D& s, MaskBits keep, cudaStream_t stream) {
  if (a.mask->device.kind == DeviceKind::kCPU) {
    compact_host<Bits>(a, s, keep);
    return Status::ok();
  }
  GPUPRIMS_TRY(check_context_alive("compact"));
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(a.mask->device.id, "compact"));
  return compact_device<Bits>(a, s, keep, a.mask->device.id, stream);
}

// The unsigned type as wide as T: compaction copies values, and reads masks, as raw bits.
template <class T>
using raw_bits_t = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// nonzero() reads a mask of any dtype as raw bits of its width: calls f(keep) with the bits that make
// an element nonzero (mask_set: all of them, or all but a float's sign bit, the top one).
template <class F>
Status visit_mask_bits(DType dtype, F&& f) {
  return visit_dtype(dtype, [&](auto tag) {
    using Bits = raw_bits_t<typename decltype(tag)::type>;
    const Bits all = Bits(~Bits(0));
    return f(is_floating(dtype) ? Bits(all >> 1) : all);
  });
}

}  // namespace

Status compact(const CompactArgs& a, cudaStream_t stream) {
  const TensorView& mask = *a.mask;
  GPUPRIMS_TRY(check_1d(mask, "mask"));
  GPUPRIMS_TRY(check_1d(*a.out, "out"));
  if (a.values && mask.dtype != DType::kBool) {  // nonzero() takes a mask of any dtype
    return type_error(std::string("compact: argument 'mask': expected dtype bool, got ") + dtype_name(mask.dtype));
  }
  if (a.values) GPUPRIMS_TRY(check_same_device("compact", mask, "mask", *a.values, "x"));
  GPUPRIMS_TRY(check_same_device("compact", mask, "mask", *a.out, "out"));
  GPUPRIMS_TRY(check_same_device("compact", mask, "mask", *a.count, "count"));
  if (a.out->readonly || a.count->readonly) return type_error("compact: argument 'out': expected a writable array");
  if (a.count->dtype != DType::kInt64 || a.count->numel() != 1) {
    return type_error("compact: the count must be one int64 element");
  }
  // out is written while mask and x are still being read (count is gpuprims' own fresh buffer).
  GPUPRIMS_TRY(check_distinct_elements("compact", *a.out, "out"));
  GPUPRIMS_TRY(check_no_overlap("compact", mask, "mask", *a.out, "out", /*in_place_ok=*/false));
  if (a.values) GPUPRIMS_TRY(check_no_overlap("compact", *a.values, "x", *a.out, "out", /*in_place_ok=*/false));
  Strided1D s{mask.shape[0], mask.strides[0], 0, a.out->strides[0], a.out->shape[0]};
  if (a.values) {
    GPUPRIMS_TRY(check_1d(*a.values, "x"));
    if (a.values->shape[0] != s.n) {
      return value_error("compact: arguments 'x' and 'mask' must have the same length, got " +
                         std::to_string(a.values->shape[0]) + " and " + std::to_string(s.n));
    }
    if (a.out->dtype != a.values->dtype) {
      return type_error(std::string("compact: argument 'out': expected dtype ") + dtype_name(a.values->dtype) +
                        ", got " + dtype_name(a.out->dtype));
    }
    s.value_step = a.values->strides[0];
    const uint8_t keep = 0xff;  // a bool mask
    return visit_dtype(a.values->dtype, [&](auto tag) {
      return run_compact<raw_bits_t<typename decltype(tag)::type>>(a, s, keep, stream);
    });
  }
  if (a.out->dtype != DType::kInt64) {
    return type_error(std::string("nonzero: argument 'out': expected dtype int64, got ") + dtype_name(a.out->dtype));
  }
  return visit_mask_bits(mask.dtype, [&](auto keep) { return run_compact<void>(a, s, keep, stream); });
}

Status count_true(const TensorView& mask, int64_t* count, cudaStream_t stream) {
  GPUPRIMS_TRY(check_1d(mask, "mask"));
  TensorView total;
  total.dtype = DType::kInt64;
  total.device = mask.device;
  total.ndim = 0;
  // A bool mask is counted by the reduce family's sum. Any other dtype (nonzero()) by the compaction
  // pass itself with nowhere to write (out_len 0), which still counts every tile.
  const auto count_into_total = [&]() -> Status {
    if (mask.dtype == DType::kBool) return reduce(mask, total, ReduceOptions{}, stream);  // sum of everything
    const CompactArgs args{nullptr, &mask, &total, &total};
    const Strided1D s{mask.shape[0], mask.strides[0], 0, 0, 0};
    return visit_mask_bits(mask.dtype, [&](auto keep) { return run_compact<void>(args, s, keep, stream); });
  };
  if (mask.device.kind == DeviceKind::kCPU) {
    total.data = count;
    return count_into_total();
  }
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(mask.device.id, "compact"));
  StreamScratch scratch;
  GPUPRIMS_TRY(scratch.allocate(sizeof(int64_t), mask.device.id, stream, "compact"));
  total.data = scratch.data();
  GPUPRIMS_TRY(count_into_total());
  GPUPRIMS_CUDA_CHECK("compact", cudaMemcpyAsync(count, total.data, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GPUPRIMS_CUDA_CHECK("compact", cudaStreamSynchronize(stream));
  return Status::ok();
}

}  // namespace gpuprims
