#pragma once
// Inline PTX for sm_80 and newer: the only place (with ptx_sm90.cuh) where gpuprims writes PTX.
#include <cstdint>

namespace gpuprims {
namespace ptx {

// 16-byte global load through the non-coherent path that leaves L1 alone (streaming data read
// once). (The L2::256B prefetch variant measured 3-5 % slower for reductions on H200: dropped.)
__device__ __forceinline__ uint4 ld_global_nc_na_v4(const void* ptr) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr));
  return v;
}

// L2 eviction policies (createpolicy, sm_80) for the .L2::cache_hint loads below: evict_last keeps
// lines that a later read of the same launch wants from L2 (the lagged scan's tiles, read from DRAM
// and again from L2 a few hundred tiles later), evict_first marks lines read for the last time.
// Not volatile: the policy is a pure value, so repeated calls fold into one instruction.
__device__ __forceinline__ uint64_t l2_policy_evict_last() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
// 16-byte loads through the non-coherent path with an L2 eviction policy; the second also leaves L1 alone.
__device__ __forceinline__ uint4 ld_global_nc_hint_v4(const void* ptr, uint64_t policy) {
  uint4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr), "l"(policy));
  return v;
}
__device__ __forceinline__ uint4 ld_global_nc_na_hint_v4(const void* ptr, uint64_t policy) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr), "l"(policy));
  return v;
}

// 2^x by the special-function unit alone (MUFU.EX2): relative error about 2^-22, subnormal
// results flushed to 0, 2^-inf = 0, NaN -> NaN. exp2f() adds instructions to keep subnormals.
__device__ __forceinline__ float ex2_approx_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The same without the flush: subnormal results kept (a few more instructions around MUFU.EX2), as
// bfloat16 outputs, which share float's exponent range, need.
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The shared-memory address of a generic pointer into shared memory, as PTX's .shared operands take it.
__device__ __forceinline__ uint32_t shared_address(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// Adds v to the 32-bit shared-memory counter at `address` (RED.shared: an atomic without a result).
// Unconditional on purpose: for `if (c) atomicAdd(...)` nvcc emits a branch region (BSSY, BRA,
// BSYNC) around the atomic; adding c (0 or 1) to a valid counter costs no control flow.
__device__ __forceinline__ void red_shared_add(uint32_t address, uint32_t v) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}

// 16-byte asynchronous copy global -> shared, bypassing L1 (cp.async.cg); both addresses 16-byte
// aligned. Completion is tracked per thread by commit / wait groups.
__device__ __forceinline__ void cp_async_16(uint32_t dst_shared, const void* src_global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst_shared), "l"(src_global) : "memory");
}
// A 16-byte store that skips L1 and marks its line evict-first in L2 by an L2 policy (l2_policy_evict_first).
__device__ __forceinline__ void st_global_na_hint_v4(void* ptr, uint4 v, uint64_t policy) {
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(ptr), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w), "l"(policy)
               : "memory");
}
// A 16-byte store marked streaming (st.global.cs: evict-first in L1 and L2, written once).
__device__ __forceinline__ void st_global_cs_v4(void* ptr, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// mbarrier (sm_80): a 64-bit shared-memory barrier object that completes a phase once `count`
// arrivals have been made, then resets for the next phase; waiters name the phase by its parity.
__device__ __forceinline__ void mbarrier_init(uint32_t bar_shared, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar_shared), "r"(count) : "memory");
}
// One arrival with release semantics (this thread's earlier shared-memory writes are visible to
// whoever waits for the phase).
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar_shared) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}" ::"r"(bar_shared) : "memory");
}
// One arrival made by the hardware once every cp.async this thread issued so far has landed; the
// pending count is raised now so that the phase cannot complete before then.
__device__ __forceinline__ void cp_async_mbarrier_arrive(uint32_t bar_shared) {
  asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" ::"r"(bar_shared) : "memory");
}
// Waits (with acquire semantics) until the phase of parity `parity` has completed. sm_90's
// try_wait lets the hardware suspend the thread for a while instead of spinning on test_wait.
__device__ __forceinline__ void mbarrier_wait_parity(uint32_t bar_shared, uint32_t parity) {
  uint32_t done;
  do {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar_shared), "r"(parity)
        : "memory");
#else
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar_shared), "r"(parity)
        : "memory");
#endif
  } while (!done);
}

// Four 8x8 matrices of 16-bit elements from shared memory: lane l gives the address of row l % 8
// of matrix l / 8; register i receives matrix i, thread t holding row t / 4, columns 2(t%4), +1
// (with .trans: rows 2(t%4), +1 of column t / 4).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t row_shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row_shared)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t row_shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row_shared)
               : "memory");
}

// d += a (16x16, row) * b (16x8, col) on tensor cores, float32 accumulators, for float16 (kBf16
// false) or bfloat16 inputs. Fragment layouts (g = lane / 4, t = lane % 4): a = {(g, 2t..2t+1),
// (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)}, b = {(2t..2t+1, g), (2t+8.., g)}, d = {(g, 2t), (g, 2t+1),
// (g+8, 2t), (g+8, 2t+1)}.
template <bool kBf16>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace ptx
}  // namespace gpuprims
