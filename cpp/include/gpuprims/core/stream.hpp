#pragma once
// Device selection and stream-ordered scratch memory for host entry points.
#include <cstddef>

#include <cuda_runtime_api.h>

#include "gpuprims/core/error.hpp"

namespace gpuprims {

// Makes `device` current for the scope and restores the previous device after, so an array on a GPU
// other than the current one runs on its own device.
class DeviceGuard {
 public:
  DeviceGuard() = default;
  Status enter(int device, const char* op);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// Scratch memory ordered on one stream: taken from a gpuprims-owned memory pool of the device with
// cudaMallocAsync and given back with cudaFreeAsync on the same stream when the scope ends. The pool
// keeps freed memory (release threshold = max), so steady-state calls cost no real allocation,
// never synchronize, and can be captured into CUDA graphs.
class StreamScratch {
 public:
  StreamScratch() = default;
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  Status allocate(std::size_t bytes, int device, cudaStream_t stream, const char* op);
  void* data() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// Holds off the launches of other host threads that use the same stream's persistent state (the
// counters and partials below) from the moment an op takes that state until its last launch is
// enqueued. Kernels on one stream run in order, but host threads sharing a stream (torch's and
// CuPy's default stream is one stream in every thread, and the bindings release the GIL) interleave
// their launch sequences on the host: another thread's kernel could land between two launches that
// hand the state from one to the next (the window reduce's partials, segmented_reduce's list head),
// or grow the state under a pointer not yet launched with. Striped by the stream handle (the
// legacy default stream's two handles, 0 and cudaStreamLegacy, as one): streams that share a stripe
// wait only for each other's enqueue, never for device work. The functions below take the stream
// through its lock, so its state is reached only while the lock is held; the op keeps it until its
// last launch that uses what they returned. One per op, never nested.
class StreamStateLock {
 public:
  explicit StreamStateLock(cudaStream_t stream);
  ~StreamStateLock();
  StreamStateLock(const StreamStateLock&) = delete;
  StreamStateLock& operator=(const StreamStateLock&) = delete;
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  unsigned stripe_;
};

// Completion counters for single-pass kernels ("the last block to finish combines"), without a
// memset per launch. *counters points at `count` unsigned ints owned by (device, stream), zero
// whenever no kernel on that stream is running, because every kernel that takes a counter returns
// it to zero before it exits. Sharing per stream is safe: kernels on one stream run one after
// another, each op enqueues under its StreamStateLock (`held`, whose stream this is), and a
// destroyed stream's resources (its handle) outlive the work still queued on it.
// While the stream is being captured into a graph this returns *counters = nullptr: the caller
// then takes scratch memory and zeroes it inside the graph (a replay may run on another stream).
Status stream_counters(int device, const StreamStateLock& held, size_t count, unsigned int** counters, const char* op);

// `bytes` of stream scratch and `count` zeroed counters for one launch of a single-pass kernel:
// the counters are the stream's own (stream_counters) or, while the stream is being captured, a
// tail of the same scratch allocation zeroed by a memset node inside the graph. *data points at
// the `bytes`; the counters are 16-byte aligned either way.
Status scratch_and_counters(int device, const StreamStateLock& held, size_t bytes, size_t count, StreamScratch* scratch,
                            void** data, unsigned int** counters, const char* op);

// Per-block partial results of single-pass kernels, in a region owned by (device, stream) like the
// counters: every such kernel writes all the partials it later reads (or its op's next launch does,
// under the op's StreamStateLock), and kernels on one stream run one after another, so they can
// share it without a per-call allocation. *partials = nullptr while
// the stream is being captured or for requests over 1 MiB: the caller then takes scratch memory.
Status stream_partials(int device, const StreamStateLock& held, size_t bytes, void** partials, const char* op);

// Multiprocessor count of a device, cached after the first query (no CUDA call at import).
Status multiprocessor_count(int device, int* count);
// Compute capability major of a device (9 for Hopper), cached likewise.
Status compute_capability_major(int device, int* major);
// Bytes of shared memory a block of the device may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin:
// 227 KiB on Hopper, 163 KiB on the A100, 99 KiB on sm_86/89), cached likewise.
Status shared_memory_per_block_optin(int device, int* bytes);
// Whether an SM of the device holds `bytes` of shared memory for its resident blocks, judged by the
// per-block opt-in limit (an SM's capacity less 1 KiB from sm_80 to sm_120); false if the query fails.
bool sm_holds_shared_memory(int device, int bytes);
// Peak DRAM bandwidth of a device per multiprocessor in GB/s (2 x memory clock x bus width / SMs:
// about 25 on an H100 SXM, 37 on an H200), cached likewise; 0 where the driver does not report the
// memory clock or bus width.
Status dram_gbps_per_sm(int device, double* gbps);
// Whether each multiprocessor of the device has H200-class DRAM bandwidth to cover (30 GB/s per SM
// and more: between the H100's 25 and the H200's 37), where some kernels keep more bytes in flight
// than on an H100 (norms' row_lag). False where the driver reports no bandwidth.
bool wide_dram_per_sm(int device);

}  // namespace gpuprims
