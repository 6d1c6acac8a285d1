#pragma once
// Scan operators: the reduce family's four operators (reduce_ops.hpp, shared so the CPU reference
// and every kernel compute the same function), with the two details a scan adds:
//  * accumulators are the result type (int32 scans wrap exactly like numpy's int32 cumsum), so
//    signed sums and products run in unsigned arithmetic, where the wrap is defined;
//  * the float sum's internal identity is -0.0, the true IEEE additive identity (-0.0 + x == x for
//    every x, including +0.0 and -0.0), so combining with an empty prefix never changes a value's
//    sign: cumsum([-0.0]) stays -0.0 like numpy. Outputs that *are* the identity (an exclusive
//    scan's first element) are written as the public identity +0.0.
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/dtype.hpp"
#include "gpuprims/reduce/reduce_ops.hpp"

namespace gpuprims {
namespace scan_detail {

using reduce_detail::Max;
using reduce_detail::Min;
using reduce_detail::Prod;
using reduce_detail::Sum;

template <class Op>
struct ScanOperator {
  template <class A> GPUPRIMS_HD A operator()(A a, A b) const {
    if constexpr (std::is_integral<A>::value && std::is_signed<A>::value && reduce_detail::is_sum_or_prod<Op>) {
      using U = std::make_unsigned_t<A>;
      return static_cast<A>(Op()(static_cast<U>(a), static_cast<U>(b)));
    } else {
      return Op()(a, b);
    }
  }
  // The identity combined into prefixes (see the file comment for -0.0).
  template <class A> GPUPRIMS_HD static A identity() {
    if constexpr (std::is_floating_point<A>::value && std::is_same<Op, Sum>::value) return A(-0.0);
    else return Op::template identity<A>();
  }
  // The identity as an output value (an exclusive scan's first element), in the accumulator A of
  // result type Out: an integer result's own identity (int8's 127 for min, not int32's), a float
  // one's in A (float16 results have no identity of their own here: +-inf and 0 are A's too).
  template <class Out, class A> GPUPRIMS_HD static A public_identity() {
    if constexpr (std::is_integral<Out>::value) return A(Op::template identity<Out>());
    else return Op::template identity<A>();
  }
  // The identity as written into a result and read back for a later combination (the
  // scan-then-propagate variants store each tile's local scan, then combine the tile's prefix into
  // it): an integer result's own (int32's lowest() stored as an int16 reads back as 0, so a tile's
  // first exclusive max became max(prefix, 0): the API fuzzer, session 46), the internal one for
  // floats (-0.0 for sums, which a stored +0.0 would not be).
  template <class Out, class A> GPUPRIMS_HD static A stored_identity() {
    if constexpr (std::is_integral<Out>::value) return public_identity<Out, A>();
    else return identity<A>();
  }
};

// The accumulator of a result type: float16/bfloat16 results accumulate in float32, 8- and 16-bit
// integers in 32-bit ones of the same signedness (the tile status packs 4- and 8-byte values; a
// narrow result's min/max is exact and its wrapping sum or product is the 32-bit one's low bits),
// every other result type in itself.
template <class Out>
using scan_acc_t = std::conditional_t<
    std::is_same<Out, half_t>::value || std::is_same<Out, bfloat16_t>::value, float,
    std::conditional_t<std::is_integral<Out>::value && (sizeof(Out) < 4),
                       std::conditional_t<std::is_signed<Out>::value, int32_t, uint32_t>, Out>>;

// Storage type of an input element: DLPack bools are bytes holding 0 or 1.
template <class T>
using storage_t = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;

}  // namespace scan_detail
}  // namespace gpuprims
