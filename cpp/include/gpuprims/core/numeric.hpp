#pragma once
// Value conversions shared by kernels and the CPU reference, so both round the same way.
// fp16/bf16 go through float (rounded to odd from double or an integer, so rounded once overall);
// float -> integer saturates and maps NaN to 0 (the GPU cvt.rzi.sat behaviour, made explicit so the
// host agrees).
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/dtype.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace gpuprims {

GPUPRIMS_HD float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f; std::memcpy(&f, &u, 4); return f;
#endif
}
GPUPRIMS_HD uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u; std::memcpy(&u, &f, 4); return u;
#endif
}

GPUPRIMS_HD float to_float(half_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#else
  const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1fu, man = h.bits & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    // subnormal: value = man * 2^-24
    float v = float(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
#endif
}

GPUPRIMS_HD half_t to_half(float f) {
#if defined(__CUDA_ARCH__)
  return half_t{__half_as_ushort(__float2half_rn(f))};
#else
  const uint32_t u = float_to_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return half_t{uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  if (abs >= 0x477ff000u) return half_t{uint16_t(sign | 0x7c00u)};  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // result is subnormal or zero: round(value * 2^24) to nearest even
    const float v = bits_to_float(abs) * 16777216.0f;
    float r = float(int32_t(v));
    const float frac = v - r;
    if (frac > 0.5f || (frac == 0.5f && (int32_t(r) & 1))) r += 1.0f;
    return half_t{uint16_t(sign | uint16_t(r))};
  }
  uint32_t mant = abs + 0xc8000000u;  // rebias exponent: (e - 127 + 15) << 23
  mant += 0xfffu + ((mant >> 13) & 1u);  // round to nearest even on the 13 dropped bits
  return half_t{uint16_t(sign | (mant >> 13))};
#endif
}

GPUPRIMS_HD float to_float(bfloat16_t b) { return bits_to_float(uint32_t(b.bits) << 16); }

GPUPRIMS_HD bfloat16_t to_bfloat16(float f) {
  const uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16_t{uint16_t((u >> 16) | 0x40u)};  // quiet NaN
  return bfloat16_t{uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

template <class T> struct is_half_like : std::integral_constant<bool,
    std::is_same<T, half_t>::value || std::is_same<T, bfloat16_t>::value> {};

// v rounded to a float "to odd": v itself when it is a float, else whichever float neighbour of v
// has its last bit set. Rounding that float to fp16 / bf16 gives v correctly rounded (24 bits hold
// the 11 or 8 of the target and two more), where float(v), rounded to nearest, followed by a second
// rounding can land one unit off at the target's ties (numpy rounds double -> float16 once).
GPUPRIMS_HD float to_float_round_odd(double v) {
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || !(f - f == 0.0f)) return f;  // exact, inf or NaN
  uint32_t u = float_to_bits(f);
  if ((u & 1u) == 0) u = (v < 0 ? -v : v) > (f < 0 ? -double(f) : double(f)) ? u + 1 : u - 1;
  return bits_to_float(u);
}

// cast_value<To>(from): numpy-like value conversion between any two supported types.
template <class To, class From>
GPUPRIMS_HD To cast_value(From v) {
  if constexpr (is_half_like<From>::value) {
    return cast_value<To>(to_float(v));
  } else if constexpr (std::is_same<To, half_t>::value || std::is_same<To, bfloat16_t>::value) {
    // From float: one rounding. From double or an integer: through a float rounded to odd (an
    // integer is exact in double up to 2^53), so the result is rounded once, as numpy's.
    float f;
    if constexpr (std::is_same<From, float>::value) f = v;
    else f = to_float_round_odd(static_cast<double>(v));
    if constexpr (std::is_same<To, half_t>::value) return to_half(f);
    else return to_bfloat16(f);
  } else if constexpr (std::is_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (std::is_integral<To>::value && std::is_floating_point<From>::value) {
    if (!(v == v)) return To(0);
    if (v <= From(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= From(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Writes a value as `dtype` at element `offset` of `base`. Output dtypes are a runtime choice
// (dtype=), converted once per output element, so kernels are not instantiated per output type.
template <class From>
GPUPRIMS_HD void store_as(void* base, int64_t offset, DType dtype, From v) {
  visit_dtype(dtype, [&](auto tag) {
    using To = typename decltype(tag)::type;
    static_cast<To*>(base)[offset] = cast_value<To>(v);
  });
}

// Reads element `offset` of `base`, held as `dtype`, converted to To: inputs whose dtype is a
// runtime choice (a histogram's weights) read through one instantiation.
template <class To>
GPUPRIMS_HD To load_as(const void* base, int64_t offset, DType dtype) {
  return visit_dtype(dtype, [&](auto tag) {
    using From = typename decltype(tag)::type;
    return cast_value<To>(static_cast<const From*>(base)[offset]);
  });
}

}  // namespace gpuprims
