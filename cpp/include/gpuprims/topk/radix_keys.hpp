#pragma once
// Order-preserving unsigned keys for radix selection, and the digits the selection walks them by.
// Plain C++ (host and device): the CPU reference ranks by the same keys as the kernels.
//
// key(a) > key(b) exactly when a ranks above b for largest=True: integers by value, floats by value
// with every NaN (any sign, any payload) above +inf -- torch.topk's order -- and -0.0 just below
// +0.0 (their bit patterns; they compare equal as values). largest=False inverts the key, so the
// selection always takes the k largest keys and NaN stays the last choice.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/dtype.hpp"

namespace gpuprims {
namespace topk_detail {

template <int kBytes> struct UnsignedOfSize;
template <> struct UnsignedOfSize<1> { using type = uint8_t; };
template <> struct UnsignedOfSize<2> { using type = uint16_t; };
template <> struct UnsignedOfSize<4> { using type = uint32_t; };
template <> struct UnsignedOfSize<8> { using type = uint64_t; };

// KeyTraits<T>::Key: the unsigned type of T's size. key(v): v's rank as that integer.
template <class T>
struct KeyTraits {
  using Key = typename UnsignedOfSize<int(sizeof(T))>::type;
  static constexpr Key kSignBit = Key(Key(1) << (8 * sizeof(T) - 1));

  GPUPRIMS_HD static Key bits(const T& v) {
    if constexpr (std::is_same<T, half_t>::value || std::is_same<T, bfloat16_t>::value) {
      return v.bits;
    } else {
      Key k;
      static_assert(sizeof(k) == sizeof(v), "KeyTraits: key and value of one size");
      std::memcpy(&k, &v, sizeof(k));  // device code too (CUDA supports memcpy)
      return k;
    }
  }

  // The magnitude bits above which a pattern is a NaN (exponent all ones, mantissa not zero).
  static constexpr Key nan_floor() {
    if constexpr (std::is_same<T, half_t>::value) return Key(0x7c00u);
    else if constexpr (std::is_same<T, bfloat16_t>::value) return Key(0x7f80u);
    else if constexpr (std::is_same<T, float>::value) return Key(0x7f800000u);
    else return Key(0x7ff0000000000000ull);
  }

  GPUPRIMS_HD static Key key(const T& v) {
    const Key b = bits(v);
    if constexpr (std::is_unsigned<T>::value) {
      return b;
    } else if constexpr (std::is_integral<T>::value) {
      return Key(b ^ kSignBit);  // two's complement: flipping the sign bit orders by value
    } else {
      if (Key(b & Key(~kSignBit)) > nan_floor()) return Key(~Key(0));  // every NaN: the top key
      // Sign-magnitude: negatives count down (all bits flipped), positives above them.
      return (b & kSignBit) ? Key(~b) : Key(b | kSignBit);
    }
  }

  GPUPRIMS_HD static Key ranked_key(const T& v, bool largest) { return largest ? key(v) : Key(~key(v)); }
};

// Radix digits of a key, most significant first: kBits each (2^kBits histogram bins), the last
// digit taking what is left. With 11 bits: 8-bit keys in one pass of 8 bits; 16-bit: 11 + 5;
// 32-bit: 11 + 11 + 10; 64-bit: five of 11 and one of 9. Digit p covers key bits
// [shift(p), shift(p) + width(p)).
template <class Key, int kBits = 11>
struct Digits {
  static constexpr int kKeyBits = int(8 * sizeof(Key));
  static constexpr int kMaxBits = kBits < kKeyBits ? kBits : kKeyBits;
  static constexpr int kMaxBins = 1 << kMaxBits;
  static constexpr int kPasses = (kKeyBits + kMaxBits - 1) / kMaxBits;

  GPUPRIMS_HD static constexpr int shift(int p) {
    return kKeyBits - kMaxBits * (p + 1) > 0 ? kKeyBits - kMaxBits * (p + 1) : 0;
  }
  GPUPRIMS_HD static constexpr int width(int p) { return kKeyBits - kMaxBits * p - shift(p); }
  GPUPRIMS_HD static constexpr int bins(int p) { return 1 << width(p); }
  // The key's bits through digit p (its top kKeyBits - shift(p) bits), as a number.
  GPUPRIMS_HD static Key through(Key key, int p) { return Key(key >> shift(p)); }
  GPUPRIMS_HD static int digit(Key key, int p) { return int(through(key, p) & Key(bins(p) - 1)); }
};

// Where one key stands once the digits through p of the k-th largest key are known (`known`, in
// Digits::through form): kAbove keys have the same digits before p and a larger digit p (they are
// in the result, output by this pass), kCandidate keys have all of them (still undecided), and
// the rest were decided by an earlier pass or fall below.
enum class Rank { kDropped, kAbove, kCandidate };

template <class D, class Key>
GPUPRIMS_HD Rank rank_at(Key key, int p, Key known) {
  const Key t = D::through(key, p);
  if (t == known) return Rank::kCandidate;
  // Shifting a Key by its width would be undefined: digit 0 has no digits before it.
  const bool same_before = p == 0 || Key(t >> D::width(p)) == Key(known >> D::width(p));
  return (same_before && t > known) ? Rank::kAbove : Rank::kDropped;
}

}  // namespace topk_detail
}  // namespace gpuprims
