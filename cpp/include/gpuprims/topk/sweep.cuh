#pragma once
// One sweep of radix selection over a row's keys (or over the candidates kept from the previous
// sweep), shared by block_per_row and split_row.
//
// Sweep 0 histograms digit 0 of every key. After each histogram, choose_bin fixes one more digit of
// the k-th largest key (`known` holds its digits through s - 1 when sweep s runs). Sweep s then
// ranks every key it reads against `known` (rank_at): keys above it go to the output at once,
// keys equal to it so far are the candidates, and either digit s of the candidates is histogrammed
// (and, when few enough, the candidates copied to a buffer the next sweep reads instead of the row)
// or, in the last sweep, the candidates are the keys equal to the k-th and k_rem of them are taken.
// The last sweep comes after the last digit, or as soon as every candidate is needed
// (candidates == k_rem). Every key above the k-th is output exactly once, in the sweep after the
// digit where it first exceeds the k-th key, so the above-keys fill slots [0, k - k_rem) and the
// ties [k - k_rem, k).
#include <cstdint>

#include "gpuprims/topk/radix_keys.hpp"
#include "gpuprims/topk/select_common.cuh"

namespace gpuprims {
namespace topk_detail {

// What the chosen bins have fixed of the k-th largest key, advanced the same way by both kernels
// after every histogram: its digits through the last chosen one (`known`, 0 before digit 0), how
// many keys equal to them the result still needs, and how many keys are equal to them.
template <class D, class Key>
struct Threshold {
  Key known;
  unsigned long long k_rem;
  unsigned long long candidates;

  // Digit `sweep`'s chosen bin: one more digit known, the keys in the bins above it taken.
  __device__ __forceinline__ void take(const Choice& c, int sweep) {
    known = Key((known << D::width(sweep)) | Key(c.bin));
    k_rem -= c.above;
    candidates = c.count;
  }
  // Whether the sweep after digit `sweep`'s choice is the last one: no digit left, or every
  // candidate needed.
  __device__ __forceinline__ bool last_after(int sweep) const {
    return sweep + 1 == D::kPasses || candidates == k_rem;
  }
};

// Where results go: slot j of the row's values and indices.
template <class T>
struct RowOutput {
  T* values;
  int64_t values_stride;
  int64_t* indices;
  int64_t indices_stride;

  __device__ __forceinline__ void put(int64_t slot, int64_t pos, const T& v) const {
    values[slot * values_stride] = v;
    indices[slot * indices_stride] = pos;
  }
};

// D: the Digits; Counter: the slot counters' type (32-bit in shared memory, 64-bit in global
// memory); Pos: the buffer's position type.
template <class T, class D, class Counter, class Pos>
struct SweepStep {
  using Key = typename KeyTraits<T>::Key;

  int sweep;                    // >= 1: ranks by the digits through sweep - 1
  Key known;                    // the k-th largest key's digits through sweep - 1
  unsigned long long k_rem;     // how many keys equal to `known` so far the result still needs
  int64_t k;
  bool last;                    // take the candidates instead of histogramming them
  bool buffer;                  // copy the candidates to buf_key / buf_pos
  unsigned* hist;               // shared: digit `sweep` of the candidates
  Counter* above_slots;
  Counter* tie_slots;
  Counter* buffer_fill;
  Key* buf_key;
  Pos* buf_pos;
  RowOutput<T> out;

  // One key per lane (ok: the lane holds one); every lane of the warp calls it. value_of() loads
  // the element (only for keys that go to the output).
  template <class ValueOf>
  __device__ __forceinline__ void operator()(bool ok, Key key, int64_t pos, ValueOf value_of) const {
    // Keys below the k-th so far (most of a row) need none of the claims below: one vote lets a
    // warp without a key at or above it skip them all (ncu, 64 x 131072 float32: sweep 1 ran 85
    // instructions per key without it).
    if (__ballot_sync(0xffffffffu, ok && D::through(key, sweep - 1) >= known) == 0) return;
    const Rank r = ok ? rank_at<D>(key, sweep - 1, known) : Rank::kDropped;
    const bool above = r == Rank::kAbove, candidate = r == Rank::kCandidate;
    const Counter a = warp_claim(above, above_slots);
    if (above) out.put(int64_t(a), pos, value_of());
    if (last) {
      const Counter t = warp_claim(candidate, tie_slots);
      if (candidate && static_cast<unsigned long long>(t) < k_rem) {
        out.put(k - int64_t(k_rem) + int64_t(t), pos, value_of());
      }
      return;
    }
    if (candidate) atomicAdd(&hist[D::digit(key, sweep)], 1u);
    if (buffer) {
      const Counter b = warp_claim(candidate, buffer_fill);
      if (candidate) {
        buf_key[b] = key;
        buf_pos[b] = Pos(pos);
      }
    }
  }
};

// Elements [begin, end) of a row, step(ok, key, i, value_of) for each; every thread of the block
// runs the same trip count, so the steps' warp collectives see whole warps. Unit-stride rows move
// in 16-byte vectors (kBytes of them in flight per thread) with the unaligned head and tail in
// one round of single elements; strided rows move element by element, kBytes / sizeof(T) of
// them in flight (4 to 16).
template <int kThreads, int kBytes, class T, class Step>
__device__ __forceinline__ void walk_row(const T* x, int64_t stride, int64_t begin, int64_t end, bool largest,
                                         const Step& step) {
  using Traits = KeyTraits<T>;
  using Key = typename Traits::Key;
  if (stride == 1) {
    constexpr int kLanes = 16 / int(sizeof(T));
    constexpr int kVecs = kBytes / 16 > 0 ? kBytes / 16 : 1;
    static_assert(kThreads >= 2 * kLanes, "walk_row: one round covers the head and the tail");
    const int64_t misaligned = int64_t(reinterpret_cast<uintptr_t>(x + begin) % 16) / int64_t(sizeof(T));
    const int64_t head = misaligned == 0 ? 0 : (kLanes - misaligned < end - begin ? kLanes - misaligned : end - begin);
    const int64_t first_vec = begin + head;
    const int64_t vectors = (end - first_vec) / kLanes;
    const int64_t tail = first_vec + vectors * kLanes;
    {
      const int64_t t = threadIdx.x;
      const bool ok = t < head + (end - tail);
      const int64_t i = t < head ? begin + t : tail + (t - head);
      const T v = ok ? x[i] : T{};
      step(ok, ok ? Traits::ranked_key(v, largest) : Key(0), i, [&] { return v; });
    }
    const uint4* vx = reinterpret_cast<const uint4*>(x + first_vec);
    for (int64_t base = 0; base < vectors; base += int64_t(kThreads) * kVecs) {
      T v[kVecs][kLanes];
#pragma unroll
      for (int j = 0; j < kVecs; ++j) {
        const int64_t vi = base + int64_t(j) * kThreads + threadIdx.x;
        if (vi < vectors) {
          const uint4 raw = vx[vi];
          memcpy(&v[j][0], &raw, 16);
        }
      }
#pragma unroll
      for (int j = 0; j < kVecs; ++j) {
        const int64_t vi = base + int64_t(j) * kThreads + threadIdx.x;
        const bool ok = vi < vectors;
#pragma unroll
        for (int e = 0; e < kLanes; ++e) {
          step(ok, ok ? Traits::ranked_key(v[j][e], largest) : Key(0), first_vec + vi * kLanes + e,
               [&] { return v[j][e]; });
        }
      }
    }
    return;
  }
  constexpr int kFit = kBytes / int(sizeof(T));
  constexpr int kItems = kFit < 4 ? 4 : (kFit > 16 ? 16 : kFit);
  const int64_t step_elems = int64_t(kThreads) * kItems;
  for (int64_t base = begin; base < end; base += step_elems) {
    T v[kItems];
    const T* p = x + (base + threadIdx.x) * stride;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (base + int64_t(j) * kThreads + threadIdx.x < end) v[j] = p[int64_t(j) * kThreads * stride];
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + int64_t(j) * kThreads + threadIdx.x;
      const bool ok = i < end;
      step(ok, ok ? Traits::ranked_key(v[j], largest) : Key(0), i, [&] { return v[j]; });
    }
  }
}

// Candidates [begin, end) of a buffer; value_of gathers the element from the row.
template <int kThreads, class T, class Key, class Pos, class Step>
__device__ __forceinline__ void walk_buffer(const Key* keys, const Pos* positions, int64_t begin, int64_t end,
                                            const T* x, int64_t stride, const Step& step) {
  for (int64_t base = begin; base < end; base += kThreads) {
    const int64_t j = base + threadIdx.x;
    const bool ok = j < end;
    const Key key = ok ? keys[j] : Key(0);
    const int64_t pos = ok ? int64_t(positions[j]) : 0;
    step(ok, key, pos, [&] { return x[pos * stride]; });
  }
}

// Bytes of loads in flight per thread: sweep 0 (a histogram add per key) takes 32; the ranking
// sweeps, whose per-key code is several times longer, 16, which keeps them within the registers
// of 512-thread blocks.
constexpr int kHistogramBytes = 32;
constexpr int kRankBytes = 16;

}  // namespace topk_detail
}  // namespace gpuprims
