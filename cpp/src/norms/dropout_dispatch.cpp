// bias_dropout_add(): validation, layouts and the hand-off to the kernel or the CPU reference.
// Never synchronizes.
#include <cmath>
#include <cstdint>
#include <string>

#include "gpuprims/core/stream.hpp"
#include "gpuprims/norms.hpp"
#include "checks.hpp"
#include "dropout_launch.hpp"
#include "layout.hpp"

namespace gpuprims {
namespace {

constexpr const char* kOp = "bias_dropout_add";

bool c_contiguous_aligned(const TensorView& v) {
  int64_t expect = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.strides[d] != expect) return false;
    expect *= v.shape[d];
  }
  return reinterpret_cast<uintptr_t>(v.data) % 16 == 0;
}

}  // namespace

Status bias_dropout_add(const DropoutTensors& t, const DropoutOptions& options, cudaStream_t stream) {
  const TensorView& x = t.x;
  if (!is_floating(x.dtype)) {
    return type_error(arg_error_prefix(kOp, "x") + "expected float16, bfloat16, float32 or float64, got " +
                      dtype_name(x.dtype));
  }
  if (x.ndim < 1) return value_error(arg_error_prefix(kOp, "x") + "expected at least 1 dimension, got a 0-d array");
  GPUPRIMS_TRY(norms::check_like(kOp, x, "x", t.residual, "residual"));
  GPUPRIMS_TRY(norms::check_like(kOp, x, "x", t.out, "out"));
  if (t.out.readonly) {
    return type_error(arg_error_prefix(kOp, "out") + "expected a writable array, got a read-only one");
  }
  // out may be x or residual itself (each element is read before it is written), nothing else.
  GPUPRIMS_TRY(check_distinct_elements(kOp, t.out, "out"));
  GPUPRIMS_TRY(check_no_overlap(kOp, x, "x", t.out, "out", /*in_place_ok=*/true));
  GPUPRIMS_TRY(check_no_overlap(kOp, t.residual, "residual", t.out, "out", /*in_place_ok=*/true));
  const int64_t n = x.shape[x.ndim - 1];
  if (t.bias) GPUPRIMS_TRY(norms::check_affine(kOp, x, *t.bias, n, "bias"));
  if (!(options.p >= 0.0 && options.p <= 1.0)) {
    return value_error(arg_error_prefix(kOp, "p") + "expected a probability in [0, 1], got " +
                       std::to_string(options.p));
  }

  norms::DropoutLaunch l{};
  norms::DropoutParams& p = l.params;
  GPUPRIMS_TRY(norms::make_row_layout(x, t.out, x.ndim - 1, kOp, &p.x_layout));
  GPUPRIMS_TRY(norms::make_row_layout(t.residual, t.out, x.ndim - 1, kOp, &p.residual_layout));
  p.x = x.data;
  p.bias = t.bias ? t.bias->data : nullptr;
  p.bias_stride = t.bias ? t.bias->strides[0] : 1;
  p.residual = t.residual.data;
  p.out = t.out.data;
  p.total = x.numel();
  p.row_divmod = FastDivmod64(n > 0 ? n : 1);
  p.seed = options.seed;
  p.offset = options.offset;
  p.training = options.training && options.p > 0.0;
  p.drop_all = options.p >= 1.0;
  // floor(p * 2^32) < 2^32 for p < 1 (the largest double below 1 gives 2^32 - 1).
  p.threshold = p.drop_all ? 0u : static_cast<uint32_t>(std::floor(options.p * 4294967296.0));
  p.scale = p.drop_all ? 0.0 : 1.0 / (1.0 - options.p);
  l.dtype = x.dtype;
  l.stream = stream;
  if (x.device.kind == DeviceKind::kCPU) {
    l.device = -1;
    return norms::bias_dropout_add_host(l);
  }
  if (p.total == 0) return Status::ok();
  GPUPRIMS_TRY(check_context_alive(kOp));
  GPUPRIMS_TRY(check_element_aligned(kOp, x, "x"));
  GPUPRIMS_TRY(check_element_aligned(kOp, t.residual, "residual"));
  GPUPRIMS_TRY(check_element_aligned(kOp, t.out, "out"));
  const int64_t lanes = 16 / int64_t(dtype_size(x.dtype));
  p.vec_ok = n % lanes == 0 && c_contiguous_aligned(x) && c_contiguous_aligned(t.residual) &&
             c_contiguous_aligned(t.out) &&
             (t.bias == nullptr || ((t.bias->strides[0] == 1 || n <= 1) &&
                                    reinterpret_cast<uintptr_t>(t.bias->data) % 16 == 0));
  DeviceGuard guard;
  GPUPRIMS_TRY(guard.enter(x.device.id, kOp));
  l.device = x.device.id;
  return norms::bias_dropout_add_device(l);
}

}  // namespace gpuprims
