#pragma once
// PackedRowTile: a RowTile for fp16 / bf16 rows of the norm kind on the vector path that keeps the
// row as loaded, 16-byte vectors of T (4 registers per 8 elements), instead of converted to float
// (8 registers per 8 elements), and converts an element each time a pass reads it.
//
// Why: the float tile of a 32-value bf16 norm-kind thread is 32 registers; with the affine vectors
// and addresses the lean kernel took 80 registers, three 256-thread blocks per SM (48 KiB of loads
// in flight per SM) against four for the softmax kind at 63 registers (64 KiB), and the norm kind
// ran at 72-80 % of copy where softmax ran at 93 % (docs/norms.md, "Performance step 3"). Packed, the
// tile is 16 registers, which leaves room under the 64-register bound of four blocks per SM. The
// price is one conversion per element per pass (three passes for layer_norm: sum, squared
// deviations, output), a PRMT/shift (bf16) or a HADD2.F32 (fp16) each: well inside the ~28
// instructions per element an SM can issue at copy bandwidth for 2-byte types. The conversion is
// exact, so the values are bit-identical to RowTile's lean path.
//
// Only what the norm kind's lean vector path uses: load (vector path), load_ragged (ragged rows;
// stored by store_tile_vectors), unpack (for kPrefetch), set_slot (the add-norms' residual prologue),
// sum_of_vectors and store. Slots past len are never loaded nor read (every pass checks per slot;
// kPartialSlots as RowTile's: per lane in the slot around position len of a ragged row).
#include <cstdint>

#include "gpuprims/norms/row_tile.cuh"

namespace gpuprims {
namespace norms {

template <class T, int kThreadsPerRow, int kVecs, bool kPartialSlots_ = false>
struct PackedRowTile {
  static_assert(is_half_like<T>::value, "PackedRowTile: float16 / bfloat16 only");
  using Float = RowTile<T, kThreadsPerRow, kVecs>;
  using Value = T;
  using Acc = typename Float::Acc;
  using Vectors = typename Float::Vectors;
  static constexpr int kLanes = Float::kLanes;
  static constexpr int kSlots = kVecs;
  static constexpr int kCapacity = Float::kCapacity;
  static constexpr bool kPartialSlots = kPartialSlots_;

  Vectors packed;

  __device__ __forceinline__ static int slot_begin(int s, int rank) { return Float::slot_begin(s, rank); }
  __device__ __forceinline__ Acc value(int s, int l) const { return cast_value<Acc>(packed.q[s].lane[l]); }
  __device__ __forceinline__ void set_slot(int s, const Vec16<T>& q) { packed.q[s] = q; }

  // RowTile::load's signature; the vector path only (the kernel picks this tile only there), so
  // stride is 1 and `fill` is not needed: no pass reads a slot past len.
  __device__ __forceinline__ void load(const T* row, int64_t /*stride*/, int64_t begin, int len, int rank,
                                       bool /*vec_ok*/, Acc /*fill*/) {
    packed.load(row + begin, len, rank);
  }
  __device__ __forceinline__ void unpack(const Vectors& in, int /*len*/, int /*rank*/, Acc /*fill*/) { packed = in; }

  // A ragged row held rotated (RowTile::load_ragged's layout): the body's vectors as loaded, then
  // the seam's slot element by element (positions past len 0, never read). A thread holds at most
  // one slot that is not a whole vector (the one or two such vectors of a row are consecutive, so
  // on different threads): it is gathered once, after the slot loop, and moved into its slot by a
  // select per slot. A gather inside each slot's branch spilled 126 bytes in the plain packed
  // 128-thread bf16 tile under 64 registers, this form 92 (ptxas, CUDA 13.0, sm_90a; the ragged
  // kernels run under 128: row_on_chip_min_blocks).
  // kLoad: as RowTile::load_ragged's.
  template <LoadPolicy kLoad = LoadPolicy::kReadOnly>
  __device__ __forceinline__ void load_ragged(const T* row, RaggedRow ragged, int len, int rank, Acc /*fill*/) {
    int seam = -1;  // the first position of this thread's slot around the seam
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      const int e0 = slot_begin(s, rank);
      if (ragged.whole_vector<kLanes>(e0)) packed.q[s] = load_vec16<T, kLoad>(row + ragged.rot + e0);
      else if (e0 < len) seam = e0;
    }
    if (seam >= 0) {
      Vec16<T> q;
      ragged.load_seam(row, seam, len, T(), q.lane);
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
        if (slot_begin(s, rank) == seam) packed.q[s] = q;
      }
    }
  }

  template <class F>
  __device__ __forceinline__ Acc sum_of_vectors(int len, int rank, F f) const {
    return sum_tile_vectors(*this, len, rank, f);
  }

  // RowTile::store's signature, vector path only (strides 1).
  template <bool kPairRounding = false, Affine kAffine = Affine::kAny, class F>
  __device__ __forceinline__ void store(T* row, int64_t /*stride*/, int64_t begin, int len, int rank, bool /*vec_ok*/,
                                        const T* weight, int64_t /*weight_stride*/, const T* bias,
                                        int64_t /*bias_stride*/, F out) const {
    store_tile_vectors<kPairRounding, kAffine>(*this, row, begin, len, rank, weight, bias, out);
  }
};

}  // namespace norms
}  // namespace gpuprims
