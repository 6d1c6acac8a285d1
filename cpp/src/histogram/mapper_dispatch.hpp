#pragma once
// Calls f(mapper) with the sample -> bin function of a launch: the single dtype switch of the
// family. 15 mappers: one for every 8-bit input (uint8, int8, bool), numpy's edge arithmetic for
// the 9 wider histogram inputs, bincount's index test for the 5 wider integer inputs. Every
// counting variant is instantiated once per mapper.
#include <cstdint>
#include <type_traits>

#include "gpuprims/histogram/mappers.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace histogram_detail {

// The 8-bit mapper; when its 256-entry table is a shifted window (value - offset inside
// [lo_value, hi_value], -1 outside) it is marked so and the kernels skip the table.
inline ByteMapper make_byte_mapper(const HistogramLaunch& l) {
  ByteMapper m{};
  m.params = l.params;
  m.length = l.bins;
  m.is_bincount = l.is_bincount;
  m.is_signed = l.x_dtype == DType::kInt8;
  m.window = false;
  int32_t lo = 0, hi = -1;
  bool found = false, window = true;
  for (int b = 0; b < 256; ++b) {  // in increasing value order: -128..127 or 0..255
    const uint8_t byte = static_cast<uint8_t>(m.is_signed ? b - 128 : b);
    const int32_t bin = m.exact_bin(byte), v = m.value_of(byte);
    if (bin < 0) continue;
    if (!found) {
      found = true;
      lo = v;
      m.offset = v - bin;
    } else if (v != hi + 1 || v - bin != m.offset) {
      window = false;
    }
    hi = v;
  }
  if (window) {
    m.window = true;
    m.lo_value = found ? lo : 1;
    m.hi_value = found ? hi : 0;  // empty window when nothing is counted
    if (!found) m.offset = 0;
  }
  return m;
}

template <class F>
Status visit_mapper(const HistogramLaunch& l, F&& f) {
  switch (l.x_dtype) {
    case DType::kBool: case DType::kUInt8: case DType::kInt8: return f(make_byte_mapper(l));
    default: break;
  }
  return visit_dtype(l.x_dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value || sizeof(T) == 1 || std::is_same<T, uint64_t>::value) {
      return type_error(std::string(l.op) + ": unsupported dtype");  // refused by dispatch before this
    } else if constexpr (std::is_integral<T>::value) {
      if (l.is_bincount) return f(IndexMapper<T>{l.bins});
      return f(EdgeMapper<T>{l.params});
    } else {
      return f(EdgeMapper<T>{l.params});
    }
  });
}

}  // namespace histogram_detail
}  // namespace gpuprims
