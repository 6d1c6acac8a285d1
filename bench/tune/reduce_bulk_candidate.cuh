#pragma once
// Candidate for the reduce sweep (bench/tune/reduce_vectorized_tune.cu), not library code: the same
// single-pass reduction, but each block streams its contiguous chunk into shared memory with Hopper
// bulk copies (cp.async.bulk, one 16-byte-aligned stage per instruction, completion counted on an
// mbarrier) instead of per-thread 16-byte loads, kStages stages in flight. Question asked: does the
// bulk-copy path read DRAM faster than LDG.128 (fewer L2 requests per byte)?
// Needs sm_90; the harness gives it 16-byte aligned input whose byte size is a multiple of kStageBytes.
#include <cstdint>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/reduce/reduce_common.cuh"

namespace tune_bulk {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
// Arms the barrier for `bytes` of incoming copies (one arrival: the issuing thread's).
__device__ __forceinline__ void mbar_expect(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n wait:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

template <class T, class Acc, int kThreads, int kStageBytes, int kStages>
__global__ void __launch_bounds__(kThreads) reduce_bulk_kernel(const T* in, int64_t n, Acc* partials,
                                                                unsigned* ticket, T* out) {
  using BR = gpuprims::BlockReduce<Acc, kThreads>;
  __shared__ __align__(128) unsigned char stage[kStages][kStageBytes];
  __shared__ uint64_t full[kStages];
  __shared__ typename BR::TempStorage temp;
  __shared__ bool is_last;
  const int t = threadIdx.x;
  const int64_t stages_total = n * int64_t(sizeof(T)) / kStageBytes;
  const int64_t per_block = (stages_total + gridDim.x - 1) / gridDim.x;
  const int64_t first = blockIdx.x * per_block;
  const int64_t count = first >= stages_total ? 0 : (stages_total - first < per_block ? stages_total - first : per_block);
  const unsigned char* src = reinterpret_cast<const unsigned char*>(in) + first * kStageBytes;
  if (t == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    for (int s = 0; s < kStages && s < count; ++s) {
      mbar_expect(&full[s], kStageBytes);
      bulk_load(stage[s], src + s * int64_t(kStageBytes), kStageBytes, &full[s]);
    }
  }
  constexpr int kVecs = kStageBytes / 16 / kThreads;  // 16-byte vectors a thread reads per stage
  static_assert(kStageBytes % (16 * kThreads) == 0, "whole vectors per thread");
  Acc acc[2] = {Acc(0), Acc(0)};
  for (int64_t i = 0; i < count; ++i) {
    const int s = static_cast<int>(i % kStages);
    mbar_wait(&full[s], static_cast<unsigned>((i / kStages) & 1));
#pragma unroll
    for (int v = 0; v < kVecs; ++v) {
      const uint4 w = reinterpret_cast<const uint4*>(stage[s])[v * kThreads + t];
      const T* e = reinterpret_cast<const T*>(&w);
#pragma unroll
      for (int l = 0; l < int(16 / sizeof(T)); ++l) acc[l % 2] += Acc(e[l]);
    }
    __syncthreads();  // every thread is done reading stage s: it may be refilled
    if (t == 0 && i + kStages < count) {
      mbar_expect(&full[s], kStageBytes);
      bulk_load(stage[s], src + (i + kStages) * int64_t(kStageBytes), kStageBytes, &full[s]);
    }
  }
  const gpuprims::reduce_detail::Sum op;
  Acc total = BR::reduce(acc[0] + acc[1], op, temp);
  if (t == 0) {
    partials[blockIdx.x] = total;
    __threadfence();
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (is_last) {
    __threadfence();
    total = gpuprims::reduce_detail::combine_published<kThreads>(partials, gridDim.x, op, temp);
    if (t == 0) {
      *out = T(total);
      *ticket = 0;
    }
  }
}

}  // namespace tune_bulk
