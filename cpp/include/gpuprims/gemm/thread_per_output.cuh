#pragma once
// naive and coalesced: one thread per output element, the dot product read straight from global
// memory. The two differ only in which output coordinate consecutive threads (threadIdx.x) take:
//   naive:     rows. On row-major data a warp then reads 32 different rows of A (32 sectors per
//              load) and writes 32 different rows of C; B's element is shared.
//   coalesced: columns. A warp reads one A element (a broadcast) and 32 consecutive elements of a
//              B row (one 128-byte line), and writes 32 consecutive C elements.
#include "gpuprims/gemm/tile_loop.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kThreadPerOutputX = 32;
constexpr int kThreadPerOutputY = 8;

template <class T, bool kThreadXOnColumns>
__global__ void __launch_bounds__(kThreadPerOutputX* kThreadPerOutputY) thread_per_output_kernel(GemmParams p) {
  using Acc = acc_t<T>;
  constexpr int kTileM = kThreadXOnColumns ? kThreadPerOutputY : kThreadPerOutputX;
  constexpr int kTileN = kThreadXOnColumns ? kThreadPerOutputX : kThreadPerOutputY;
  const int dm = kThreadXOnColumns ? threadIdx.y : threadIdx.x;
  const int dn = kThreadXOnColumns ? threadIdx.x : threadIdx.y;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* c = static_cast<T*>(p.c);
  for_each_tile<kTileM, kTileN>(p, [&](int64_t z, int64_t m0, int64_t n0) {
    const int64_t i = m0 + dm, j = n0 + dn;
    if (i >= p.m || j >= p.n) return;
    const T* a_k = a + p.sa.offset(z, i, 0);  // walks row i of A
    const T* b_k = b + p.sb.offset(z, 0, j);  // walks column j of B
    Acc sum = 0;
    for (int64_t k = 0; k < p.k; ++k, a_k += p.sa.col, b_k += p.sb.row) {
      sum += cast_value<Acc>(*a_k) * cast_value<Acc>(*b_k);
    }
    c[p.sc.offset(z, i, j)] = cast_value<T>(sum);
  });
}

}  // namespace gemm
}  // namespace gpuprims
