#pragma once
// bias_dropout_add's hand-off from dispatch to the kernel or the CPU reference.
#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/norms/dropout_params.hpp"

namespace gpuprims {
namespace norms {

struct DropoutLaunch {
  DropoutParams params;
  DType dtype;
  int device;  // -1 for the CPU reference
  cudaStream_t stream;
};

Status bias_dropout_add_device(const DropoutLaunch& launch);  // dropout_device.cu
Status bias_dropout_add_host(const DropoutLaunch& launch);    // dropout_host.cpp

}  // namespace norms
}  // namespace gpuprims
