#pragma once
// shared_privatized for float32 histograms that the float32 shortcut decides (BinParams::fast),
// contiguous, with lane-private shared histograms (any power-of-two number of copies, so up to
// 12032 bins).
//
// The generic kernel bins a float32 sample through bin_of_sample: the same arithmetic as here, but
// every test is a branch (range, "shortcut on?", fa < bins, frac > margin, frac < 1 - margin,
// "counted?", "shared or global?") and each branch region costs a BSSY/BSYNC pair in the SASS: about
// 30 issue slots and 8 branches per sample (nvcc 13.0, sm_90a); it runs at 0.62x CUB. Here the
// common path is straight-line code, 14 SASS instructions per sample and no branch (measured, this
// alone did not pay: the exact path and the loads in flight decided, see Undecided, kPrefetch and
// kLaunchFloat32Kernel below):
//
//   in      = lo <= x <= hi                     (false for NaN)            2 FSETP
//   fa      = (x - lo) * scale                  (numpy's E subtraction)    FADD, FMUL
//   r       = fa + 2^23, rounded down           = 2^23 + floor(fa)         FADD.RM
//   offset  = fa - (r - (2^23 - 1/2))           = fa - (floor(fa) + 1/2)   2 FADD (both exact)
//   counted = in and fa < bins and |offset| < half_window                  2 FSETP, PLOP3
//   counter[((counted ? bits(r) : bits(2^23)) - bits(2^23)) * copies + lane] += counted
//                                                                          2 SEL, IMAD, ATOMS
// A sample that is not counted adds 0 to its lane's counter of bin 0 (Uncounted::kAddZero), or 1 to
// a discard row past the last bin (kDiscardRow: one SEL less); either is cheaper than the branch
// region nvcc wraps around a conditional atomic, and free for data in range.
//
// |offset| < half_window = 1/2 - fast_margin says fa is farther than fast_margin from an integer:
// floor(fa) is then numpy's bin (bin_math.hpp, "the float32 shortcut"; bin_params.cpp derives the
// bound). The other in-range samples (about 2 * fast_margin of them: 0.07 % for 256 bins over
// [0, 1)) are flagged, and a vector's flagged samples are binned by the exact path (Undecided)
// behind one branch per 16-byte vector, which a warp takes for ~9 % of its vectors.
//
// Exactness of the two subtractions: r - (2^23 - 1/2) = floor(fa) + 1/2 needs 23 significant bits
// (floor(fa) < 2^22). fa - (floor(fa) + 1/2) is exact by Sterbenz's lemma for fa >= 1/4; below, it
// rounds, but rounding is monotone and half_window is a float, so |RN(offset)| < half_window still
// implies |offset| < half_window. half_window is 1/2 - fast_margin_f rounded down.
#include <cstdint>

#include "gpuprims/histogram/histogram_kernels.cuh"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace histogram_detail {

// Where a sample that is not counted (out of range, NaN, undecided) goes in the straight-line path.
enum class Uncounted {
  kAddZero,     // adds 0 to its lane's counter of bin 0: ATOMS.ADD with a register increment (0 or 1)
  kDiscardRow,  // adds 1 to its lane's counter of a discard bin after the last (never flushed):
                // ATOMS.POPC.INC with the constant 1, one SEL less per sample, one row more of shared memory
};

// How an undecided sample (in range, fa within fast_margin of an integer) is binned.
enum class Undecided {
  kCall,         // bin_of, out of line: numpy's float64 arithmetic; it reads BinParams through a
                 // generic pointer (LD from the parameter buffer, an L2 round trip when the streaming
                 // loads have evicted it from L1)
  kEdgeCompare,  // inline, no memory access: k = round(fa), bin = min(k - (x < edges[k]), bins - 1),
                 // with edges[k] computed as numpy's linspace does (bin_edge)
};

// The float32 kernel's tuning: 16-byte loads per thread and step, resident-block floor, where
// uncounted samples go, how undecided samples are binned, software prefetch of the next step. The
// library launches LaunchedFloat32Config; bench/tune/histogram_float_tune.cu times the alternatives.
template <int kUnrollV, int kMinBlocksV, Uncounted kUncountedV, Undecided kUndecidedV, bool kPrefetchV>
struct Float32KernelConfig {
  static constexpr int kUnroll = kUnrollV;
  static constexpr int kMinBlocks = kMinBlocksV;
  static constexpr Uncounted kUncounted = kUncountedV;
  static constexpr Undecided kUndecided = kUndecidedV;
  static constexpr bool kPrefetch = kPrefetchV;
  // Dynamic shared memory for `bins` bins in `copies` lane-private copies. shared_copies keeps
  // bins * copies * 4 <= kSharedHistogramBytes (47 KiB), so a discard row (<= 128 bytes) still fits
  // in the default 48 KiB.
  static size_t shared_bytes(int32_t bins, int32_t copies) {
    return (size_t(bins) + (kUncounted == Uncounted::kDiscardRow ? 1 : 0)) * size_t(copies) * sizeof(uint32_t);
  }
};
// What shared_privatized (and so "auto") launches for contiguous float32 input with the shortcut on:
// this kernel (true) or the generic count_kernel (false), and in which configuration. Measured
// (H200, session 9 device run 9 of bench/tune/histogram_float_tune.cu: 2^28 samples, 256 bins over
// [0, 1), uniform data): this configuration 0.2728 ms, CUB 0.2769, the generic kernel 0.4364; the
// same with the out-of-line exact path 0.5502, without prefetch 0.3093; a floor of four blocks
// 0.2727 (five resident either way, 44 registers).
constexpr bool kLaunchFloat32Kernel = true;
using LaunchedFloat32Config = Float32KernelConfig<2, 5, Uncounted::kDiscardRow, Undecided::kEdgeCompare, true>;

template <Uncounted kUncounted, Undecided kUndecided>
struct Float32Counter {
  const BinParams& p;  // the kernel's __grid_constant__ parameters: the exact path reads them in place
  // Shared-memory byte addresses: counter (bin b, this lane's copy) is at lane_base + b * stride;
  // r_base = lane_base - bits(2^23) * stride, so that bits(r) * stride + r_base is the counter of
  // bin floor(fa) (unsigned wrap-around) with one IMAD. uncounted_bits: the bits of the float whose
  // "r" addresses the counter that uncounted samples hit (2^23: bin 0; 2^23 + bins: the discard row).
  uint32_t lane_base, stride, r_base, uncounted_bits;
  float lo, hi, scale, bins_f, half_window;

  // Whether x is in range but its bin not decided by the shortcut; kCount: also count x if decided.
  template <bool kCount>
  __device__ __forceinline__ bool undecided(float x) const {
    const float fa = __fmul_rn(__fadd_rn(x, -lo), scale);
    const float r = __fadd_rd(fa, 8388608.0f);                       // 2^23 + floor(fa) when 0 <= fa < 2^22
    const float offset = __fadd_rn(fa, -__fadd_rn(r, -8388607.5f));  // fa - (floor(fa) + 1/2)
    const bool in = x >= lo && x <= hi;                              // false for NaN
    const bool decided = fa < bins_f && fabsf(offset) < half_window;
    if constexpr (kCount) {
      // An uncounted sample's r may be anything (negative, NaN, beyond the bins): it is replaced.
      const bool counted = in && decided;
      const uint32_t address = (counted ? __float_as_uint(r) : uncounted_bits) * stride + r_base;
      ptx::red_shared_add(address, kUncounted == Uncounted::kAddZero ? uint32_t(counted) : 1u);
    }
    return in && !decided;
  }

  // The exact path for an undecided sample (in range).
  __device__ __forceinline__ void count_exact(float x) const {
    int32_t b;
    if constexpr (kUndecided == Undecided::kCall) {
      b = bin_of<EdgeKind::kF32>(p, static_cast<double>(x));
    } else {
      // fa is within fast_margin (< 1/4) of x's exact position among the edges, so with
      // k = round(fa) x lies in bin k - 1 or k: below edges[k] or not. k = 0 is never lowered
      // (x >= lo = edges[0]); k = bins (x at or near hi) is lowered to bins - 1 either way, hi
      // closing the last bin. numpy's own correction lands on the same bin (bin_math.hpp).
      const float fa = __fmul_rn(__fadd_rn(x, -lo), scale);
      const float r = __fadd_rd(fa, 8388608.0f);
      const float offset = __fadd_rn(fa, -__fadd_rn(r, -8388607.5f));
      const int32_t k = min(int32_t(__float_as_uint(r) - 0x4B000000u) + int32_t(offset >= 0.0f), p.bins);
      b = min(k - int32_t(static_cast<double>(x) < bin_edge<EdgeKind::kF32>(p, k)), p.bins - 1);
    }
    if (b >= 0) ptx::red_shared_add(uint32_t(b) * stride + lane_base, 1u);
  }

  __device__ __forceinline__ void operator()(float x, bool ok) const {
    if (ok && undecided<true>(x)) count_exact(x);
  }

  // The four samples straight-line, then one branch for the vector: a warp takes it when one of its
  // 128 samples is undecided (~9 % of vectors for 256 bins over [0, 1)). The loop re-tests the four
  // samples (cheaper than carrying a mask) and calls the exact path from one call site.
  __device__ __forceinline__ void vector(const Vec16<float>& v, bool ok) const {
    if (!ok) return;
    bool any_undecided = false;
#pragma unroll
    for (int l = 0; l < 4; ++l) any_undecided |= undecided<true>(v.lane[l]);
    if (!any_undecided) return;
#pragma unroll 1
    for (int l = 0; l < 4; ++l) {
      float x = l == 0 ? v.lane[0] : l == 1 ? v.lane[1] : l == 2 ? v.lane[2] : v.lane[3];
      // Opaque to the optimizer: otherwise it reuses the first pass's fa and offset here and keeps
      // eight more registers live across the call (ptxas then spills in some configurations).
      asm volatile("" : "+f"(x));
      if (undecided<false>(x)) count_exact(x);
    }
  }
};

template <class Config>
__global__ void __launch_bounds__(kHistogramThreads, Config::kMinBlocks)
    count_float32_kernel(const __grid_constant__ CountArgs<EdgeMapper<float>> a) {
  extern __shared__ uint32_t shared_hist[];
  const uint32_t copies = uint32_t(a.copies);  // a power of two in [1, 32] (the host checks)
  const uint32_t rows = uint32_t(a.bins) + (Config::kUncounted == Uncounted::kDiscardRow ? 1u : 0u);
  for (uint32_t w = threadIdx.x; w < rows * copies; w += kHistogramThreads) shared_hist[w] = 0;
  __syncthreads();

  const BinParams& p = a.map.params;
  const uint32_t lane_base = ptx::shared_address(shared_hist + ((threadIdx.x % kWarpSize) & (copies - 1)));
  const uint32_t stride = copies * uint32_t(sizeof(uint32_t));
  const uint32_t uncounted_bits =
      0x4B000000u + (Config::kUncounted == Uncounted::kDiscardRow ? uint32_t(a.bins) : 0u);
  const Float32Counter<Config::kUncounted, Config::kUndecided> counter{p,       lane_base, stride,    lane_base - 0x4B000000u * stride,
                                                   uncounted_bits,
                                                   p.lo_f,  p.hi_f,    p.scale_f, p.bins_f,
                                                   __fsub_rd(0.5f, p.fast_margin_f)};
  for_each_contiguous_sample<Config::kUnroll, Config::kPrefetch>(a.x, a.layout.n, counter);  // the host checks contiguity
  __syncthreads();
  flush_shared_histogram(shared_hist, a.bins, a.copies, /*interleaved=*/true, a.out, a.out_stride);
}

}  // namespace histogram_detail
}  // namespace gpuprims
