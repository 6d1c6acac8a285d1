#pragma once
// Inline PTX for sm_90 and newer (Hopper's bulk copy engine and mbarrier transaction counts): with
// ptx_sm80.cuh the only place where gpuprims writes PTX. Older targets trap: callers select these
// paths by configuration and must not run them there.
#include <cstdint>

namespace gpuprims {
namespace ptx {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GPUPRIMS_SM90_ASM(...) __trap()
#else
#define GPUPRIMS_SM90_ASM(...) asm volatile(__VA_ARGS__)
#endif

// One arrival on the mbarrier that also raises the phase's expected transaction count by `bytes`:
// the phase completes once every arrival is in and that many bytes of bulk copies have landed.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar_shared, uint32_t bytes) {
  GPUPRIMS_SM90_ASM("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::"r"(bar_shared),
                    "r"(bytes)
                    : "memory");
}

// Bulk copy (the TMA engine, no tensor map) of `bytes` contiguous bytes global -> shared; both
// addresses 16-byte aligned, bytes a multiple of 16. Completion counts `bytes` on the mbarrier.
__device__ __forceinline__ void cp_async_bulk_global_to_shared(uint32_t dst_shared, const void* src_global,
                                                               uint32_t bytes, uint32_t bar_shared) {
  GPUPRIMS_SM90_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                        dst_shared),
                    "l"(src_global), "r"(bytes), "r"(bar_shared)
                    : "memory");
}

// Orders this thread's earlier generic-proxy accesses to shared memory (and those it has observed)
// before its later async-proxy ones (bulk copies), where both touch the same bytes.
__device__ __forceinline__ void fence_proxy_async_shared() { GPUPRIMS_SM90_ASM("fence.proxy.async.shared::cta;" ::: "memory"); }

#undef GPUPRIMS_SM90_ASM

}  // namespace ptx
}  // namespace gpuprims
