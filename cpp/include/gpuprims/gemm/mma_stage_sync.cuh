#pragma once
// How mma_pipelined's warps agree that a pipeline stage is full (its K slice landed) and empty
// (every warp has read it), as two interchangeable policies with one interface. Slices are named
// by a running index g (counted on across the tiles a block walks) and live in stage g % kStages.
//
//   ready(g)         before the first ldmatrix of slice g: the slice has landed for every thread.
//   released(g)      after the warp's last ldmatrix of slice g (called by all its lanes).
//   before_refill(g) before this thread copies slice g into its stage: slice g - kStages, the
//                    stage's previous content, has been released by every warp.
//   loaded(g, any)   after this thread issued its copies (cp.async or plain stores) of slice g;
//                    any is false where slice g lies past the tile's K and nothing was copied.
// Where the policy's kRunningIndex asks, the kernel advances g by the tile's real slice count only, so every real g completes exactly
// one phase of its stage's barriers (a skipped index is reused by the next tile's first slices).
//
// BlockBarrierSync is the classic cp.async pipeline: one commit group per slice, ready() waits
// for the thread's own group and then synchronizes the block, which at once proves every warp
// done with the slice before (so the refill of that stage must follow ready() of the next slice:
// the kernel refills at its step 0). All warps leave the barrier together and start their
// ldmatrix and MMA chains in lock step.
//
// MbarrierSync replaces the block barrier by two mbarriers a stage: "full" (kThreads arrivals:
// each thread's cp.async.mbarrier.arrive, counted when its copies land, plus a plain arrival that
// releases its synchronous stores of gathered chunks) and "empty" (one arrival a warp, lane 0
// after a __syncwarp that orders its lanes' ldmatrix reads first). A warp then waits only for the
// data it reads and, when refilling, for the warps still reading the stage it overwrites: warps
// drift apart by up to a slice instead of draining their MMA chains at a common barrier.
#include <cstdint>

#include "gpuprims/util/ptx_sm80.cuh"
#include "gpuprims/util/ptx_sm90.cuh"

namespace gpuprims {
namespace gemm {

template <int kStages>
struct BlockBarrierSync {
  static constexpr int kSmemBytes = 0;
  static constexpr bool kRefillAnywhere = false;  // refills must follow ready() of the same slice
  // Every tile starts from an idle pipeline (the kernel waits for all groups at a tile's end), so
  // slices may be numbered from 0 in each tile: one register less.
  static constexpr bool kRunningIndex = false;

  __device__ __forceinline__ BlockBarrierSync(uint32_t /*bars_shared*/, int /*t*/, int /*threads*/) {}
  __device__ __forceinline__ void ready(uint32_t /*g*/) const {
    ptx::cp_async_wait<kStages - 2>();  // this thread's copies of slice g have landed
    __syncthreads();                     // everyone's have, and everyone released slice g - 1
  }
  __device__ __forceinline__ void released(uint32_t /*g*/, int /*lane*/) const {}
  __device__ __forceinline__ void before_refill(uint32_t /*g*/) const {}
  // One group per slice, empty or not, so that ready()'s wait count holds.
  __device__ __forceinline__ void loaded(uint32_t /*g*/, bool /*any*/) const { ptx::cp_async_commit(); }
};

template <int kStages>
struct MbarrierSync {
  static constexpr int kSmemBytes = 2 * kStages * 8;  // full[kStages], empty[kStages]
  static constexpr bool kRefillAnywhere = true;
  static constexpr bool kRunningIndex = true;  // the barriers' phases run on across tiles
  uint32_t full;  // shared address of full[0]; empty[s] is at full + 8 (kStages + s)

  // Every thread of the block constructs it; thread 0 initializes the barriers, and the block
  // synchronizes before any use.
  __device__ __forceinline__ MbarrierSync(uint32_t bars_shared, int t, int threads) : full(bars_shared) {
    if (t == 0) {
      for (int s = 0; s < kStages; ++s) {
        ptx::mbarrier_init(full_of(s), static_cast<uint32_t>(threads));
        ptx::mbarrier_init(empty_of(s), static_cast<uint32_t>(threads / 32));
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      ptx::fence_mbarrier_init();  // visible to the bulk copy engine too (kBulkCopy completes on them)
#endif
    }
    __syncthreads();
  }
  __device__ __forceinline__ uint32_t full_of(uint32_t s) const { return full + 8 * s; }
  __device__ __forceinline__ uint32_t empty_of(uint32_t s) const { return full + 8 * (kStages + s); }

  // Slice g is use g / kStages of its stage, so its phase of "full" has parity (g / kStages) & 1.
  __device__ __forceinline__ void ready(uint32_t g) const {
    ptx::mbarrier_wait_parity(full_of(g % kStages), (g / kStages) & 1);
  }
  __device__ __forceinline__ void released(uint32_t g, int lane) const {
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(empty_of(g % kStages));
  }
  // The stage's first kStages slices need no wait; after that, slice g - kStages (use g / kStages - 1).
  __device__ __forceinline__ void before_refill(uint32_t g) const {
    if (g >= kStages) ptx::mbarrier_wait_parity(empty_of(g % kStages), ((g / kStages) + 1) & 1);
  }
  __device__ __forceinline__ void loaded(uint32_t g, bool any) const {
    if (!any) return;  // no thread waits for a slice past K
    ptx::cp_async_mbarrier_arrive(full_of(g % kStages));
    ptx::mbarrier_arrive(full_of(g % kStages));
  }
};

}  // namespace gemm
}  // namespace gpuprims
