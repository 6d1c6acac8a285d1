#pragma once
// Workspace of the single-pass kernels (vectorized, bulk_copy, column_tiles): per-block partials in
// the stream's own region (stream_partials) or, when that is not available, stream scratch, and one
// completion ticket per output group, zero at launch. Tickets come from the
// stream's persistent counters (no memset per launch); under graph capture they are scratch memory
// zeroed by a memset node inside the graph.
#include <cstddef>

#include "gpuprims/core/stream.hpp"
#include "launch.hpp"

namespace gpuprims {
namespace reduce_detail {

template <class Acc>
Status single_pass_workspace(const ReduceLaunch& a, size_t num_partials, size_t num_tickets, StreamScratch& scratch,
                             Acc** partials, unsigned int** tickets) {
  GPUPRIMS_TRY(stream_counters(a.device, a.stream, num_tickets, tickets, "reduce"));
  const size_t partial_bytes = sizeof(Acc) * num_partials;
  void* stream_owned = nullptr;
  if (*tickets != nullptr) GPUPRIMS_TRY(stream_partials(a.device, a.stream, partial_bytes, &stream_owned, "reduce"));
  if (stream_owned != nullptr) {
    // The stream's own region: no pool allocation and free per call (measured 0.2-0.4 % of a 1 GiB
    // sum in bench/tune/reduce_vectorized_tune.cu, "persistent partials").
    *partials = static_cast<Acc*>(stream_owned);
    return Status::ok();
  }
  const size_t ticket_bytes = *tickets == nullptr ? sizeof(unsigned int) * num_tickets : 0;
  GPUPRIMS_TRY(scratch.allocate(partial_bytes + ticket_bytes, a.device, a.stream, "reduce"));
  *partials = static_cast<Acc*>(scratch.data());
  if (*tickets == nullptr) {
    *tickets = reinterpret_cast<unsigned int*>(static_cast<char*>(scratch.data()) + partial_bytes);
    GPUPRIMS_CUDA_CHECK("reduce", cudaMemsetAsync(*tickets, 0, ticket_bytes, a.stream));
  }
  return Status::ok();
}

}  // namespace reduce_detail
}  // namespace gpuprims
