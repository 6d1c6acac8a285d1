#pragma once
// 16-byte vector loads and stores. A Vec16<T> is 16/sizeof(T) elements read with one LDG.128; callers must
// prove 16-byte alignment first (see reduce_vectorized.cuh for the head/body/tail split).
#include <cstdint>
#include <cstring>

#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {

// How a 16-byte load travels: the read-only path (LDG.128 through L1), or streaming past L1.
enum class LoadPolicy { kReadOnly, kStreaming };

template <class T>
struct alignas(16) Vec16 {
  static constexpr int kLanes = 16 / sizeof(T);
  T lane[kLanes];
};

template <class T, LoadPolicy kPolicy = LoadPolicy::kReadOnly>
__device__ __forceinline__ Vec16<T> load_vec16(const T* aligned_ptr) {
  uint4 bits;
  if constexpr (kPolicy == LoadPolicy::kStreaming) bits = ptx::ld_global_nc_na_v4(aligned_ptr);
  else bits = __ldg(reinterpret_cast<const uint4*>(aligned_ptr));
  Vec16<T> v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

// One STG.128; the caller proves 16-byte alignment, as for loads.
template <class T>
__device__ __forceinline__ void store_vec16(T* aligned_ptr, const Vec16<T>& v) {
  uint4 bits;
  memcpy(&bits, &v, sizeof(bits));
  *reinterpret_cast<uint4*>(aligned_ptr) = bits;
}

}  // namespace gpuprims
