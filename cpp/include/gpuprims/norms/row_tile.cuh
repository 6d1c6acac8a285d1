#pragma once
// RowTile: one chunk of a row held in registers by the kThreadsPerRow threads that own the row
// (a warp or a whole block), plus the group-wide reductions over it.
//
// Layout: slot s of thread `rank` holds the 16-byte vector j = s * kThreadsPerRow + rank, i.e.
// elements [j * kLanes, (j + 1) * kLanes) of the chunk. For every slot the group reads one
// contiguous span of kThreadsPerRow * 16 bytes, and a chunk start that is a multiple of kLanes
// keeps 16-byte alignment. When the row may not be read as aligned vectors (odd row stride,
// strided rows, misaligned base) the same slots are filled element by element with bounds checks.
//
// Vector loads take the read-only path (LDG through L1). Until session 15 they streamed past L1
// (ld.global.nc.L1::no_allocate); the read-only path measured +1 to +5 points of copy bandwidth for
// the forward ops and the add-norms (H200, python -m gpuprims.bench norms, the same call with each
// build: softmax bfloat16 16384 x 8192 90.2 -> 95.2 %, add_rms_norm float32 92.1 -> 96.4 %), the
// backward ops within +-0.5 (docs/norms.md, "Load path").
#include <cstdint>
#include <limits>
#include <type_traits>

#include <cuda_bf16.h>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/norms/row_math.hpp"
#include "gpuprims/util/vec.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace norms {

struct SumOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
struct NanMaxOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return nan_max(a, b); }
};

// Two row sums reduced together (layer_norm's forward sums of d and d^2, its backward's sums of g
// and g * xhat): one block reduction, one barrier. warp_reduce / BlockReduce shuffle it member by
// member through the overloads below (found by argument-dependent lookup).
template <class Acc>
struct SumPair {
  Acc a, b;
};
struct PairSumOp {
  template <class Acc>
  __device__ __forceinline__ SumPair<Acc> operator()(SumPair<Acc> x, SumPair<Acc> y) const {
    return {x.a + y.a, x.b + y.b};
  }
};
template <class Acc>
__device__ __forceinline__ SumPair<Acc> shfl_xor(SumPair<Acc> v, int lane_mask, unsigned members = 0xffffffffu) {
  return {gpuprims::shfl_xor(v.a, lane_mask, members), gpuprims::shfl_xor(v.b, lane_mask, members)};
}
template <class Acc>
__device__ __forceinline__ SumPair<Acc> shfl_idx(SumPair<Acc> v, int src_lane) {
  return {gpuprims::shfl_idx(v.a, src_lane), gpuprims::shfl_idx(v.b, src_lane)};
}

// op over the n values of `acc`, pairwise (log2 n dependent steps); n a power of two.
template <class A, int kN, class Op>
__device__ __forceinline__ A fold_lanes(A (&acc)[kN], Op op) {
  static_assert((kN & (kN - 1)) == 0, "fold_lanes: a power of two");
#pragma unroll
  for (int w = kN / 2; w > 0; w /= 2) {
#pragma unroll
    for (int l = 0; l < w; ++l) acc[l] = op(acc[l], acc[l + w]);
  }
  return acc[0];
}

// Max over every slot of a register tile (RowTile, row_lag's LagChunk: value(s, l), kSlots, kLanes),
// the fill included, with fmax in kLanes accumulators: a NaN is dropped here, unlike nan_max;
// softmax_exponentiate and chunk_partial's lean path let it reach the row sum.
template <class Tile>
__device__ __forceinline__ typename Tile::Acc tile_max_dropping_nan(const Tile& tile) {
  using Acc = typename Tile::Acc;
  Acc acc[Tile::kLanes];
#pragma unroll
  for (int l = 0; l < Tile::kLanes; ++l) acc[l] = tile.value(0, l);
#pragma unroll
  for (int s = 1; s < Tile::kSlots; ++s) {
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) acc[l] = fmax(acc[l], tile.value(s, l));
  }
  return fold_lanes(acc, [](Acc a, Acc b) { return fmax(a, b); });
}

// Reductions across the threads of one row: shuffles within a warp (a whole warp, or an aligned
// group of 4, 8 or 16 of its lanes: group_reduce), BlockReduce for a block.
template <class Acc, int kThreadsPerRow>
struct RowGroup {
  static constexpr bool kIsWarp = kThreadsPerRow <= kWarpSize;
  struct Empty {};
  template <bool kWarp, int = 0>
  struct Storage {
    using type = Empty;
  };
  template <int kUnused>
  struct Storage<false, kUnused> {  // BlockReduce only for block groups (its kThreads >= 32)
    using type = typename BlockReduce<Acc, kThreadsPerRow>::TempStorage;
  };
  using TempStorage = typename Storage<kIsWarp>::type;

  // Every thread of the group gets the same bits. Block groups synchronize the block.
  template <class Op>
  __device__ __forceinline__ static Acc all(Acc v, Op op, TempStorage& temp) {
    if constexpr (kIsWarp) {
      (void)temp;
      return group_reduce<kThreadsPerRow>(v, op);
    } else {
      return BlockReduce<Acc, kThreadsPerRow>::allreduce(v, op, temp);
    }
  }

  // The group reduction as the row statistics (row_stats.cuh) call it: reduce(v, op).
  // Synced: one TempStorage, all() above (two barriers per block reduction).
  struct Synced {
    TempStorage& temp;
    template <class Op>
    __device__ __forceinline__ Acc operator()(Acc v, Op op) { return all(v, op, temp); }
  };
  // Alternating: two TempStorage taken in turn, one barrier per block reduction
  // (BlockReduce::allreduce_unsynced). Slot `turn` is rewritten two reductions later, after the
  // barrier of the reduction in between, which every thread reaches only once it has read the
  // slot. The turn is carried across rows, so a row with one reduction (rms_norm) alternates too.
  struct Alternating {
    TempStorage* slots;  // two, in shared memory
    int turn = 0;
    template <class Op>
    __device__ __forceinline__ Acc operator()(Acc v, Op op) {
      if constexpr (kIsWarp) {
        return group_reduce<kThreadsPerRow>(v, op);
      } else {
        const Acc r = BlockReduce<Acc, kThreadsPerRow>::allreduce_unsynced(v, op, slots[turn]);
        turn ^= 1;
        return r;
      }
    }
  };
};

// The vector-path passes over a tile, written once for RowTile and PackedRowTile (row_tile_packed.cuh),
// which differ only in how element l of slot s is held: Tile::value(s, l) gives it as Tile::Acc.

// Whether the kLanes positions from e0 are all valid: true on the vector path (slots whole or
// empty) unless the tile is a ragged row's (Tile::kPartialSlots: the norm kind's RaggedRow tile,
// whose one slot around position len is partly filled).
template <class Tile, class = void>
struct has_partial_slots : std::false_type {};  // tiles without the member (SharedSlice, LagChunk): never
template <class Tile>
struct has_partial_slots<Tile, std::void_t<decltype(Tile::kPartialSlots)>>
    : std::integral_constant<bool, Tile::kPartialSlots> {};
template <class Tile>
__device__ __forceinline__ bool slot_whole(int e0, int len) {
  return !has_partial_slots<Tile>::value || e0 + Tile::kLanes <= len;
}

// Sum over the valid elements of f(value) on the vector path (slots whole or empty; a partly
// filled slot of a Tile::kPartialSlots tile lane by lane): one check per slot, and kLanes
// accumulators (dependency chains of kSlots adds instead of one of kSlots * kLanes) added
// pairwise at the end. A fixed order, but not RowTile::sum_of's.
template <class Tile, class F>
__device__ __forceinline__ typename Tile::Acc sum_tile_vectors(const Tile& tile, int len, int rank, F f) {
  using Acc = typename Tile::Acc;
  Acc acc[Tile::kLanes];
#pragma unroll
  for (int l = 0; l < Tile::kLanes; ++l) acc[l] = Acc(0);
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const int e0 = Tile::slot_begin(s, rank);
    if (e0 >= len) continue;
    const bool whole = slot_whole<Tile>(e0, len);
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      if (whole || e0 + l < len) acc[l] += f(tile.value(s, l));
    }
  }
  return fold_lanes(acc, SumOp{});
}

// (sum of d, sum of d^2) over the valid elements, d = f(value), on the vector path: as
// sum_tile_vectors (partly filled slots included), with kLanes chains for each sum (one FADD and
// one FFMA per element).
template <class Tile, class F>
__device__ __forceinline__ SumPair<typename Tile::Acc> sum_and_squares_tile_vectors(const Tile& tile, int len, int rank,
                                                                                    F f) {
  using Acc = typename Tile::Acc;
  Acc sum[Tile::kLanes], squares[Tile::kLanes];
#pragma unroll
  for (int l = 0; l < Tile::kLanes; ++l) sum[l] = squares[l] = Acc(0);
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const int e0 = Tile::slot_begin(s, rank);
    if (e0 >= len) continue;
    const bool whole = slot_whole<Tile>(e0, len);
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      if (!whole && e0 + l >= len) continue;
      const Acc d = f(tile.value(s, l));
      sum[l] += d;
      squares[l] = fma(d, d, squares[l]);
    }
  }
  return {fold_lanes(sum, SumOp{}), fold_lanes(squares, SumOp{})};
}

// Which affine vectors a vector-path store reads. kAny: either pointer may be null, tested per
// element (a select per element and vector: the compiler does not hoist the test out of the
// unrolled loop); kWeight / kWeightBias: the caller has checked that these are present (and
// that the others are absent), so the loop has no selects.
enum class Affine { kAny, kWeight, kWeightBias };

// The 16 bytes of the 32 in (lo, hi) that start `shift` elements into lo (shift < kLanes, the same
// on every thread that calls it with the same row): a funnel over 32-bit words by the shift's
// bits (8, 4 and, for 2-byte types, 2 bytes), selects and SHFs where a lane index would put the
// vectors in local memory.
template <class T>
__device__ __forceinline__ Vec16<T> funnel_lanes(const Vec16<T>& lo, const Vec16<T>& hi, int shift) {
  uint32_t c[8];
  memcpy(c, &lo, 16);
  memcpy(c + 4, &hi, 16);
  const int bytes = shift * int(sizeof(T));
#pragma unroll
  for (int m = 0; m < 6; ++m) c[m] = bytes & 8 ? c[m + 2] : c[m];
#pragma unroll
  for (int m = 0; m < 5; ++m) c[m] = bytes & 4 ? c[m + 1] : c[m];
  if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int m = 0; m < 4; ++m) c[m] = __funnelshift_r(c[m], c[m + 1], (bytes & 2) * 8);
  }
  Vec16<T> out;
  memcpy(&out, c, 16);
  return out;
}

// A ragged row (row_on_chip's kernels for unit-stride rows that are not whole aligned vectors:
// odd lengths, offset views) held rotated: tile position v holds the row's element
// (v + rot) mod len, where rot = the elements before the row's first 16-byte boundary (at most
// len). Positions [0, body), body = len - rot, are the aligned body of the row, read and written
// as 16-byte vectors from row + rot; the row's first rot elements follow it at [body, len), so a
// tile that holds len elements holds any ragged row of len. Every slot is then a whole vector
// of the body except the one or two around position body (the row's tail and head), accessed
// element by element, never outside the row (memcheck). The order of the elements in the tile
// does not matter to the statistics (the softmax kind's max and sum, the norm kind's sums); the
// norm kind's output takes its affine vectors at the same rotation (load_affine).
struct RaggedRow {
  int rot;   // the row's first element at tile position body
  int body;  // len - rot
  // Whether the slot of kLanes positions from e0 lies in the aligned body.
  template <int kLanes>
  __device__ __forceinline__ bool whole_vector(int e0) const { return e0 + kLanes <= body; }
  // The row's element at tile position v (< len).
  __device__ __forceinline__ int element(int v) const { return v < body ? rot + v : v - body; }
  // The tile positions from `begin` on as a RaggedRow of their own (its position v is this one's
  // begin + v; body may go negative): the slice of the rotated row that one CTA of a cluster holds.
  __device__ __forceinline__ RaggedRow from(int begin) const { return {rot + begin, body - begin}; }
  // The kLanes positions from e0 (a slot around the seam: not whole_vector) read element by
  // element into q, positions past len as `fill`; every load issued before any value is used.
  template <int kLanes, class T>
  __device__ __forceinline__ void load_seam(const T* row, int e0, int len, T fill, T (&q)[kLanes]) const {
#pragma unroll
    for (int l = 0; l < kLanes; ++l) q[l] = e0 + l < len ? row[element(e0 + l)] : fill;
  }
  // An affine vector's elements (weight or bias: contiguous, len elements from a 16-byte
  // boundary) for the kLanes positions from e0, a whole vector of the body: elements
  // rot + e0 + [0, kLanes), which straddle two aligned vectors of v unless rot is a multiple of
  // kLanes: both are loaded (the second element by element where it would end past len) and
  // funnelled into place.
  template <class T>
  __device__ __forceinline__ Vec16<T> load_affine_whole(const T* v, int e0, int len) const {
    constexpr int kLanes = Vec16<T>::kLanes;
    const int shift = (rot + e0) % kLanes;
    const int base = rot + e0 - shift;
    const Vec16<T> lo = load_vec16<T, LoadPolicy::kReadOnly>(v + base);
    if (shift == 0) return lo;
    Vec16<T> hi;
    if (base + 2 * kLanes <= len) {
      hi = load_vec16<T, LoadPolicy::kReadOnly>(v + base + kLanes);
    } else {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) hi.lane[l] = base + kLanes + l < len ? v[base + kLanes + l] : T();
    }
    return funnel_lanes(lo, hi, shift);
  }
  // The affine vector's elements for any slot: load_affine_whole for a whole vector of the body,
  // element by element around the seam (past len T()).
  template <class T>
  __device__ __forceinline__ Vec16<T> load_affine(const T* v, int e0, int len) const {
    if (whole_vector<Vec16<T>::kLanes>(e0)) return load_affine_whole(v, e0, len);
    Vec16<T> out;
    load_seam(v, e0, len, T(), out.lane);
    return out;
  }
  // Writes q, the values of the kLanes positions from e0, to the row: one aligned store_lanes for
  // a whole vector of the body, element by element (positions below len) around the seam.
  template <bool kStreaming = false, int kLanes, class T>
  __device__ __forceinline__ void store_slot(T* row, int e0, int len, const T (&q)[kLanes]) const {
    if (whole_vector<kLanes>(e0)) {
      store_lanes<kStreaming>(row + rot + e0, q);
    } else {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) {
        if (e0 + l < len) row[element(e0 + l)] = q[l];
      }
    }
  }
};

template <class T>
__device__ __forceinline__ RaggedRow ragged_row(const T* row, int len) {
  const int before_boundary = int((16 - reinterpret_cast<uintptr_t>(row) % 16) % 16 / sizeof(T));
  const int rot = before_boundary < len ? before_boundary : len;
  return {rot, len - rot};
}

// Writes out(value, weight, bias) to elements [begin, begin + len) of y's row on the vector path
// (RowTile::store's vec_ok contract). kPairRounding as for RowTile::store. A slot's kLanes outputs
// are one 16-byte vector, or 8 / 32 bytes where the tile converts (RowTile's Out: then no affine
// vectors, whose lanes would not match the slot's).
// kRagged (row_on_chip's ragged kernels): the tile holds y's row `row` rotated by ragged.rot
// (RaggedRow, as load_ragged filled it: the host makes y's row as aligned as the vector path's
// from there, rows_ragged_vectors in layout.hpp), with begin 0: whole vectors of the body at
// row + rot, the others element by element, the affine vectors at the same rotation
// (RaggedRow::load_affine).
template <bool kPairRounding, Affine kAffine = Affine::kAny, bool kRagged = false, class Tile, class F>
__device__ __forceinline__ void store_tile_vectors(const Tile& tile, typename Tile::Value* row, int64_t begin, int len,
                                                   int rank, const typename Tile::Value* weight,
                                                   const typename Tile::Value* bias, F out,
                                                   RaggedRow ragged = RaggedRow{0, 0}) {
  using T = typename Tile::Value;
  using Acc = typename Tile::Acc;
  constexpr bool kConverts = Tile::kLanes != Vec16<T>::kLanes;
  static_assert(!kConverts || kAffine == Affine::kAny, "a converting tile has no affine vectors");
  const bool has_weight = kAffine == Affine::kAny ? weight != nullptr : true;
  const bool has_bias = kAffine == Affine::kAny ? bias != nullptr : kAffine == Affine::kWeightBias;
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const int e0 = Tile::slot_begin(s, rank);
    if (e0 >= len) continue;
    // Affine vectors stay packed until used: fewer live registers than converting up front.
    const int64_t at = begin + e0;
    [[maybe_unused]] Vec16<T> w, b;
    if constexpr (kRagged && !kConverts) {
      if (has_weight) w = ragged.load_affine(weight, e0, len);
      if (has_bias) b = ragged.load_affine(bias, e0, len);
    } else if constexpr (!kConverts) {
      if (has_weight) w = load_vec16<T, LoadPolicy::kReadOnly>(weight + at);  // every row reuses them
      if (has_bias) b = load_vec16<T, LoadPolicy::kReadOnly>(bias + at);
    }
    Acc o[Tile::kLanes];
    T q[Tile::kLanes];
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      Acc wl = Acc(1), bl = Acc(0);
      if constexpr (!kConverts) {
        wl = has_weight ? cast_value<Acc>(w.lane[l]) : Acc(1);
        bl = has_bias ? cast_value<Acc>(b.lane[l]) : Acc(0);
      }
      o[l] = out(tile.value(s, l), wl, bl);
      if constexpr (!kPairRounding) q[l] = cast_value<T>(o[l]);
    }
    if constexpr (kPairRounding) round_lanes(o, q);
    if constexpr (kRagged) ragged.store_slot(row, e0, len, q);
    else store_lanes(row + at, q);
  }
}

// The residual prologue of add_layer_norm / add_rms_norm on the vector path (whole aligned
// vectors, slots past len empty): slot by slot, sum = round_to_T(value + residual) with pairs
// rounded by the hardware (round_to_vec16: the values of cast_value, NaN payloads aside), written
// to the sum row and kept as the tile's value (Tile::set_slot). Each residual vector is loaded in
// its slot's step: loading them all first held 16 more registers (bf16 256-thread tile: 101
// registers against 80 unbounded) for loads the compiler issues early anyway.
// Returns this thread's (sum of s, sum of s^2) over the rounded sums s (origin_stats, row_stats.cuh):
// the prologue already holds every value, so the one-pass statistics need no pass of their own.
// Four chains per sum, not kLanes: with eight, the bf16 256-thread tile spilled 20-40 bytes under
// the 80-register bound of three blocks per SM (ptxas, CUDA 13.0; one, two or four: no spill).
// kSum false: the first member is 0 (rms_norm needs only the squares). A caller that ignores the
// result pays nothing (the compiler drops the sums). kLoad: how the residual is read
// (LoadPolicy::kShared for a row staged in shared memory).
template <bool kSum = true, LoadPolicy kLoad = LoadPolicy::kReadOnly, class Tile>
__device__ __forceinline__ SumPair<typename Tile::Acc> add_residual_vectors(Tile& tile,
                                                                           const typename Tile::Value* residual,
                                                                           typename Tile::Value* sum, int len,
                                                                           int rank) {
  using T = typename Tile::Value;
  using Acc = typename Tile::Acc;
  constexpr int kChains = 4;
  Acc sums[kChains], squares[kChains];
#pragma unroll
  for (int l = 0; l < kChains; ++l) sums[l] = squares[l] = Acc(0);
#pragma unroll
  for (int s = 0; s < Tile::kSlots; ++s) {
    const int e0 = Tile::slot_begin(s, rank);
    if (e0 >= len) continue;
    const Vec16<T> r = load_vec16<T, kLoad>(residual + e0);
    Acc o[Tile::kLanes];
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) o[l] = tile.value(s, l) + cast_value<Acc>(r.lane[l]);
    const Vec16<T> q = round_to_vec16<T>(o);
    store_vec16(sum + e0, q);
    tile.set_slot(s, q);
#pragma unroll
    for (int l = 0; l < Tile::kLanes; ++l) {
      const Acc v = cast_value<Acc>(q.lane[l]);
      if constexpr (kSum) sums[l % kChains] += v;
      squares[l % kChains] = fma(v, v, squares[l % kChains]);
    }
  }
  return {kSum ? fold_lanes(sums, SumOp{}) : Acc(0), fold_lanes(squares, SumOp{})};
}

// Out (softmax kind only; norms' variant_row_on_chip_convert.cu): the tile reads T and holds and
// writes Out, each element converted to Out as it is loaded (softmax(x, dtype=Out): x cast first).
// Slots stay 16-byte vectors of T, so a slot's outputs are kLanes * sizeof(Out) bytes (8 or 32).
// Value is the type of the results: exp_lean and the output rounding follow it.
// kInterleaved: the element-wise path's layout (element()), for tiles that never take the vector
// path (row_on_chip's norm-kind kernels for rows that are not aligned vectors).
// kPartialSlots: the tile of a ragged row whose lean passes must skip the empty lanes of the slot
// around position len (the norm kind's; the softmax kind's fill, -inf, is neutral there).
template <class T, int kThreadsPerRow, int kVecs, class Out = T, bool kInterleaved = false, bool kPartialSlots = false>
struct RowTile;

// An element x of the input as a tile of results in Out holds it (acc_t<Out>): rounded to Out
// first where Out differs from T (softmax(x, dtype=Out): x cast first). float -> bfloat16 by the
// hardware's conversion (cast_value's rounds in integer instructions, which held the float32 ->
// bfloat16 softmax at 82.5 % of copy against float16's 100 %, session 23 run 2; the same value, a
// NaN aside, which stays a NaN).
template <class Out, class T>
__device__ __forceinline__ acc_t<Out> input_as(T x) {
  if constexpr (std::is_same<T, Out>::value) return cast_value<acc_t<Out>>(x);
  else if constexpr (std::is_same<T, float>::value && std::is_same<Out, bfloat16_t>::value)
    return __bfloat162float(__float2bfloat16_rn(x));
  else return cast_value<acc_t<Out>>(cast_value<Out>(x));
}

template <class T, int kThreadsPerRow, int kVecs, class Out, bool kInterleaved, bool kPartialSlots_>
struct RowTile {
  using Input = T;
  using Value = Out;
  using Acc = acc_t<Out>;
  static constexpr int kLanes = Vec16<T>::kLanes;
  static constexpr int kSlots = kVecs;
  static constexpr bool kPartialSlots = kPartialSlots_;
  static constexpr int kCapacity = kThreadsPerRow * kVecs * kLanes;  // elements per chunk

  Acc v[kVecs][kLanes];

  // Offset of slot s's first element within the chunk, for thread `rank`.
  __device__ __forceinline__ static int slot_begin(int s, int rank) { return (s * kThreadsPerRow + rank) * kLanes; }
  // The chunk element that lane l of slot s holds on the element-wise path: the vector layout's
  // (slot_begin + l) or, kInterleaved, (s * kLanes + l) * kThreadsPerRow + rank, so that the
  // group's loads and stores of one (s, l) touch consecutive elements instead of elements 16
  // bytes apart. Session 23 device runs 9 (the vector layout) and 10 (interleaved; H100,
  // bench/tune/norms_unaligned.py): layer_norm / rms_norm 16384 x 8191 bfloat16 0.80 / 0.79 ms ->
  // 0.59 / 0.55, float32 0.78 / 0.77 -> 0.47 / 0.42, 8192 x 12289 bfloat16 0.63 / 0.60 -> 0.46 /
  // 0.42. The softmax kind ran 2x slower interleaved (run 8: 0.87 -> 1.73 ms at 16384 x 8191
  // bfloat16) and keeps the vector layout; so do the add-norms (not measured interleaved).
  __device__ __forceinline__ static int element(int s, int l, int rank) {
    return kInterleaved ? (s * kLanes + l) * kThreadsPerRow + rank : slot_begin(s, rank) + l;
  }

  // Element l of slot s (the accessor of sum_tile_vectors / store_tile_vectors, shared with PackedRowTile).
  __device__ __forceinline__ Acc value(int s, int l) const { return v[s][l]; }
  // An element of x as the tile holds it (input_as).
  __device__ __forceinline__ static Acc from_input(T x) { return input_as<Out>(x); }
  // Slot s from a vector of T (add_residual_vectors).
  __device__ __forceinline__ void set_slot(int s, const Vec16<T>& q) {
#pragma unroll
    for (int l = 0; l < kLanes; ++l) v[s][l] = cast_value<Acc>(q.lane[l]);
  }

  // The tile's 16-byte vectors as loaded, before conversion to Acc: what a kernel holds for the
  // next row while it works on the current one (half the registers of the tile for fp16/bf16).
  struct Vectors {
    Vec16<T> q[kVecs];

    // Elements [0, len) of an aligned chunk (the vector path: len a multiple of kLanes); slots
    // past len are not loaded. kLoad: LoadPolicy::kShared for a chunk staged in shared memory.
    template <LoadPolicy kLoad = LoadPolicy::kReadOnly>
    __device__ __forceinline__ void load(const T* chunk, int len, int rank) {
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
        if (slot_begin(s, rank) < len) q[s] = load_vec16<T, kLoad>(chunk + slot_begin(s, rank));
      }
    }
  };

  // The tile from loaded vectors; slots past len hold `fill`.
  __device__ __forceinline__ void unpack(const Vectors& in, int len, int rank, Acc fill) {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      if (slot_begin(s, rank) < len) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = from_input(in.q[s].lane[l]);
      } else {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = fill;
      }
    }
  }

  // Loads elements [begin, begin + len) of the row at `row` (element i at row[i * stride]); slots
  // past len hold `fill`. vec_ok: stride is 1, row + begin is 16-byte aligned and len is a
  // multiple of kLanes, so every slot is a whole vector or empty. The two paths are separate
  // loops (not a choice per slot) so the compiler keeps one set of addresses live at a time.
  __device__ __forceinline__ void load(const T* row, int64_t stride, int64_t begin, int len, int rank, bool vec_ok,
                                       Acc fill) {
    if (!kInterleaved && vec_ok) {
      // Each slot loaded and converted in one step: ptxas keeps this form at 80 registers for the
      // fp32 256-thread tile, Vectors::load + unpack (all loads, then all conversions) at 127.
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
        const int e0 = slot_begin(s, rank);
        if (e0 < len) {
          const Vec16<T> q = load_vec16<T, LoadPolicy::kReadOnly>(row + begin + e0);
#pragma unroll
          for (int l = 0; l < kLanes; ++l) v[s][l] = from_input(q.lane[l]);
        } else {
#pragma unroll
          for (int l = 0; l < kLanes; ++l) v[s][l] = fill;
        }
      }
    } else {
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          const int e = element(s, l, rank);
          v[s][l] = e < len ? from_input(row[(begin + e) * stride]) : fill;
        }
      }
    }
  }

  // A ragged row of len elements at `row` (RaggedRow), rotated into the tile; positions past len
  // hold `fill` (the softmax kind's -inf: neutral in its max and sums).
  // Where the tile converts what it loads (fp16 / bf16, or a dtype= pair), every 16-byte load of
  // the body is issued first in load()'s form (a slot's load and conversion, or the fill), and
  // the seam's slot is then overwritten element by element, its loads all issued before any is
  // converted. With each slot's load and conversion inside its branch (whole vector or seam), a
  // slot's conversion waited for its data before the next slot's branch issued its load, one
  // latency per slot: H100, session 25 device run 7, bench/tune/norms_unaligned.py, one slot
  // per branch -> this form, % of copy: bf16 softmax 16384 x 8191 78.1 -> 97.1, 8192 x 12289 63.4
  // -> 85.7, 65536 x 1001 78.1 -> 94.1, 340654 x 197 53.4 -> 69.7 (run 6 on an H200: 62.9 ->
  // 86.0, 49.4 -> 64.0, 64.5 -> 83.5). Where nothing converts (float32), a load's register is the
  // tile's and nothing waits: the one-branch form stays, the other read 4-6 points lower at
  // float32 12289 on both GPUs. (All loads first, then all conversions, spilled 160-216 bytes in
  // the 2-byte tiles of 32 values under 64 registers.)
  // kLoad: LoadPolicy::kShared for rows staged in shared memory (row_on_chip's kStaged kernels).
  template <LoadPolicy kLoad = LoadPolicy::kReadOnly>
  __device__ __forceinline__ void load_ragged(const T* row, RaggedRow ragged, int len, int rank, Acc fill) {
    constexpr bool kConverts = !std::is_same<T, Acc>::value || !std::is_same<Out, T>::value;
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      const int e0 = slot_begin(s, rank);
      if (ragged.whole_vector<kLanes>(e0)) {
        const Vec16<T> q = load_vec16<T, kLoad>(row + ragged.rot + e0);
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = from_input(q.lane[l]);
      } else if constexpr (kConverts) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = fill;
      } else {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = e0 + l < len ? from_input(row[ragged.element(e0 + l)]) : fill;
      }
    }
    if constexpr (kConverts) {
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
        const int e0 = slot_begin(s, rank);
        if (!ragged.whole_vector<kLanes>(e0) && e0 < len) {
          T raw[kLanes];
          ragged.load_seam(row, e0, len, T(), raw);
#pragma unroll
          for (int l = 0; l < kLanes; ++l) {
            if (e0 + l < len) v[s][l] = from_input(raw[l]);
          }
        }
      }
    }
  }

  // v = round_to_T(v + residual) on the valid elements (the sum as the unfused `x + residual` in
  // x's dtype would hold it), the residual's elements [begin, begin + len) read slot by slot.
  // vec_ok as for load().
  __device__ __forceinline__ void add_rounded(const T* row, int64_t stride, int64_t begin, int len, int rank,
                                              bool vec_ok) {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      const int e0 = slot_begin(s, rank);
      if (!kInterleaved && vec_ok) {
        if (e0 >= len) continue;
        const Vec16<T> q = load_vec16<T, LoadPolicy::kReadOnly>(row + begin + e0);
#pragma unroll
        for (int l = 0; l < kLanes; ++l) v[s][l] = cast_value<Acc>(cast_value<T>(v[s][l] + cast_value<Acc>(q.lane[l])));
      } else {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          const int e = element(s, l, rank);
          if (e < len) v[s][l] = cast_value<Acc>(cast_value<T>(v[s][l] + cast_value<Acc>(row[(begin + e) * stride])));
        }
      }
    }
  }

  // Sum over the valid elements of f(value).
  template <class F>
  __device__ __forceinline__ Acc sum_of(int len, int rank, F f) const {
    Acc acc = Acc(0);
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) {
        if (element(s, l, rank) < len) acc += f(v[s][l]);
      }
    }
    return acc;
  }

  // Sum over the valid elements of f(value), for the vector path: sum_tile_vectors.
  template <class F>
  __device__ __forceinline__ Acc sum_of_vectors(int len, int rank, F f) const {
    return sum_tile_vectors(*this, len, rank, f);
  }

  // Writes out(value, weight, bias) to elements [begin, begin + len) of y's row. Affine vectors
  // are indexed by the element's position in the row; null ones read as weight 1, bias 0.
  // vec_ok as for load(), and the affine vectors are contiguous and 16-byte aligned.
  // kPairRounding (vector path): fp16/bf16 results rounded two at a time by the hardware
  // (round_to_vec16) instead of element by element in software: the same values, NaN payloads aside.
  // kAffine (vector path): store_tile_vectors'; the element-wise path tests the pointers.
  template <bool kPairRounding = false, Affine kAffine = Affine::kAny, class F>
  __device__ __forceinline__ void store(Out* row, int64_t stride, int64_t begin, int len, int rank, bool vec_ok,
                                        const Out* weight, int64_t weight_stride, const Out* bias, int64_t bias_stride,
                                        F out) const {
    if (!kInterleaved && vec_ok) {
      store_tile_vectors<kPairRounding, kAffine>(*this, row, begin, len, rank, weight, bias, out);
    } else {
#pragma unroll
      for (int s = 0; s < kVecs; ++s) {
#pragma unroll
        for (int l = 0; l < kLanes; ++l) {
          if (element(s, l, rank) >= len) continue;
          const int64_t e = begin + element(s, l, rank);
          const Acc wl = weight != nullptr ? cast_value<Acc>(weight[e * weight_stride]) : Acc(1);
          const Acc bl = bias != nullptr ? cast_value<Acc>(bias[e * bias_stride]) : Acc(0);
          row[e * stride] = cast_value<Out>(out(v[s][l], wl, bl));
        }
      }
    }
  }
};

}  // namespace norms
}  // namespace gpuprims
