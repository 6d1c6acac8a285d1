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

}  // namespace ptx
}  // namespace gpuprims
