#pragma once
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/scan/scan_layout.hpp"

namespace gpuprims {
namespace scan_detail {

// in and out have the same shape; `axis` is in range. Fails only for more than kMaxDims other
// dimensions that cannot be merged.
Status make_scan_layout(const TensorView& in, const TensorView& out, int axis, ScanLayout* layout);

}  // namespace scan_detail
}  // namespace gpuprims
