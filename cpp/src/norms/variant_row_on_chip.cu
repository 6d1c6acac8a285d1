// row_on_chip: the row read once into registers, reduced there, written once.
#include "row_on_chip_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_row_on_chip(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return row_kind(l.op) == RowKind::kSoftmax ? run_row_on_chip<T, RowKind::kSoftmax, false>(l)
                                                 : run_row_on_chip<T, RowKind::kNorm, false>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
