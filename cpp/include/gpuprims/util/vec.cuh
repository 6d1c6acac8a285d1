#pragma once
// 16-byte vector loads and stores. A Vec16<T> is 16/sizeof(T) elements read with one LDG.128; callers must
// prove 16-byte alignment first (see reduce_vectorized.cuh for the head/body/tail split).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {

// How a 16-byte load travels: the read-only path (LDG.128 through L1), streaming past L1, or the
// read-only path with an L2 eviction hint: evict_last (the line is read again soon, from L2) or
// evict_first past L1 (its last read).
// kStreamingEvictLast: past L1 with evict_last (read again soon, from L2, with no use for L1).
// kShared: the pointer is into shared memory (a stage filled by cp.async): a plain load.
enum class LoadPolicy { kReadOnly, kStreaming, kL2EvictLast, kL2EvictFirst, kStreamingEvictLast, kShared };

template <class T>
struct alignas(16) Vec16 {
  static constexpr int kLanes = 16 / sizeof(T);
  T lane[kLanes];
};

template <class T, LoadPolicy kPolicy = LoadPolicy::kReadOnly>
__device__ __forceinline__ Vec16<T> load_vec16(const T* aligned_ptr) {
  uint4 bits;
  if constexpr (kPolicy == LoadPolicy::kStreaming) bits = ptx::ld_global_nc_na_v4(aligned_ptr);
  else if constexpr (kPolicy == LoadPolicy::kL2EvictLast)
    bits = ptx::ld_global_nc_hint_v4(aligned_ptr, ptx::l2_policy_evict_last());
  else if constexpr (kPolicy == LoadPolicy::kL2EvictFirst)
    bits = ptx::ld_global_nc_na_hint_v4(aligned_ptr, ptx::l2_policy_evict_first());
  else if constexpr (kPolicy == LoadPolicy::kStreamingEvictLast)
    bits = ptx::ld_global_nc_na_hint_v4(aligned_ptr, ptx::l2_policy_evict_last());
  else if constexpr (kPolicy == LoadPolicy::kShared) bits = *reinterpret_cast<const uint4*>(aligned_ptr);
  else bits = __ldg(reinterpret_cast<const uint4*>(aligned_ptr));
  Vec16<T> v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

// How a 16-byte store travels: the default write-back, or, for output no kernel of this launch
// reads again, marked streaming (st.global.cs) or past L1 with an L2 evict_first policy.
enum class StorePolicy { kDefault, kStreaming, kL2EvictFirst };

// One STG.128; the caller proves 16-byte alignment, as for loads.
template <class T, StorePolicy kPolicy = StorePolicy::kDefault>
__device__ __forceinline__ void store_vec16(T* aligned_ptr, const Vec16<T>& v) {
  uint4 bits;
  memcpy(&bits, &v, sizeof(bits));
  if constexpr (kPolicy == StorePolicy::kStreaming) ptx::st_global_cs_v4(aligned_ptr, bits);
  else if constexpr (kPolicy == StorePolicy::kL2EvictFirst)
    ptx::st_global_na_hint_v4(aligned_ptr, bits, ptx::l2_policy_evict_first());
  else *reinterpret_cast<uint4*>(aligned_ptr) = bits;
}

// A Vec16<T> of the kLanes values in `v` (float, or double for double), each rounded to T to
// nearest even. fp16 / bf16 pairs take one conversion instruction (cvt.rn.f16x2.f32 /
// cvt.rn.bf16x2.f32) where cast_value rounds each element with several integer instructions:
// the same values, except that a NaN comes out as the canonical NaN rather than keeping its payload.
template <class T, class Acc>
__device__ __forceinline__ Vec16<T> round_to_vec16(const Acc (&v)[Vec16<T>::kLanes]) {
  Vec16<T> q;
  if constexpr (is_half_like<T>::value) {
    uint32_t pairs[Vec16<T>::kLanes / 2];
#pragma unroll
    for (int i = 0; i < Vec16<T>::kLanes / 2; ++i) {
      if constexpr (std::is_same<T, bfloat16_t>::value) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);  // .x (low half) = v[2i]
        memcpy(&pairs[i], &h, 4);
      } else {
        const __half2 h = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
        memcpy(&pairs[i], &h, 4);
      }
    }
    memcpy(&q, pairs, sizeof(q));
  } else {
#pragma unroll
    for (int l = 0; l < Vec16<T>::kLanes; ++l) q.lane[l] = static_cast<T>(v[l]);
  }
  return q;
}

}  // namespace gpuprims
