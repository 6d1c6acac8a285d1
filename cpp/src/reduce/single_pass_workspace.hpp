#pragma once
// Workspace of the single-pass kernels (vectorized, bulk_copy, column_tiles): per-block partials in
// the stream's own region (stream_partials) or, when that is not available, stream scratch, and one
// completion ticket per output group, zero at launch. Tickets come from the
// stream's persistent counters (no memset per launch); under graph capture they are scratch memory
// zeroed by a memset node inside the graph.
#include <cstddef>
#include <optional>

#include "gpuprims/core/driver_kernel.hpp"
#include "gpuprims/core/stream.hpp"
#include "gpuprims/reduce/reduce_common.cuh"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {

// Per-block partials: the stream's own region (no pool allocation and free per call: 0.2-0.4 % of a
// 1 GiB sum in bench/tune/reduce_vectorized_tune.cu, "persistent partials"), else stream scratch
// (graph capture, or more than stream_partials holds). Alone for a kernel that hands its partials
// to a second launch (window); with the tickets in SinglePassWorkspace. `held`: a.stream's
// StreamStateLock, which the caller keeps until its last launch using the workspace.
template <class Acc>
Status partials_workspace(const ReduceLaunch& a, const StreamStateLock& held, size_t num_partials, StreamScratch& scratch,
                          Acc** partials) {
  void* stream_owned = nullptr;
  GPUPRIMS_TRY(stream_partials(a.device, held, sizeof(Acc) * num_partials, &stream_owned, "reduce"));
  if (stream_owned == nullptr) {
    GPUPRIMS_TRY(scratch.allocate(sizeof(Acc) * num_partials, a.device, a.stream, "reduce"));
    stream_owned = scratch.data();
  }
  *partials = static_cast<Acc*>(stream_owned);
  return Status::ok();
}

// The workspace of one single-pass launch with the stream's lock that guards it, both taken only
// where several blocks share an output (take): a launch with none (small inputs) takes no lock. The
// caller launches while the object lives; the lock is released before the scratch goes back to
// the pool (stream-ordered, after the launch).
template <class Acc>
struct SinglePassWorkspace {
  StreamScratch scratch;
  std::optional<StreamStateLock> held;
  Acc* partials = nullptr;
  unsigned int* tickets = nullptr;

  Status take(const ReduceLaunch& a, size_t num_partials, size_t num_tickets) {
    held.emplace(a.stream);
    GPUPRIMS_TRY(stream_counters(a.device, *held, num_tickets, &tickets, "reduce"));
    if (tickets != nullptr) return partials_workspace(a, *held, num_partials, scratch, &partials);
    // Graph capture: partials and tickets in one scratch block, the tickets zeroed inside the graph.
    void* data = nullptr;
    GPUPRIMS_TRY(scratch_and_counters(a.device, *held, sizeof(Acc) * num_partials, num_tickets, &scratch, &data,
                                      &tickets, "reduce"));
    partials = static_cast<Acc*>(data);
    return Status::ok();
  }
};

// Launches a single-pass row kernel (vectorized, bulk_copy: signature (ReduceKernelParams<T>, Acc*
// partials, unsigned* tickets)) with blocks_per_row blocks for each row, taking the workspace when
// more than one block shares a row. Through the driver (DriverKernel): the triple-chevron form adds
// two runtime calls per launch and cudaLaunchKernel 0.2-0.4 us over cuLaunchKernel, which shows in
// the host cost of small reductions.
template <class T, class Acc>
Status launch_single_pass(const ReduceLaunch& a, const DriverKernel& kernel, int threads, int64_t blocks_per_row) {
  const int64_t rows = a.layout.num_rows;
  const dim3 grid(static_cast<unsigned>(blocks_per_row), static_cast<unsigned>(rows < 65535 ? rows : 65535));
  ReduceKernelParams<T> p{static_cast<const T*>(a.in), a.layout, a.out, a.out_dtype};
  {
    SinglePassWorkspace<Acc> ws;
    if (blocks_per_row > 1) GPUPRIMS_TRY(ws.take(a, rows * blocks_per_row, rows));
    void* args[] = {&p, &ws.partials, &ws.tickets};
    GPUPRIMS_TRY(kernel.launch(grid, dim3(threads), 0, a.stream, args, "reduce"));
  }
  return check_launch("reduce", a.stream);
}

}  // namespace reduce_detail
}  // namespace gpuprims
