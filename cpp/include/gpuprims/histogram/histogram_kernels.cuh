#pragma once
// The counting kernels of every variant: one template, the variant chosen by `Counting`.
// (shared_privatized sends 8-bit inputs whose bins are a window of byte values to
// byte_window_kernel.cuh, and contiguous float32 inputs with the float32 shortcut on to
// float32_kernel.cuh.)
//
// Work split: a fixed grid (whole waves of resident blocks). Contiguous samples are read with
// 16-byte loads (16 uint8 or 4 float32 samples per load, kUnroll loads in flight per thread), each
// block owning one contiguous chunk of vectors; the < 16-byte unaligned head and the tail are read
// with scalar loads by the last block. Strided views take a grid-stride loop with full index
// arithmetic. Every loop is uniform across the block (a thread with nothing left visits an invalid
// sample), so the warp collectives of kWarpAggregated always see a converged warp.
//
// Counting:
//   kGlobal: one 64-bit atomicAdd per sample on the output (the baseline).
//   kPrivatized: a shared-memory histogram per block of 32-bit counters, replicated `copies` times
//     (a power of two <= 32) with the copies interleaved: counter (bin b, copy r) is word
//     b * copies + r and lane l uses copy l % copies. With 32 copies every lane owns one bank, so
//     a warp's 32 atomics never conflict, whatever the data (uniform or all in one bin). Flushed
//     once per block: one 64-bit global atomic per non-empty bin.
//   kWarpAggregated: lanes holding the same bin elect a leader (__match_any_sync), which adds the
//     group's size (__popc) once: to a per-warp shared-memory sub-histogram when they fit, else to
//     the output in global memory.
// `copies` == 0 sends kPrivatized/kWarpAggregated to global memory (too many bins for shared memory).
//
// 32-bit shared counters cannot overflow: the host sizes the grid so that no block sees 2^31 samples.
#include <cstdint>

#include "gpuprims/histogram/mappers.hpp"
#include "gpuprims/histogram/sample_layout.hpp"
#include "gpuprims/util/math.cuh"
#include "gpuprims/util/vec.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace histogram_detail {

constexpr int kHistogramThreads = 256;
constexpr int kByteTableSize = 256;
// At least three resident blocks per SM. Without a minimum ptxas capped some instantiations at 48
// registers and spilled; three blocks allow 80 (the bfloat16 warp-aggregated kernel needs 64+),
// while the uint8 and float32 kernels stay near 50 registers and keep four or more blocks.
constexpr int kHistogramMinBlocks = 3;

enum class Counting { kGlobal, kPrivatized, kWarpAggregated };

// 16-byte loads in flight per thread: two. Measured on the H200 (float32, 256 bins, 2^28 samples,
// shared_privatized): four loads (70 registers, three blocks per SM) took 0.4688 ms (device run 13),
// two took 0.4409 ms (run 7): the lost block per SM cost more than the extra loads in flight won.
// (The byte-window and float32 kernels size their own loads.)
template <Counting kCounting>
constexpr int kHistogramUnroll = 2;

template <class Mapper>
struct CountArgs {
  const typename Mapper::Sample* x;
  SampleLayout layout;
  Mapper map;
  unsigned long long* out;  // int64 counts (never negative, so the unsigned atomics are exact)
  int64_t out_stride;       // elements
  int32_t bins;
  int32_t copies;           // shared-memory histograms (see Counting); 0: global memory
  unsigned long long* dropped;  // bincount: samples outside [0, bins) are counted here; may be null
};

// for_each_sample (below) over the contiguous samples x[0 .. n). kPrefetch: the loads of the next
// step are issued before the current step is visited (software pipelining: 2 x kUnroll registers
// of samples), so that a long visit, or a branch in it, does not leave the thread with no load in
// flight; without it, ptxas may also sink the step's later loads below the first vector's work.
template <int kUnroll, bool kPrefetch = false, class T, class Visit>
__device__ __forceinline__ void for_each_contiguous_sample(const T* x, int64_t n, Visit& visit) {
  const int tid = threadIdx.x;
  constexpr int kLanes = Vec16<T>::kLanes;
  const auto addr = reinterpret_cast<uintptr_t>(x);
  const int64_t head = min_of<int64_t>(n, static_cast<int64_t>(((16 - (addr & 15)) & 15) / sizeof(T)));
  const int64_t num_vec = (n - head) / kLanes;
  const int64_t tail_begin = head + num_vec * kLanes;
  const int64_t per_block = ceil_div<int64_t>(num_vec, gridDim.x);
  const int64_t begin = int64_t(blockIdx.x) * per_block;
  const int64_t end = min_of<int64_t>(num_vec, begin + per_block);
  const T* body = x + head;
  constexpr int64_t kStep = int64_t(kHistogramThreads) * kUnroll;
  int64_t base = begin;
  if constexpr (kPrefetch) {
    if (base + kStep <= end) {  // block-uniform, as every condition below
      Vec16<T> v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load_vec16<T>(body + (base + u * kHistogramThreads + tid) * kLanes);
      for (; base + 2 * kStep <= end; base += kStep) {  // the next step is in the chunk too
        Vec16<T> next[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          next[u] = load_vec16<T>(body + (base + kStep + u * kHistogramThreads + tid) * kLanes);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) visit.vector(v[u], true);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = next[u];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) visit.vector(v[u], true);
      base += kStep;
    }
  } else {
    for (; base + kStep <= end; base += kStep) {  // every load of the step is in the chunk
      Vec16<T> v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load_vec16<T>(body + (base + u * kHistogramThreads + tid) * kLanes);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) visit.vector(v[u], true);
    }
  }
  if (base < end) {  // the chunk's last, partial step (a block-uniform condition)
    Vec16<T> v[kUnroll];
    bool ok[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t idx = base + u * kHistogramThreads + tid;
      ok[u] = idx < end;
      v[u] = ok[u] ? load_vec16<T>(body + idx * kLanes) : Vec16<T>{};
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) visit.vector(v[u], ok[u]);
  }
  if (blockIdx.x == gridDim.x - 1) {  // head and tail: fewer than kLanes samples each
    const bool head_ok = tid < head, tail_ok = tail_begin + tid < n;
    visit(head_ok ? x[tid] : T{}, head_ok);
    visit(tail_ok ? x[tail_begin + tid] : T{}, tail_ok);
  }
}

// Calls visit(sample, valid) for every sample this thread owns, in block-uniform loops: the
// 16-byte vectors of the contiguous body through visit.vector(vector, valid), single samples (the
// head, the tail, strided views) through visit(sample, valid).
template <int kUnroll, class T, class Visit>
__device__ __forceinline__ void for_each_sample(const T* x, const SampleLayout& layout, Visit& visit) {
  if (!layout.contiguous) {
    const int tid = threadIdx.x;
    const int64_t n = layout.n;
    const int64_t stride = int64_t(gridDim.x) * kHistogramThreads;
    for (int64_t base = int64_t(blockIdx.x) * kHistogramThreads; base < n; base += stride) {
      const int64_t i = base + tid;
      const bool ok = i < n;
      T v{};
      if (ok) {
        int64_t xo, wo;
        layout.offsets(i, &xo, &wo);
        v = x[xo];
      }
      visit(v, ok);
    }
    return;
  }
  for_each_contiguous_sample<kUnroll>(x, layout.n, visit);
}

template <Counting kCounting, class Mapper>
struct Counter {
  const CountArgs<Mapper>& a;
  uint32_t* hist;        // shared memory (null when a.copies == 0)
  const int32_t* table;  // ByteMapper's shared table (null otherwise)
  uint32_t lane_copy;    // kPrivatized: this lane's copy, lane % copies
  uint32_t dropped = 0;

  __device__ __forceinline__ int32_t bin(typename Mapper::Sample v) const {
    if constexpr (Mapper::kUsesTable) return a.map.window ? a.map.windowed(v) : table[v];
    else return a.map(v);
  }

  // Shared-memory indices are 32-bit (at most kSharedHistogramBytes / 4 words): no 64-bit
  // address arithmetic on the per-sample path.
  __device__ __forceinline__ void operator()(typename Mapper::Sample v, bool ok) {
    const int32_t b = ok ? bin(v) : -1;
    if constexpr (kCounting == Counting::kWarpAggregated) {
      dropped += ok && b < 0;
      const unsigned peers = __match_any_sync(0xffffffffu, b);
      if (b >= 0 && int(threadIdx.x % kWarpSize) == __ffs(peers) - 1) {
        const unsigned group = __popc(peers);
        if (hist != nullptr) {
          const uint32_t copy = a.copies == 1 ? 0u : threadIdx.x / kWarpSize;
          atomicAdd(hist + (copy * uint32_t(a.bins) + uint32_t(b)), group);
        } else {
          atomicAdd(a.out + int64_t(b) * a.out_stride, static_cast<unsigned long long>(group));
        }
      }
    } else {
      if (b < 0) {
        dropped += ok;
        return;
      }
      if (kCounting == Counting::kPrivatized && hist != nullptr) {
        atomicAdd(hist + (uint32_t(b) * uint32_t(a.copies) + lane_copy), 1u);
      } else {
        atomicAdd(a.out + int64_t(b) * a.out_stride, 1ull);
      }
    }
  }

  __device__ __forceinline__ void vector(const Vec16<typename Mapper::Sample>& v, bool ok) {
#pragma unroll
    for (int l = 0; l < Vec16<typename Mapper::Sample>::kLanes; ++l) (*this)(v.lane[l], ok);
  }
};

// Adds the block's dropped-sample counts (bincount's out-of-range values) to *dropped: one global
// atomic per warp with a non-zero count.
__device__ __forceinline__ void add_dropped(unsigned long long* dropped, uint32_t count) {
  if (dropped == nullptr) return;
  const uint32_t d = warp_reduce(count, [](uint32_t p, uint32_t q) { return p + q; });
  if (threadIdx.x % kWarpSize == 0 && d != 0) atomicAdd(dropped, static_cast<unsigned long long>(d));
}

// Adds a block's shared histograms to the int64 output: one global atomic per non-empty bin.
// Interleaved (lane-private) copies of bin b are the adjacent words b * copies + r; thread b
// visits them starting at its own lane (r = (c + lane) % copies), so the 32 threads of a warp,
// reading bins 32 apart, hit 32 different banks instead of one bank 32 times. Warp sub-histograms
// (not interleaved) are `bins` words apart and consecutive bins are already in different banks.
// The caller has synchronized the block after the last shared atomic.
__device__ __forceinline__ void flush_shared_histogram(const uint32_t* hist, int32_t bins, int32_t copies,
                                                       bool interleaved, unsigned long long* out,
                                                       int64_t out_stride) {
  const uint32_t lane = threadIdx.x % kWarpSize;
  for (int32_t b = threadIdx.x; b < bins; b += kHistogramThreads) {
    unsigned long long total = 0;
    for (int32_t c = 0; c < copies; ++c) {
      total += hist[interleaved ? uint32_t(b) * uint32_t(copies) + ((uint32_t(c) + lane) & uint32_t(copies - 1))
                                : uint32_t(c) * uint32_t(bins) + uint32_t(b)];
    }
    if (total != 0) atomicAdd(out + int64_t(b) * out_stride, total);
  }
}

template <Counting kCounting, class Mapper>
// __grid_constant__: the counters and the out-of-line exact path refer to the parameters in
// place (no copy of the parameter block to local memory).
__global__ void __launch_bounds__(kHistogramThreads, kHistogramMinBlocks) count_kernel(const __grid_constant__ CountArgs<Mapper> a) {
  extern __shared__ uint32_t shared_hist[];
  __shared__ int32_t table[Mapper::kUsesTable ? kByteTableSize : 1];
  const int tid = threadIdx.x;
  const int64_t words = int64_t(a.bins) * a.copies;
  if constexpr (Mapper::kUsesTable) {
    if (!a.map.window) {
      for (int v = tid; v < kByteTableSize; v += kHistogramThreads) table[v] = a.map.exact_bin(uint8_t(v));
    }
  }
  for (int64_t w = tid; w < words; w += kHistogramThreads) shared_hist[w] = 0;
  __syncthreads();

  const uint32_t lane_copy = a.copies > 0 ? (tid % kWarpSize) & uint32_t(a.copies - 1) : 0u;
  Counter<kCounting, Mapper> counter{a, words > 0 ? shared_hist : nullptr, table, lane_copy};
  for_each_sample<kHistogramUnroll<kCounting>>(a.x, a.layout, counter);
  add_dropped(a.dropped, counter.dropped);
  if (words == 0) return;
  __syncthreads();
  flush_shared_histogram(shared_hist, a.bins, a.copies, kCounting == Counting::kPrivatized, a.out, a.out_stride);
}

}  // namespace histogram_detail
}  // namespace gpuprims
