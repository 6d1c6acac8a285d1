#pragma once
// The pieces both radix-select kernels share: choosing the histogram bin that holds the k-th
// largest key, and claiming output slots a warp at a time.
#include <cstdint>

#include "gpuprims/block/block_scan.cuh"
#include "gpuprims/topk/radix_keys.hpp"

namespace gpuprims {
namespace topk_detail {

// The bin of one digit's histogram that holds the k-th largest remaining key: the keys in bins
// above it (`above`) are fewer than k and `above + count` (count = that bin's keys) at least k.
struct Choice {
  int bin;
  unsigned long long above;
  unsigned long long count;
};

// Each thread sums a run of bins counted from the top, a block exclusive scan turns the runs into
// "keys above my run", and the one thread whose run crosses k walks it bin by bin. Needs
// 1 <= k <= the histogram's total, so exactly one thread crosses. Every thread returns the same
// Choice (broadcast through `out`). `hist` may be shared or global memory.
template <int kThreads, class Count>
__device__ __forceinline__ Choice choose_bin(const Count* hist, int bins, unsigned long long k,
                                             typename BlockScan<unsigned long long, kThreads>::TempStorage& temp,
                                             Choice& out) {
  const int per_thread = (bins + kThreads - 1) / kThreads;
  const int top = bins - int(threadIdx.x) * per_thread;  // this thread's run: bins [top - per_thread, top)
  unsigned long long run = 0;
  for (int j = 1; j <= per_thread; ++j) {
    if (top - j >= 0) run += hist[top - j];
  }
  const unsigned long long before = BlockScan<unsigned long long, kThreads>::exclusive_sum(run, temp);
  if (before < k && k <= before + run) {
    unsigned long long above = before;
    for (int j = 1; j <= per_thread; ++j) {
      const unsigned long long c = hist[top - j];
      if (above + c >= k) {
        out = Choice{top - j, above, c};
        break;
      }
      above += c;
    }
  }
  __syncthreads();
  const Choice c = out;
  __syncthreads();  // read by all before anyone overwrites `out`
  return c;
}

// Slots for the lanes of a warp whose `take` is true, counted from *counter (shared or global):
// one atomic per warp. Every lane of the warp must call it (the loops that call it run the same
// trip count in every lane). Lanes that do not take get an unspecified value.
template <class Counter>
__device__ __forceinline__ Counter warp_claim(bool take, Counter* counter) {
  const unsigned takers = __ballot_sync(0xffffffffu, take);
  if (takers == 0) return Counter(0);
  const int lane = int(threadIdx.x % 32u);
  const int leader = __ffs(takers) - 1;
  Counter base = 0;
  if (lane == leader) base = atomicAdd(counter, Counter(__popc(takers)));
  base = __shfl_sync(0xffffffffu, base, leader);
  return base + Counter(__popc(takers & ((1u << lane) - 1u)));
}

}  // namespace topk_detail
}  // namespace gpuprims
