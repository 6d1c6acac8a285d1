#pragma once
// Public C++ entry point of the transpose family: numpy.transpose(x, axes) written out, i.e. a copy
// of x with its axes permuted into `out` (any strides), on CPU views (the reference) and CUDA views.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The optimization ladder (docs/transpose.md). Every variant computes every permutation, dtype and
// stride pattern; they differ only in how the two fast axes are walked.
enum class TransposeAlgorithm {
  kAuto,
  kNaive,       // a thread per output element: writes coalesced, reads strided
  kSmemTiled,   // 32x32 tiles staged in shared memory: both sides coalesced, bank conflicts on the way out
  kSmemPadded,  // smem_tiled with one padding column: conflict-free shared-memory reads
  kPacked,      // tiles moved as words on both sides, each output word gathered from the tile
  kRegisterBlocks,  // packed with kPack x kPack blocks transposed in registers: whole-word shared memory
};

struct TransposeVariantInfo {
  TransposeAlgorithm algorithm;
  const char* name;
  const char* description;
  bool deterministic;  // a copy: always true
};

const std::vector<TransposeVariantInfo>& transpose_variants();
Status parse_transpose_algorithm(const std::string& name, TransposeAlgorithm* out);

// out[i_0, ..., i_{n-1}] = x[j] with j[axes[k]] = i_k: numpy.transpose(x, axes) copied into `out`.
// axes: a permutation of 0 .. x.ndim-1 (negative entries count from the end). out: x's dtype and
// device, shape x.shape[axes[k]], writable, distinct elements, sharing no memory with x; any
// strides on either side (negative and zero strides in x too). Never synchronizes the host and
// allocates nothing.
Status transpose(const TensorView& x, const std::vector<int64_t>& axes, const TensorView& out,
                 TransposeAlgorithm algorithm, cudaStream_t stream);

}  // namespace gpuprims
