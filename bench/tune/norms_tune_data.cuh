#pragma once
// Data, copy ceiling, parameter blocks, comparison kernels and the four row-op problems shared by the norms harnesses
// (norms_forward_tune.cu, norms_backward_tune.cu, norms_cluster_tune.cu).
#include <cstdint>
#include <cstring>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/norms/norm_params.hpp"
#include "tune_common.cuh"

namespace gpuprims {

// The forward parameters of `rows` contiguous rows of `len` elements (x and y compact, vector
// path allowed); weight / bias null when absent.
inline norms::NormParams contiguous_rows_params(const void* x, void* y, const void* weight, const void* bias, int64_t rows,
                                         int64_t len, bool log, bool center) {
  norms::NormParams p;
  p.x = x;
  p.y = y;
  p.weight = weight;
  p.bias = bias;
  p.layout.num_rows = rows;
  p.layout.row_len = len;
  p.layout.outer_ndim = 1;
  p.layout.outer_sizes[0] = rows;
  p.layout.x_outer_strides[0] = len;
  p.layout.y_outer_strides[0] = len;
  p.eps = 1e-5;
  p.log = log;
  p.center = center;
  p.vec_ok = true;
  return p;
}

__device__ __host__ inline uint32_t hash32(uint64_t i, uint32_t seed) {
  uint32_t h = uint32_t(i) * 0x9E3779B1u ^ uint32_t(i >> 32) * 0x85EBCA77u ^ seed * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  return h ^ (h >> 15);
}

// Uniform in [lo, hi), never exactly 0.
template <class T>
__global__ void fill_random(T* p, int64_t n, uint32_t seed, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float u = lo + (hi - lo) * ((hash32(i, seed) >> 8) * (1.0f / 16777216.0f));
    if (u == 0.0f) u = 0.5f;
    p[i] = cast_value<T>(u);
  }
}

__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

// stats[0] = max |a - b|, stats[1] = max |b| (as floats' bit patterns: non-negative floats order
// like their bits), stats[2] / stats[3] = NaN count in a / b.
template <class T>
__global__ void compare_kernel(const T* a, const T* b, int64_t n, unsigned* stats) {
  unsigned diff = 0, mag = 0, a_nans = 0, b_nans = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float x = cast_value<float>(a[i]), y = cast_value<float>(b[i]);
    a_nans += x != x;
    b_nans += y != y;
    if (x == x && y == y) diff = max(diff, __float_as_uint(fabsf(x - y)));
    if (y == y) mag = max(mag, __float_as_uint(fabsf(y)));
  }
  atomicMax(&stats[0], diff);
  atomicMax(&stats[1], mag);
  atomicAdd(&stats[2], a_nans);
  atomicAdd(&stats[3], b_nans);
}

// compare_kernel over n device elements of a and b, read back: max |a - b|, max |a - b| / max |b|
// (max |a - b| when b is all zero) and the NaN counts of a and b. `stats`: 4 unsigned ints of device
// scratch.
struct BufferDiff {
  double abs, rel;
  unsigned a_nans, b_nans;
};
template <class T>
BufferDiff compare_buffers(const void* a, const void* b, int64_t n, unsigned* stats, int sms) {
  CHECK(cudaMemset(stats, 0, 4 * sizeof(unsigned)));
  compare_kernel<T><<<sms * 8, 256>>>(static_cast<const T*>(a), static_cast<const T*>(b), n, stats);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned s[4];
  CHECK(cudaMemcpy(s, stats, sizeof s, cudaMemcpyDeviceToHost));
  float diff, mag;
  memcpy(&diff, &s[0], 4);
  memcpy(&mag, &s[1], 4);
  return {diff, mag > 0 ? diff / mag : diff, s[2], s[3]};
}

template <class T>
const char* dtype_label() {
  return sizeof(T) == 2 ? "bfloat16" : "float32";
}

// The four row ops as harness problems built from `base` (a harness's Problem: op, kind, log,
// center, weight, bias): softmax, log_softmax, layer_norm (weight and bias), rms_norm (weight).
template <class P>
struct FourRowOps {
  P softmax, log_softmax, layer_norm, rms_norm;
};
template <class P>
FourRowOps<P> four_row_ops(const P& base) {
  FourRowOps<P> ops{base, base, base, base};
  ops.softmax.op = "softmax";
  ops.log_softmax.op = "log_softmax";
  ops.log_softmax.log = true;
  ops.layer_norm.op = "layer_norm";
  ops.layer_norm.kind = norms::RowKind::kNorm;
  ops.layer_norm.weight = ops.layer_norm.bias = true;
  ops.rms_norm.op = "rms_norm";
  ops.rms_norm.kind = norms::RowKind::kNorm;
  ops.rms_norm.center = false;
  ops.rms_norm.weight = true;
  return ops;
}

}  // namespace gpuprims
