#pragma once
// Inline PTX for sm_90 (Hopper): mbarriers and the 1-D bulk copies of the tensor memory accelerator
// (cp.async.bulk). With ptx_sm80.cuh the only place where gpuprims writes PTX. Callers compile these
// for sm_90 and newer only (their kernels guard their bodies with __CUDA_ARCH__).
#include <cstdint>

#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace ptx {

// An mbarrier in shared memory expecting `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
// Makes mbarrier inits visible to the async proxy (the bulk copy that completes on them).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// One arrival that also tells the barrier to expect `bytes` more transaction bytes in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}
// Blocks until the phase with parity `parity` has completed (try_wait suspends in hardware between polls).
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) global -> shared by one thread's
// instruction; completion is counted in transaction bytes on `bar`.
__device__ __forceinline__ void bulk_load_global_to_shared(void* dst_shared, const void* src_global, uint32_t bytes,
                                                           uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          shared_address(dst_shared)),
      "l"(src_global), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

// The same two on shared-memory addresses (ptx::shared_address) rather than pointers, for kernels
// that keep their stage and barrier addresses as 32-bit values (mma_pipelined).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar_shared, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_shared), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_load_global_to_shared(uint32_t dst_shared, const void* src_global, uint32_t bytes,
                                                           uint32_t bar_shared) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst_shared),
      "l"(src_global), "r"(bytes), "r"(bar_shared)
      : "memory");
}

// Orders this thread's earlier generic-proxy shared-memory writes before later async-proxy
// accesses (a bulk store reading them); every writing thread fences, then the block synchronizes.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// `bytes` shared -> global (same alignment rules), tracked by this thread's bulk groups.
__device__ __forceinline__ void bulk_store_shared_to_global(void* dst_global, const void* src_shared, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst_global),
               "r"(shared_address(src_shared)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until every committed bulk store has *read* its shared source (the global writes may still
// be in flight): the shared memory may then be released or reused.
__device__ __forceinline__ void bulk_wait_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

}  // namespace ptx
}  // namespace gpuprims
