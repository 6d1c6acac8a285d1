// merge_dims and the launch parameters of the transpose kernels (plan.hpp).
#include "plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace gpuprims {
namespace transpose_detail {

MergedDims merge_dims(const TensorView& x, const int64_t* axes, const TensorView& out) {
  MergedDims m;
  for (int k = 0; k < out.ndim; ++k) {
    const int64_t e = out.shape[k];
    if (e == 0) m.empty = true;
    if (e == 1) continue;  // its strides never multiply a nonzero index
    const int64_t s = x.strides[axes[k]], d = out.strides[k];
    if (m.ndim > 0) {
      const int top = m.ndim - 1;
      // The outer neighbour steps over exactly this dimension on both sides: one dimension.
      if (m.src[top] == s * e && m.dst[top] == d * e) {
        m.extent[top] *= e;
        m.src[top] = s;
        m.dst[top] = d;
        continue;
      }
    }
    m.extent[m.ndim] = e;
    m.src[m.ndim] = s;
    m.dst[m.ndim] = d;
    ++m.ndim;
  }
  if (m.ndim == 0) {  // a single element (0-d, or every extent 1)
    m.extent[0] = 1;
    m.src[0] = m.dst[0] = 1;
    m.ndim = 1;
  }
  return m;
}

namespace {

// The dimension with the smallest |stride| in `strides`, `prefer` on a tie, else the innermost.
int densest(const MergedDims& m, const int64_t* strides, int prefer) {
  int best = m.ndim - 1;
  for (int k = m.ndim - 1; k >= 0; --k) {
    if (std::llabs(strides[k]) < std::llabs(strides[best])) best = k;
  }
  if (prefer >= 0 && std::llabs(strides[prefer]) == std::llabs(strides[best])) best = prefer;
  return best;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Fills a DimWalk with the merged dimensions other than `skip_a` and `skip_b` (-1: none), in order.
Status walk_of(const MergedDims& m, int skip_a, int skip_b, const char* op, DimWalk* walk) {
  walk->ndim = 0;
  for (int k = 0; k < m.ndim; ++k) {
    if (k == skip_a || k == skip_b) continue;
    if (walk->ndim == kMaxCopyDims) {
      return value_error(std::string(op) + ": argument 'axes': the copy keeps more than " +
                         std::to_string(kMaxCopyDims) + " dimensions that no neighbour merges with (" +
                         std::to_string(m.ndim) + "); at most " + std::to_string(kMaxCopyDims) + " are supported");
    }
    const int w = walk->ndim++;
    walk->extent[w] = m.extent[k];
    walk->divide[w] = FastDivmod64(m.extent[k]);
    walk->src_stride[w] = m.src[k];
    walk->dst_stride[w] = m.dst[k];
  }
  return Status::ok();
}

}  // namespace

FastAxes fast_axes(const MergedDims& m) {
  const int j = densest(m, m.dst, -1);
  return {densest(m, m.src, j), j};
}

Status elementwise_params(const MergedDims& m, const void* src, void* dst, const char* op, ElementwiseParams* p) {
  // The destination's fastest dimension last, so consecutive threads write consecutive elements.
  MergedDims ordered = m;
  const int j = fast_axes(m).j;
  for (int64_t* v : {ordered.extent, ordered.src, ordered.dst}) std::rotate(v + j, v + j + 1, v + m.ndim);
  GPUPRIMS_TRY(walk_of(ordered, -1, -1, op, &p->dims));
  p->src = src;
  p->dst = dst;
  p->count = 1;
  for (int k = 0; k < m.ndim; ++k) p->count *= m.extent[k];
  return Status::ok();
}

Status tile_params(const MergedDims& m, FastAxes axes, int64_t tile_i, int64_t tile_j, const void* src, void* dst,
                   const char* op, TileParams* p) {
  GPUPRIMS_TRY(walk_of(m, axes.i, axes.j, op, &p->batch));
  p->src = src;
  p->dst = dst;
  p->ni = m.extent[axes.i];
  p->nj = m.extent[axes.j];
  p->src_i = m.src[axes.i];
  p->src_j = m.src[axes.j];
  p->dst_i = m.dst[axes.i];
  p->dst_j = m.dst[axes.j];
  p->tiles_i = ceil_div(p->ni, tile_i);
  p->tiles_j = ceil_div(p->nj, tile_j);
  int64_t batch = 1;
  for (int k = 0; k < p->batch.ndim; ++k) batch *= p->batch.extent[k];
  p->tiles = p->tiles_i * p->tiles_j * batch;
  p->div_tiles_i = FastDivmod64(p->tiles_i);
  p->div_tile_rows = FastDivmod64(p->tiles_i * p->tiles_j);
  return Status::ok();
}

Status row_params(const MergedDims& m, int axis, size_t elem_size, const void* src, void* dst, const char* op,
                  RowParams* p) {
  GPUPRIMS_TRY(walk_of(m, axis, -1, op, &p->batch));
  p->src = src;
  p->dst = dst;
  p->row_len = m.extent[axis];
  p->src_step = m.src[axis];
  p->dst_step = m.dst[axis];
  p->rows = 1;
  for (int k = 0; k < p->batch.ndim; ++k) p->rows *= p->batch.extent[k];
  const int64_t lanes = 16 / static_cast<int64_t>(elem_size);
  bool vectors = p->src_step == 1 && p->dst_step == 1 && p->row_len % lanes == 0 &&
                 reinterpret_cast<uintptr_t>(src) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  for (int k = 0; vectors && k < p->batch.ndim; ++k) {
    vectors = p->batch.src_stride[k] % lanes == 0 && p->batch.dst_stride[k] % lanes == 0;
  }
  p->vectors = vectors;
  return Status::ok();
}

}  // namespace transpose_detail
}  // namespace gpuprims
