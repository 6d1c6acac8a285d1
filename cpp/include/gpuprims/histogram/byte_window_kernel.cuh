#pragma once
// shared_privatized for 8-bit inputs whose bins are a window of byte values (ByteMapper::window:
// every bincount, and histograms with integer-aligned bins such as uint8 with 256 bins over
// (0, 256)), contiguous, with 32 lane-private copies (at most 376 bins).
//
// The generic kernel spends 17 PTX instructions per byte on this path (extract, "table or window"
// branch, window test, bin, "is it counted" branch, general address arithmetic, the atomic); at 16
// bytes per load that is issue-bound well below HBM bandwidth. Here the work per byte is cut to what the
// counting needs:
//   * a 16-byte vector is four 32-bit words; int8's bias (byte ^ 0x80) is one XOR per word;
//   * each byte is pulled out zero-extended with one PRMT (__byte_perm), no shift-and-mask;
//   * when the window covers all 256 byte values (kFullCover: uint8 over (0, 256), bincount of
//     uint8 into >= 256 bins) there is no range test at all, and the counter address is one
//     shift-add from the byte: counter (bin base + t, lane) is lane_hist[t * 32];
//   * otherwise one subtract and one unsigned compare select the counted bytes (values below the
//     window wrap around to large numbers) and count the dropped ones for bincount;
//   * a vector of 16 equal bytes (constant runs, one hot bin) is counted with one atomic of 16:
//     the test is one PRMT and four compares per 16 bytes, and a warp whose lanes all see such
//     runs skips the sixteen atomics.
// So a byte costs 6 PTX instructions (PRMT, two shift/add pairs for the address that ptxas can fold
// into one shift-add, ATOMS) plus ~1 per byte of per-vector work and loop control when the window
// covers every value; see docs/histogram.md for the PTX counts.
#include <cstdint>
#include <cstring>

#include "gpuprims/histogram/histogram_kernels.cuh"

namespace gpuprims {
namespace histogram_detail {

// Two 16-byte loads in flight per thread (32 bytes to count between loads, ~100 instructions) and
// at least five resident blocks per SM (40 warps: 40 KiB of loads in flight per SM; 5 x 33 KiB of
// shared memory fit in 228 KiB). ptxas fits this in 48 registers with no spill; four loads per
// thread needed 72 registers (three blocks per SM) and spilled under any tighter bound.
constexpr int kByteWindowUnroll = 2;
constexpr int kByteWindowMinBlocks = 5;

template <bool kFullCover>
struct ByteWindowCounter {
  uint32_t* lane_hist;  // &hist[window_base * 32 + lane]: counter (window_base + t, lane) is lane_hist[t * 32]
  uint32_t flip;        // the window's XOR (int8 bias) in all four bytes of a word
  uint32_t lo, span;    // counted: lo <= byte ^ xor <= lo + span (kFullCover: lo = 0, span = 255)
  uint32_t dropped = 0;

  // u = byte ^ xor, in [0, 256).
  __device__ __forceinline__ void add(uint32_t u, uint32_t count) {
    if constexpr (kFullCover) {
      atomicAdd(lane_hist + u * kWarpSize, count);
    } else {
      const uint32_t t = u - lo;  // wraps for u < lo
      if (t <= span) atomicAdd(lane_hist + t * kWarpSize, count);
      else dropped += count;
    }
  }

  __device__ __forceinline__ void operator()(uint8_t v, bool ok) {
    if (ok) add((uint32_t(v) ^ flip) & 0xffu, 1u);
  }

  __device__ __forceinline__ void vector(const Vec16<uint8_t>& v, bool ok) {
    if (!ok) return;
    uint32_t w[4];
    memcpy(w, &v, sizeof(w));
    const uint32_t splat = __byte_perm(w[0], 0u, 0x0000u);  // byte 0 in all four bytes
    if (w[0] == splat && w[1] == splat && w[2] == splat && w[3] == splat) {
      add((w[0] ^ flip) & 0xffu, 16u);
      return;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t x = w[k] ^ flip;
      // Selector 0x444j: result byte 0 = byte j of x, bytes 1..3 = byte 0 of the zero operand.
#pragma unroll
      for (uint32_t j = 0; j < 4; ++j) add(__byte_perm(x, 0u, 0x4440u | j), 1u);
    }
  }
};

template <bool kFullCover>
__global__ void __launch_bounds__(kHistogramThreads, kByteWindowMinBlocks)
    count_byte_window_kernel(const __grid_constant__ CountArgs<ByteMapper> a) {
  extern __shared__ uint32_t shared_hist[];
  const uint32_t words = uint32_t(a.bins) * kWarpSize;  // a.copies == 32 (the host checks)
  for (uint32_t w = threadIdx.x; w < words; w += kHistogramThreads) shared_hist[w] = 0;
  __syncthreads();

  const uint32_t lane = threadIdx.x % kWarpSize;
  ByteWindowCounter<kFullCover> counter{shared_hist + (uint32_t(a.map.window_base) * kWarpSize + lane),
                                        a.map.window_xor * 0x01010101u, a.map.window_lo, a.map.window_span};
  for_each_contiguous_sample<kByteWindowUnroll>(a.x, a.layout.n, counter);  // the host checks contiguity
  add_dropped(a.dropped, counter.dropped);
  __syncthreads();
  flush_shared_histogram(shared_hist, a.bins, kWarpSize, /*interleaved=*/true, a.out, a.out_stride);
}

}  // namespace histogram_detail
}  // namespace gpuprims
