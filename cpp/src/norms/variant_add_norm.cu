// add_layer_norm / add_rms_norm fused: the row_on_chip kernels with the residual-add prologue
// (sum = x + residual rounded to the dtype, written once, then normalized from registers).
// Instantiated for the norm kind only.
#include "row_on_chip_launch.cuh"

namespace gpuprims {
namespace norms {

Status norms_add_norm(const NormLaunch& l) {
  return visit_float_dtype(l.dtype, [&](auto tag) {
    return run_row_on_chip<typename decltype(tag)::type, RowKind::kNorm, true>(l);
  });
}

}  // namespace norms
}  // namespace gpuprims
