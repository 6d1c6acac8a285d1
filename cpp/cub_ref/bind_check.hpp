#pragma once
// Turns a CUDA error from a CUB call into a Python RuntimeError naming the call.
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace gpuprims {
namespace cub_ref {

inline void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("cub_ref.") + what + ": " + cudaGetErrorString(err));
}

}  // namespace cub_ref
}  // namespace gpuprims
