// The CPU reference of the reduce family: the same operators, accumulators and output conversion
// as the kernels (reduce_ops.hpp), with pairwise summation so float sums stay accurate (error grows
// with log n, like numpy's). No speed promise.
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {
namespace {

constexpr int64_t kPairwiseBlock = 128;

template <class T, class Acc, class Op>
Acc reduce_range(const T* row, const ReduceLayout& layout, int64_t begin, int64_t end) {
  const Op op;
  if (end - begin <= kPairwiseBlock) {
    Acc acc = Op::template identity<Acc>();
    for (int64_t i = begin; i < end; ++i) acc = op(acc, cast_value<Acc>(row[layout.elem_offset(i)]));
    return acc;
  }
  const int64_t mid = begin + (end - begin) / 2;
  return op(reduce_range<T, Acc, Op>(row, layout, begin, mid), reduce_range<T, Acc, Op>(row, layout, mid, end));
}

template <class T, class Acc, class Op>
struct HostRunner {
  static Status run(const ReduceLaunch& a) {
    const T* in = static_cast<const T*>(a.in);
    for (int64_t row = 0; row < a.layout.num_rows; ++row) {
      const Acc v = reduce_range<T, Acc, Op>(in + a.layout.in_row_offset(row), a.layout, 0, a.layout.row_len);
      store_as(a.out, a.layout.out_offset(row), a.out_dtype, v);
    }
    return Status::ok();
  }
};

}  // namespace

Status reduce_host(const ReduceLaunch& launch) { return dispatch_reduce_types<HostRunner>(launch); }

}  // namespace reduce_detail
}  // namespace gpuprims
