#pragma once
// How column_rows_kernel (column_rows.cuh) cuts rows that lie side by side into blocks. Plain C++:
// the host's layout check (cpp/src/norms/layout.cpp) fills it.
#include <cstdint>

#include "gpuprims/core/fast_divmod.hpp"

namespace gpuprims {
namespace norms {

constexpr int kColumnLanes = 32;  // adjacent rows per block, one a lane

// `width` adjacent rows (the innermost other dimension) per plane (every other dimension), cut
// into groups of kColumnLanes; a block per group, grid-stride.
struct ColumnShape {
  int64_t width = 0;
  int64_t groups_per_plane = 0;
  FastDivmod64 plane_of;  // by groups_per_plane: a group's plane
  int64_t groups = 0;
};

}  // namespace norms
}  // namespace gpuprims
