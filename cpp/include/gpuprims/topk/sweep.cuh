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

// Counter: the slot counters' type (32-bit in shared memory, 64-bit in global memory);
// Pos: the buffer's position type.
template <class T, class Counter, class Pos>
struct SweepStep {
  using Key = typename KeyTraits<T>::Key;
  using D = Digits<Key>;

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
    const Rank r = ok ? rank_at(key, sweep - 1, known) : Rank::kDropped;
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

// Elements [begin, end) of a row (x[i * stride]), kItems loads in flight per thread; step(ok, key,
// i, value_of) for each. Every thread of the block runs the same trip count.
template <int kThreads, int kItems, class T, class Step>
__device__ __forceinline__ void walk_row(const T* x, int64_t stride, int64_t begin, int64_t end, bool largest,
                                         const Step& step) {
  for (int64_t base = begin; base < end; base += int64_t(kThreads) * kItems) {
    T v[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + int64_t(j) * kThreads + threadIdx.x;
      if (i < end) v[j] = x[i * stride];
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + int64_t(j) * kThreads + threadIdx.x;
      const bool ok = i < end;
      const typename KeyTraits<T>::Key key = ok ? KeyTraits<T>::ranked_key(v[j], largest) : 0;
      step(ok, key, i, [&] { return v[j]; });
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

// Sweep 0: digit 0 of every key of [begin, end) into the shared histogram.
template <int kThreads, int kItems, class T>
__device__ __forceinline__ void histogram_row(const T* x, int64_t stride, int64_t begin, int64_t end, bool largest,
                                              unsigned* hist) {
  using Key = typename KeyTraits<T>::Key;
  walk_row<kThreads, kItems>(x, stride, begin, end, largest, [&](bool ok, Key key, int64_t, auto) {
    if (ok) atomicAdd(&hist[Digits<Key>::digit(key, 0)], 1u);
  });
}

// Loads per thread in flight: `bytes` worth of elements, from 4 to 16. Sweep 0 (a histogram add
// per key) takes 32 bytes (8 float32); the ranking sweeps, whose per-key code is several times
// longer, 16 bytes, which keeps them within the registers of 512-thread blocks.
template <class T, int kBytes>
constexpr int items_per_thread() {
  return kBytes / int(sizeof(T)) < 4 ? 4 : (kBytes / int(sizeof(T)) > 16 ? 16 : kBytes / int(sizeof(T)));
}

}  // namespace topk_detail
}  // namespace gpuprims
