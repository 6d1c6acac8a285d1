#pragma once
// 16-byte vector loads. A Vec16<T> is 16/sizeof(T) elements read with one LDG.128; callers must
// prove 16-byte alignment first (see reduce_vectorized.cuh for the head/body/tail split).
#include <cstdint>
#include <cstring>

namespace gpuprims {

template <class T>
struct alignas(16) Vec16 {
  static constexpr int kLanes = 16 / sizeof(T);
  T lane[kLanes];
};

// Read-only, L1-cached 16-byte load through the non-coherent path.
template <class T>
__device__ __forceinline__ Vec16<T> load_vec16(const T* aligned_ptr) {
  const uint4 bits = __ldg(reinterpret_cast<const uint4*>(aligned_ptr));
  Vec16<T> v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace gpuprims
