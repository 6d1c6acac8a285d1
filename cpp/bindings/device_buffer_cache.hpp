#pragma once
// Memory of gpuprims-owned results (DeviceArray: results handed to JAX, cuda.core and unknown
// producers), reused instead of a cudaMalloc and a cudaFree per result: for 64 MiB those cost 63-67
// and about 55 us (H100, session 33), and cudaFree waits for the whole device, so each dropped
// JAX result used to block the host until the GPU drained.
//
// A dropped buffer may still be read by its consumer's kernels on streams gpuprims cannot see
// (XLA calls a foreign buffer's deleter once the last reference goes, while its compute stream may
// still read it), so a buffer is reused only after a device synchronization that began after it was
// dropped: dropped buffers wait in a list, and once the list holds kMaxRetired buffers or
// kMaxRetiredBytes, one cudaDeviceSynchronize makes them all reusable. A new result takes a reusable
// buffer of its size class, else cudaMalloc (on out-of-memory: every settled buffer is freed and the
// cudaMalloc retried); reusable buffers beyond kMaxCachedBytes are freed, the oldest first.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace gpuprims {

// At least `bytes` on `device`, the current device; *ptr is null on failure.
cudaError_t take_buffer(int device, std::size_t bytes, void** ptr, std::size_t* capacity);

// Gives back a buffer from take_buffer (`capacity` as it said) that a consumer may still read.
void retire_buffer(int device, void* ptr, std::size_t capacity);

// Synchronizes every device that holds buffers and frees them all (at exit; after out-of-memory).
void free_buffers();

}  // namespace gpuprims
