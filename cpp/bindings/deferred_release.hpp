#pragma once
// Imported arrays whose memory the producer could hand out again before the kernels that read it
// have run: the producer's allocator is ordered on streams other than the launch stream (JAX's own
// streams, created non-blocking, so not even the legacy default stream orders them; a torch or
// CuPy array read on a stream= other than its current one; DLPack producers we know nothing of).
// DLPack lets the producer reuse the memory once the consumer has called the deleter, so the
// deleter waits for an event recorded after the launches that read the import
// (ImportedArray::record_launches); it runs once that event has completed, found at a later
// deferral or pending_releases(), or at exit (flush_releases, registered by the Python layer after
// the producer's own exit hooks). Called with the GIL held: the deleters may run Python code.
#include <cstddef>
#include <functional>

#include <cuda_runtime_api.h>

namespace gpuprims {

// Keeps `release` until `event` (from event_pool.hpp, of `device`) has completed, then gives the
// event back and runs `release`. `stream` (the one the event was recorded on) only groups the
// pending releases, whose events complete in order there; it is never used, so it may be gone by
// now.
void defer_release(cudaStream_t stream, int device, cudaEvent_t event, std::function<void()> release);

// Runs the releases whose events have completed; returns how many still wait.
std::size_t pending_releases();

// Waits for every pending event and runs every release.
void flush_releases();

}  // namespace gpuprims
