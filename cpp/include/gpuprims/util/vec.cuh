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

// The kN values of `v` (float, or double for double) rounded to T to nearest even, into q. fp16 /
// bf16 pairs take one conversion instruction (cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32) where
// cast_value rounds each element with several integer instructions: the same values, except that a
// NaN comes out as the canonical NaN rather than keeping its payload.
template <class T, int kN, class Acc>
__device__ __forceinline__ void round_lanes(const Acc (&v)[kN], T (&q)[kN]) {
  if constexpr (is_half_like<T>::value) {
    static_assert(kN % 2 == 0, "round_lanes: fp16 / bf16 lanes round in pairs");
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) {
      if constexpr (std::is_same<T, bfloat16_t>::value) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);  // .x (low half) = v[2i]
        memcpy(&q[2 * i], &h, 4);
      } else {
        const __half2 h = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
        memcpy(&q[2 * i], &h, 4);
      }
    }
  } else {
#pragma unroll
    for (int l = 0; l < kN; ++l) q[l] = static_cast<T>(v[l]);
  }
}

// A Vec16<T> of the kLanes values in `v`, rounded as round_lanes.
template <class T, class Acc>
__device__ __forceinline__ Vec16<T> round_to_vec16(const Acc (&v)[Vec16<T>::kLanes]) {
  Vec16<T> q;
  round_lanes(v, q.lane);
  return q;
}

// kN values of T at `aligned_ptr` (aligned to their size, 8, 16 or a multiple of 16 bytes) in as
// few stores as that takes: one STG.64, or STG.128s. The norms' converting softmax writes a slot
// of 16-byte input vectors as 8 (float32 -> fp16 / bf16) or 32 (fp16 / bf16 -> float32) bytes.
// kStreaming: st.global.cs (__stcs), for output no kernel of this launch reads again.
template <bool kStreaming = false, class T, int kN>
__device__ __forceinline__ void store_lanes(T* aligned_ptr, const T (&q)[kN]) {
  constexpr int kBytes = kN * int(sizeof(T));
  static_assert(kBytes == 8 || kBytes % 16 == 0, "store_lanes: 8 bytes or whole 16-byte vectors");
  if constexpr (kBytes == 8) {
    uint2 bits;
    memcpy(&bits, q, 8);
    if constexpr (kStreaming) __stcs(reinterpret_cast<uint2*>(aligned_ptr), bits);
    else *reinterpret_cast<uint2*>(aligned_ptr) = bits;
  } else {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      uint4 bits;
      memcpy(&bits, reinterpret_cast<const unsigned char*>(q) + 16 * i, 16);
      if constexpr (kStreaming) __stcs(reinterpret_cast<uint4*>(aligned_ptr) + i, bits);
      else reinterpret_cast<uint4*>(aligned_ptr)[i] = bits;
    }
  }
}

}  // namespace gpuprims
