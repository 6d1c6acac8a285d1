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

// The 8-bit mapper; when its 256-entry table is a window (consecutive values, bins increasing by
// one) it is marked so and the kernels skip the table.
inline ByteMapper make_byte_mapper(const HistogramLaunch& l) {
  ByteMapper m{};
  m.params = l.params;
  m.length = l.bins;
  m.is_bincount = l.is_bincount;
  m.is_signed = l.x_dtype == DType::kInt8;
  m.window_xor = m.is_signed ? 0x80u : 0u;
  // u = byte ^ window_xor runs over the values in increasing order.
  int32_t first_u = -1, last_u = -1, first_bin = 0;
  bool window = true;
  for (uint32_t u = 0; u < 256; ++u) {
    const int32_t bin = m.exact_bin(static_cast<uint8_t>(u ^ m.window_xor));
    if (bin < 0) continue;
    if (first_u < 0) {
      first_u = int32_t(u);
      first_bin = bin;
    } else if (int32_t(u) != last_u + 1 || bin - first_bin != int32_t(u) - first_u) {
      window = false;
    }
    last_u = int32_t(u);
  }
  m.window = window;
  m.window_lo = first_u < 0 ? 256u : uint32_t(first_u);
  m.window_span = first_u < 0 ? 0u : uint32_t(last_u - first_u);
  m.window_base = first_bin;
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
    if constexpr (std::is_same<T, bool>::value || sizeof(T) == 1) {
      return type_error(std::string(l.op) + ": unsupported dtype");  // the byte mapper's, above
    } else if constexpr (std::is_integral<T>::value && !std::is_same<T, uint64_t>::value) {
      if (l.is_bincount) return f(IndexMapper<T>{l.bins});
      return f(EdgeMapper<T>{l.params});
    } else {  // floats, and uint64 (histogram only: dispatch refuses bincount of uint64 first)
      return f(EdgeMapper<T>{l.params});
    }
  });
}

}  // namespace histogram_detail
}  // namespace gpuprims
