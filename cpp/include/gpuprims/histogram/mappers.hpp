#pragma once
// Sample -> bin functions, one per input kind. Each returns the bin in [0, bins) or -1 for a sample
// that is not counted (numpy ignores it for histogram; bincount reports it as out of range).
//   ByteMapper: 8-bit inputs (uint8, int8, bool) for both ops. The 256 possible values are binned
//     once per block into a shared-memory table (with the exact numpy arithmetic), or, when the
//     host found the table to be a window of consecutive values in consecutive bins (bincount,
//     integer-aligned ranges such as uint8 with 256 bins), computed with no table at all.
//   EdgeMapper<T>: numpy.histogram's arithmetic on wider integers and floats (bin_math.hpp).
//   IndexMapper<T>: bincount on wider integers.
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/histogram/bin_math.hpp"

namespace gpuprims {
namespace histogram_detail {

struct ByteMapper {
  using Sample = uint8_t;
  static constexpr bool kUsesTable = true;
  BinParams params;      // histogram: how the table is built
  int32_t length;        // bincount: number of bins (params unused); 0 for histogram
  bool is_bincount;
  bool is_signed;        // the byte holds an int8
  // The table as a window, when it is one: with the byte biased to an unsigned order
  // (u = byte ^ window_xor: int8 -128..127 becomes 0..255), the counted bytes are
  // window_lo <= u <= window_lo + window_span, and bin = u - window_lo + window_base. Three integer
  // instructions per sample, no table (an empty window has window_lo = 256).
  bool window;
  uint32_t window_xor, window_lo, window_span;
  int32_t window_base;

  GPUPRIMS_HD int32_t value_of(uint8_t b) const { return is_signed ? int32_t(int8_t(b)) : int32_t(b); }

  // The bin of the value held by byte b, computed the slow, exact way (table construction).
  GPUPRIMS_HD int32_t exact_bin(uint8_t b) const {
    const int32_t v = value_of(b);
    if (is_bincount) return v >= 0 && v < length ? v : -1;
    return bin_of_sample<EdgeKind::kF64>(params, v);
  }
  GPUPRIMS_HD int32_t windowed(uint8_t b) const {
    const uint32_t t = (uint32_t(b) ^ window_xor) - window_lo;
    return t <= window_span ? static_cast<int32_t>(t) + window_base : -1;
  }
};

template <class T>
struct EdgeMapper {
  using Sample = T;
  static constexpr bool kUsesTable = false;
  BinParams params;
  GPUPRIMS_HD int32_t operator()(T v) const { return bin_of_sample<edge_kind_of<T>::value>(params, v); }
};

template <class T>
struct IndexMapper {
  using Sample = T;
  static constexpr bool kUsesTable = false;
  int32_t length;
  GPUPRIMS_HD int32_t operator()(T v) const {
    if constexpr (std::is_signed<T>::value) {
      if (v < T(0)) return -1;
    }
    return static_cast<int64_t>(v) < static_cast<int64_t>(length) ? static_cast<int32_t>(v) : -1;
  }
};

}  // namespace histogram_detail
}  // namespace gpuprims
