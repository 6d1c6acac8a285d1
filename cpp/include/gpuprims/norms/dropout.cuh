#pragma once
// bias_dropout_add: out = residual + dropout(x + bias), element-wise with the dropout mask drawn by
// Philox4x32-10 from each element's index (philox.hpp), so it is reproducible from (seed, offset)
// and independent of the launch shape.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/norms/dropout_params.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/util/vec.cuh"

namespace gpuprims {
namespace norms {

// kVector: p.vec_ok (16-byte accesses). kPairRounding (vector path): fp16 / bf16 outputs rounded
// two at a time by the hardware (round_to_vec16: the values of cast_value, NaN payloads aside)
// instead of element by element in software, which measured 3-4 points of copy bandwidth faster
// for bfloat16 (bench/tune/dropout_tune.cu, docs/norms.md).
template <class T, bool kVector, bool kPairRounding>
__global__ void __launch_bounds__(256) bias_dropout_add_kernel(DropoutParams p) {
  using Acc = acc_t<T>;
  constexpr int kLanes = Vec16<T>::kLanes;
  constexpr int kStep = dropout_step(kLanes);
  const T* x = static_cast<const T*>(p.x);
  const T* bias = static_cast<const T*>(p.bias);
  const T* res = static_cast<const T*>(p.residual);
  T* out = static_cast<T*>(p.out);
  const int64_t n = p.x_layout.row_len;
  const int64_t steps = (p.total + kStep - 1) / kStep;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < steps; s += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i0 = s * kStep;
    if constexpr (kVector) {
      // The step's loads go out before its Philox draws, so the draws' integer work overlaps the
      // loads' latency instead of delaying their issue (bfloat16: draws first measured 78-80 % of
      // copy, the same loads without draws 90 %; bench/tune/dropout_tune.cu, docs/norms.md). The
      // read-only path (LDG through L1), not the streaming one past L1: 3-5 % faster for float32
      // and bfloat16 alike (H200, session 15 run 10), as was marking the stores streaming instead.
      constexpr int kVectors = kStep / kLanes;
      Vec16<T> xv[kVectors], rv[kVectors], bv[kVectors];
#pragma unroll
      for (int v = 0; v < kVectors; ++v) {
        const int64_t e = i0 + v * kLanes;
        if (e >= p.total) break;  // total is a multiple of kLanes: whole vectors only
        xv[v] = load_vec16<T>(x + e);
        rv[v] = load_vec16<T>(res + e);
        if (bias != nullptr) bv[v] = load_vec16<T, LoadPolicy::kReadOnly>(bias + (e - p.row_divmod.div(e) * n));
      }
      Acc f[kStep];
      dropout_factors<Acc, kStep>(p, i0, f);
#pragma unroll
      for (int v = 0; v < kVectors; ++v) {
        const int64_t e = i0 + v * kLanes;
        if (e >= p.total) break;
        Vec16<T> ov;
        Acc o[kLanes];
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          const Acc b = bias != nullptr ? cast_value<Acc>(bv[v].lane[l]) : Acc(0);
          o[l] = dropout_add(cast_value<Acc>(xv[v].lane[l]), b, cast_value<Acc>(rv[v].lane[l]), f[v * kLanes + l]);
          if constexpr (!kPairRounding) ov.lane[l] = cast_value<T>(o[l]);
        }
        if constexpr (kPairRounding) ov = round_to_vec16<T>(o);
        store_vec16(out + e, ov);
      }
    } else {
      Acc f[kStep];
      dropout_factors<Acc, kStep>(p, i0, f);
#pragma unroll 1
      for (int k = 0; k < kStep; ++k) {
        const int64_t e = i0 + k;
        if (e >= p.total) break;
        const int64_t row = p.row_divmod.div(e);
        const int64_t j = e - row * n;
        const Acc b = bias != nullptr ? cast_value<Acc>(bias[j * p.bias_stride]) : Acc(0);
        const Acc xv = cast_value<Acc>(x[p.x_layout.x_row_offset(row) + j * p.x_layout.x_elem_stride]);
        const Acc rv = cast_value<Acc>(res[p.residual_layout.x_row_offset(row) + j * p.residual_layout.x_elem_stride]);
        out[p.x_layout.y_row_offset(row) + j * p.x_layout.y_elem_stride] = cast_value<T>(dropout_add(xv, b, rv, f[k]));
      }
    }
  }
}

}  // namespace norms
}  // namespace gpuprims
