#pragma once
// Public C++ entry points of the gemm family: matmul (C = A @ B, batched) and gemv (y = A @ x).
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

// The matmul optimization ladder (docs/gemm.md tells the story of each step). Every variant
// computes every shape and every stride pattern; the SIMT steps from blocktile_1d on are float32
// only, wmma takes float16 and bfloat16, and float32 only with allow_tf32, mma_pipelined takes
// float16 and bfloat16 (dispatch raises TypeError for other combinations).
enum class GemmAlgorithm {
  kAuto,
  kNaive,        // a thread per output, threadIdx.x walking rows (uncoalesced on row-major data)
  kCoalesced,    // a thread per output, threadIdx.x walking columns: coalesced B and C accesses
  kSmemTiled,    // 32x32 tiles of A and B staged in shared memory, a thread per output
  kBlocktile1d,  // 64x64 block tile, each thread 8 outputs of a column (register reuse of B)
  kBlocktile2d,  // 128x128 block tile, each thread an 8x8 output block (outer products in registers)
  kVectorized,   // blocktile_2d + 16-byte global loads, transposed A tile, float4 shared reads/writes
  kWarptile,     // vectorized + warp-level tiling + double-buffered shared memory
  kWmma,         // tensor cores through nvcuda::wmma: float16/bfloat16, float32 as TF32 when allowed
  kMmaPipelined, // mma.sync m16n8k16 + ldmatrix + 3-stage cp.async pipeline, swizzled smem: float16/bfloat16
};

enum class GemvAlgorithm {
  kAuto,
  kNaive,       // a thread per row
  kWarpPerRow,  // a warp per row, shuffle reduction
  kVectorized,  // a warp per row, 16-byte loads of A and x, several loads in flight per lane
};

struct GemmVariantInfo {
  int algorithm;  // a GemmAlgorithm or GemvAlgorithm value
  const char* name;
  const char* description;
  bool deterministic;  // run-to-run bitwise identical
};

const std::vector<GemmVariantInfo>& matmul_variants();
const std::vector<GemmVariantInfo>& gemv_variants();
Status parse_matmul_algorithm(const std::string& name, GemmAlgorithm* out);
Status parse_gemv_algorithm(const std::string& name, GemvAlgorithm* out);

struct MatmulOptions {
  GemmAlgorithm algorithm = GemmAlgorithm::kAuto;
  // Lets float32 products run on TF32 tensor cores (inputs rounded to 10 mantissa bits): wmma, and
  // "auto" picks wmma for float32 when set. The SIMT variants always compute in full float32.
  bool allow_tf32 = false;
};

// c = a @ b. a is (M, K) or (batch, M, K), b is (K, N) or (batch, K, N), c is (M, N) or
// (batch, M, N); a 2-D operand (or a batch dimension of 1) is broadcast over the batch. One
// floating dtype for all three; fp16/bf16/fp32 accumulate in float32, float64 in float64. Any
// strides (negative and zero too), read in place. CPU views run the CPU reference; CUDA views run
// on their own device, ordered on `stream`. Never synchronizes the host, allocates nothing.
Status matmul(const TensorView& a, const TensorView& b, const TensorView& c, const MatmulOptions& options,
              cudaStream_t stream);

// y = a @ x: a (M, K), x (K,), y (M,), any strides; accumulation as matmul.
Status gemv(const TensorView& a, const TensorView& x, const TensorView& y, GemvAlgorithm algorithm,
            cudaStream_t stream);

}  // namespace gpuprims
