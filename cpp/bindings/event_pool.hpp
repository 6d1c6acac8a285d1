#pragma once
// cudaEvent_t objects (timing disabled) recycled per device. The array layer records an event per
// held import per call and one per export of a gpuprims-owned result; creating and destroying one
// cost 4.2 us against 0.9 us for recording one (H100, session 33, through CuPy's runtime calls), so
// they come from here instead. An event may go back while a record of it is still pending: its
// next owner records it before waiting on it or querying it, and a record only replaces what later
// waits and queries see (a cudaStreamWaitEvent already enqueued keeps the record it was given).
#include <cuda_runtime_api.h>

namespace gpuprims {

// An event of `device`, which must be the current device: a recycled one, or a new one.
cudaError_t acquire_event(int device, cudaEvent_t* event);

// Gives `event` (acquired for `device`) back; beyond a few hundred idle ones per device it is
// destroyed.
void release_event(int device, cudaEvent_t event);

}  // namespace gpuprims
