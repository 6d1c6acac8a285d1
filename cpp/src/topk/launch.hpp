#pragma once
// What dispatch hands the top-k kernels: one validated batch of rows on one GPU.
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include "gpuprims/core/dtype.hpp"
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/topk/topk_params.hpp"

namespace gpuprims {
namespace topk_detail {

struct TopkLaunch {
  TopkParams params;
  DType dtype;
  int device;
  cudaStream_t stream;
};

// layout.cpp: the rows of x, values and indices along `axis` (in [0, ndim)), the other dimensions
// merged where all three allow. ValueError when more than kMaxDims remain.
Status make_rows(const TensorView& x, const TensorView& values, const TensorView& indices, int axis, int64_t k,
                 TopkRows* rows);

// visit_dtype over the numeric dtypes: f(type_tag<T>{}); bool (refused by dispatch) a TypeError.
template <class F>
Status visit_numeric_dtype(DType dtype, F&& f) {
  return visit_dtype(dtype, [&](auto tag) -> Status {
    if constexpr (std::is_same<typename decltype(tag)::type, bool>::value) {
      return type_error("topk: argument 'x': expected a numeric dtype, got bool");
    } else {
      return f(tag);
    }
  });
}

// One entry per variant (variant_<name>.cu); each writes the k results of every row, unsorted
// (select_sort, in sort.cu: sorted, by ranking the whole row).
Status select_sort(const TopkLaunch& l);
Status select_block_per_row(const TopkLaunch& l);
Status select_split_row(const TopkLaunch& l);
// sort.cu: each row's k results into rank order (k >= 2).
Status sort_results(const TopkLaunch& l);
// host.cpp: the CPU reference, on the rows as laid out.
Status topk_host(const TopkParams& p, DType dtype, bool sorted);

}  // namespace topk_detail
}  // namespace gpuprims
