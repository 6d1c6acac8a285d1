// histogram() and bincount(): validation, layout, variant choice and the hand-off to a variant or
// the CPU reference. Only bincount's OutOfRange::kRaise and data_range() synchronize.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "gpuprims/core/checks.hpp"
#include "gpuprims/core/variant_lookup.hpp"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/histogram.hpp"
#include "gpuprims/reduce.hpp"
#include "launch.hpp"

namespace gpuprims {

using histogram_detail::HistogramLaunch;

const std::vector<HistogramVariantInfo>& histogram_variants() {
  static const std::vector<HistogramVariantInfo> variants = {
      {HistogramAlgorithm::kGlobalAtomics, "global_atomics",
       "one 64-bit global atomic per sample (16-byte loads): the baseline", true},
      {HistogramAlgorithm::kSharedPrivatized, "shared_privatized",
       "per-block shared-memory histogram of 32-bit counters, one copy per lane in its own bank (conflict-free "
       "for any data), 16-byte loads, merged once into global memory; 8-bit inputs binned by a window of byte values "
       "count four bytes per 32-bit word (PRMT extraction, one atomic per 16-byte run); global atomics beyond 12032 bins",
       true},
      {HistogramAlgorithm::kWarpAggregated, "warp_aggregated",
       "__match_any_sync leader election: one atomic per distinct bin per warp instruction, into per-warp "
       "shared sub-histograms (<= 1504 bins), one block histogram (<= 12032) or global memory", true},
  };
  return variants;
}

Status parse_histogram_algorithm(const std::string& name, HistogramAlgorithm* out) {
  return parse_variant_name("histogram", histogram_variants(), name, out);
}

namespace {

// histogram() takes every dtype; bincount() integers that fit int64 (numpy's safe cast refuses uint64).
bool is_sample_dtype(DType t, bool bincount) {
  return !bincount || (!is_floating(t) && t != DType::kUInt64);
}

// Checks x, weights and out, and fills the launch's sample layout and output fields.
Status prepare(const char* op, const TensorView& x, const TensorView* w, const TensorView& out, DType out_dtype,
               HistogramLaunch* l) {
  const bool bincount = std::strcmp(op, "bincount") == 0;
  if (!is_sample_dtype(x.dtype, bincount)) {
    return type_error(std::string(op) + ": argument 'x': expected " +
                      (bincount ? "bool, int8, int16, int32, int64, uint8, uint16 or uint32"
                                : "bool, int8..int64, uint8..uint64, float16, bfloat16, float32 or float64") +
                      ", got " + dtype_name(x.dtype));
  }
  if (w != nullptr) {
    bool same = w->ndim == x.ndim;
    for (int d = 0; same && d < x.ndim; ++d) same = w->shape[d] == x.shape[d];
    if (!same) {
      return value_error(std::string(op) + ": argument 'weights': expected the shape of x " + shape_string(x) +
                         ", got " + shape_string(*w));
    }
    GPUPRIMS_TRY(check_same_device(op, x, "x", *w, "weights"));
  }
  GPUPRIMS_TRY(check_same_device(op, x, "x", out, "out"));
  if (out.readonly) return type_error(std::string(op) + ": argument 'out': expected a writable array, got a read-only one");
  if (out.dtype != out_dtype) {
    return type_error(std::string(op) + ": argument 'out': expected dtype " + dtype_name(out_dtype) + ", got " +
                      dtype_name(out.dtype));
  }
  if (out.ndim != 1) {
    return value_error(std::string(op) + ": argument 'out': expected a 1-D array, got shape " + shape_string(out));
  }
  GPUPRIMS_TRY(check_distinct_elements(op, out, "out"));
  // The bins are cleared and counted into while x and weights are still being read.
  GPUPRIMS_TRY(check_no_overlap(op, x, "x", out, "out", /*in_place_ok=*/false));
  if (w != nullptr) GPUPRIMS_TRY(check_no_overlap(op, *w, "weights", out, "out", /*in_place_ok=*/false));
  if (out.shape[0] > INT32_MAX) {
    return value_error(std::string(op) + ": argument 'out': expected at most 2147483647 bins, got " +
                       std::to_string(out.shape[0]));
  }
  l->op = op;
  l->is_bincount = bincount;
  l->x_dtype = x.dtype;
  l->w_dtype = w ? w->dtype : DType::kFloat64;
  GPUPRIMS_TRY(histogram_detail::make_sample_layout(x, w, op, &l->layout, &l->x, &l->w));
  if (w == nullptr) l->w = nullptr;
  l->weighted = w != nullptr;
  l->bins = static_cast<int32_t>(out.shape[0]);
  l->out = out.data;
  l->out_stride = out.shape[0] > 1 ? out.strides[0] : 1;
  l->dropped = nullptr;
  if (x.device.kind == DeviceKind::kCPU) {
    l->device = -1;
    return Status::ok();
  }
  GPUPRIMS_TRY(check_context_alive(op));
  GPUPRIMS_TRY(check_element_aligned(op, x, "x"));
  if (w) GPUPRIMS_TRY(check_element_aligned(op, *w, "weights"));
  GPUPRIMS_TRY(check_element_aligned(op, out, "out"));
  l->device = x.device.id;
  return Status::ok();
}

// "auto": the lane-private shared histogram whenever the bins fit in shared memory (its layout
// makes it conflict-free for uniform and skewed data alike, so the data's skew need not be
// measured); beyond that, counts live in global memory, where warp aggregation turns a hot bin's
// 32 atomics per warp into one.
HistogramAlgorithm choose_algorithm(const HistogramLaunch& l) {
  return int64_t(l.bins) * 4 <= histogram_detail::kSharedHistogramBytes ? HistogramAlgorithm::kSharedPrivatized
                                                                       : HistogramAlgorithm::kWarpAggregated;
}

Status run_counts(const HistogramLaunch& l, HistogramAlgorithm algorithm) {
  using namespace histogram_detail;
  if (algorithm == HistogramAlgorithm::kAuto) algorithm = choose_algorithm(l);
  switch (algorithm) {
    case HistogramAlgorithm::kGlobalAtomics: return count_global_atomics(l);
    case HistogramAlgorithm::kWarpAggregated: return count_warp_aggregated(l);
    case HistogramAlgorithm::kSharedPrivatized:
    case HistogramAlgorithm::kAuto: break;
  }
  return count_shared_privatized(l);
}

// Zeroes the output and runs the counts (or weighted sums) on the launch's device.
Status run_on_device(HistogramLaunch l, DType out_dtype, HistogramAlgorithm algorithm, cudaStream_t stream) {
  using namespace histogram_detail;
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(l.device, l.op));
  GPUPRIMS_TRY(multiprocessor_count(l.device, &l.sm_count));
  l.stream = stream;
  if (!l.weighted || out_dtype == DType::kFloat64) {
    GPUPRIMS_TRY(zero_output(l.out, l.bins, l.out_stride, stream, l.op));
    return l.weighted ? count_weighted(l) : run_counts(l, algorithm);
  }
  // Sums in another dtype (the weights': float32, float16, an integer, bool): accumulate in float64
  // scratch, then convert once into the output (numpy's bincount(...).astype(weights.dtype)).
  StreamScratch sums;
  GPUPRIMS_TRY(sums.allocate(size_t(l.bins) * sizeof(double), l.device, stream, l.op));
  void* const out = l.out;
  const int64_t out_stride = l.out_stride;
  l.out = sums.data();
  l.out_stride = 1;
  GPUPRIMS_TRY(zero_output(l.out, l.bins, 1, stream, l.op));
  GPUPRIMS_TRY(count_weighted(l));
  return convert_sums(static_cast<const double*>(l.out), out, out_dtype, l.bins, out_stride, stream, l.op);
}

}  // namespace

Status histogram(const TensorView& x, const TensorView* weights, const TensorView& out, const HistogramBinSpec& spec,
                 HistogramAlgorithm algorithm, cudaStream_t stream) {
  HistogramLaunch l{};
  const DType out_dtype = weights ? weights->dtype : DType::kInt64;
  GPUPRIMS_TRY(prepare("histogram", x, weights, out, out_dtype, &l));
  if (out.shape[0] != spec.bins) {
    return value_error("histogram: argument 'out': expected shape (" + std::to_string(spec.bins) + ",), got " +
                       shape_string(out));
  }
  GPUPRIMS_TRY(histogram_detail::make_bin_params(x.dtype, spec, &l.params));
  if (l.device < 0) return histogram_detail::count_host(l);
  return run_on_device(l, out_dtype, algorithm, stream);
}

Status bincount(const TensorView& x, const TensorView* weights, const TensorView& out, OutOfRange out_of_range,
                HistogramAlgorithm algorithm, cudaStream_t stream) {
  HistogramLaunch l{};
  const DType out_dtype = weights ? DType::kFloat64 : DType::kInt64;
  GPUPRIMS_TRY(prepare("bincount", x, weights, out, out_dtype, &l));
  const bool count_dropped = out_of_range == OutOfRange::kRaise;
  unsigned long long dropped = 0;
  if (l.device < 0) {
    if (count_dropped) l.dropped = &dropped;
    GPUPRIMS_TRY(histogram_detail::count_host(l));
  } else {
    DeviceGuard guard;  // the counter's allocation, copy and synchronization use x's device
    GPUPRIMS_TRY(guard.enter(l.device, "bincount"));
    StreamScratch counter;
    if (count_dropped) {
      GPUPRIMS_TRY(counter.allocate(sizeof(unsigned long long), l.device, stream, "bincount"));
      l.dropped = static_cast<unsigned long long*>(counter.data());
      GPUPRIMS_CUDA_CHECK("bincount", cudaMemsetAsync(l.dropped, 0, sizeof(unsigned long long), stream));
    }
    GPUPRIMS_TRY(run_on_device(l, out_dtype, algorithm, stream));
    if (count_dropped) {
      // The one synchronization of out_of_range="raise": the caller asked to hear about dropped values.
      GPUPRIMS_CUDA_CHECK("bincount", cudaMemcpyAsync(&dropped, l.dropped, sizeof(dropped), cudaMemcpyDeviceToHost, stream));
      GPUPRIMS_CUDA_CHECK("bincount", cudaStreamSynchronize(stream));
    }
  }
  if (dropped != 0) {
    return value_error("bincount: argument 'x': " + std::to_string(dropped) + " values outside [0, " +
                       std::to_string(l.bins) + ") for an output of length " + std::to_string(l.bins) +
                       " (pass out_of_range='ignore' to drop them)");
  }
  return Status::ok();
}

namespace {

// The row pitch of a 1-D int64 array as cudaMemcpy2DAsync's rows of one element, or 0 when its
// stride is not positive (cudaMemcpy2DAsync takes unsigned pitches).
size_t count_pitch(const TensorView& v) {
  if (v.shape[0] <= 1) return sizeof(int64_t);
  return v.strides[0] > 0 ? size_t(v.strides[0]) * sizeof(int64_t) : 0;
}

}  // namespace

Status bincount_byte_values(const TensorView& x, const TensorView& out, HistogramAlgorithm algorithm,
                            cudaStream_t stream, int64_t* largest) {
  constexpr int64_t kValues = 256;
  if (x.dtype != DType::kUInt8 && x.dtype != DType::kBool) {
    return type_error(std::string("bincount: argument 'x': expected uint8 or bool, got ") + dtype_name(x.dtype));
  }
  if (x.device.kind != DeviceKind::kCUDA) {
    return value_error("bincount: argument 'x': expected an array on a CUDA device, got " + device_name(x.device));
  }
  if (out.ndim != 1 || out.shape[0] < kValues || count_pitch(out) == 0) {
    return value_error("bincount: argument 'out': expected a 1-D array of at least 256 elements with a positive "
                       "stride, got shape " + shape_string(out));
  }
  // Every value fits: nothing is out of range, so kIgnore drops nothing. bincount validates the rest.
  GPUPRIMS_TRY(bincount(x, nullptr, out, OutOfRange::kIgnore, algorithm, stream));
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(x.device.id, "bincount"));
  int64_t counts[kValues];
  GPUPRIMS_CUDA_CHECK("bincount", cudaMemcpy2DAsync(counts, sizeof(int64_t), out.data, count_pitch(out),
                                                    sizeof(int64_t), kValues, cudaMemcpyDeviceToHost, stream));
  GPUPRIMS_CUDA_CHECK("bincount", cudaStreamSynchronize(stream));  // the one synchronization: the output length
  *largest = -1;
  for (int64_t v = kValues - 1; v >= 0; --v) {
    if (counts[v] != 0) {
      *largest = v;
      break;
    }
  }
  return Status::ok();
}

Status copy_counts(const TensorView& src, const TensorView& dst, cudaStream_t stream) {
  if (src.dtype != DType::kInt64 || dst.dtype != DType::kInt64 || src.ndim != 1 || dst.ndim != 1 ||
      dst.shape[0] > src.shape[0] || src.device != dst.device || src.device.kind != DeviceKind::kCUDA ||
      count_pitch(src) == 0 || count_pitch(dst) == 0) {
    return value_error("bincount: copy_counts: expected 1-D int64 arrays with positive strides on one CUDA device, "
                       "len(dst) <= len(src), got " +
                       shape_string(src) + " and " + shape_string(dst));
  }
  if (dst.shape[0] == 0) return Status::ok();
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(src.device.id, "bincount"));
  GPUPRIMS_CUDA_CHECK("bincount", cudaMemcpy2DAsync(dst.data, count_pitch(dst), src.data, count_pitch(src),
                                                    sizeof(int64_t), size_t(dst.shape[0]), cudaMemcpyDeviceToDevice,
                                                    stream));
  return Status::ok();
}

Status data_range(const TensorView& x, const char* op, cudaStream_t stream, DataRange* range) {
  alignas(8) unsigned char host[16] = {};
  TensorView lo{}, hi{};
  lo.dtype = hi.dtype = x.dtype;
  lo.device = hi.device = x.device;
  lo.ndim = hi.ndim = 0;
  const bool on_gpu = x.device.kind == DeviceKind::kCUDA;
  DeviceGuard guard;  // declared before the scratch: the scratch is freed on x's device
  StreamScratch scratch;
  if (on_gpu) {
    GPUPRIMS_TRY(check_context_alive(op));
    GPUPRIMS_TRY(guard.enter(x.device.id, op));
    GPUPRIMS_TRY(scratch.allocate(16, x.device.id, stream, op));
    lo.data = scratch.data();
  } else {
    lo.data = host;
  }
  hi.data = static_cast<char*>(lo.data) + 8;
  ReduceOptions options;
  options.op = ReduceOp::kMin;
  GPUPRIMS_TRY(reduce(x, lo, options, stream));
  options.op = ReduceOp::kMax;
  GPUPRIMS_TRY(reduce(x, hi, options, stream));
  if (on_gpu) {
    GPUPRIMS_CUDA_CHECK(op, cudaMemcpyAsync(host, lo.data, 16, cudaMemcpyDeviceToHost, stream));
    GPUPRIMS_CUDA_CHECK(op, cudaStreamSynchronize(stream));
  }
  return visit_dtype(x.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T a, b;
    std::memcpy(&a, host, sizeof(T));
    std::memcpy(&b, host + 8, sizeof(T));
    if constexpr (std::is_same<T, uint64_t>::value) {
      range->is_uint64 = true;
      range->lo_uint64 = a;
      range->hi_uint64 = b;
    } else if constexpr (std::is_integral<T>::value) {
      range->is_integer = true;
      range->lo_int = static_cast<int64_t>(a);
      range->hi_int = static_cast<int64_t>(b);
    } else {
      range->is_integer = false;
      range->lo = cast_value<double>(a);
      range->hi = cast_value<double>(b);
    }
    return Status::ok();
  });
}

}  // namespace gpuprims
