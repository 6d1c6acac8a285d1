#include "gpuprims/core/stream.hpp"

#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuprims {
namespace {

std::mutex g_mutex;
std::vector<cudaMemPool_t> g_pools;  // per device, created on first use
struct DeviceInfo {
  int sm_count = 0;  // 0: not queried yet
  int cc_major = 0;
  int smem_optin = 0;  // bytes of shared memory a block may opt in to
  int memory_khz = 0;  // peak memory clock; 0 where not reported
  int bus_bits = 0;    // memory bus width; 0 where not reported
};
std::vector<DeviceInfo> g_device_info;  // per device

// A stream's counters, found by the stream's unique id (cudaStreamGetId), not its handle: the
// per-thread default stream's handle (cudaStreamPerThread) names another stream in every host
// thread, and a destroyed stream's handle can come back for a new stream while the old one's work
// is still queued. Two streams sharing counters would mix their tickets (wrong reductions, or a
// Stream-K block waiting for a flag that never comes).
struct CounterBlock {
  int device;
  unsigned long long stream_id;
  unsigned int* counters;
  size_t capacity;
  uint64_t last_use;
  void* partials = nullptr;  // stream_partials' region, allocated on first request
  size_t partial_bytes = 0;
};
std::vector<CounterBlock> g_counter_blocks;  // the most recently used streams' counters
uint64_t g_counter_clock = 0;
// Streams keep their counters while among the most recently used; an evicted stream's block is
// freed with cudaFree, which waits for the device (rare: only past this many live streams).
constexpr size_t kMaxCounterBlocks = 64;
constexpr size_t kMinCounters = 1024;
// stream_partials serves requests up to this size (a full reduction's few thousand partials are
// 16-32 KiB); larger ones take pool scratch per call.
constexpr size_t kMinStreamPartialBytes = 64 * 1024;
constexpr size_t kMaxStreamPartialBytes = 1024 * 1024;

Status device_pool(int device, cudaMemPool_t* pool, const char* op) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (static_cast<int>(g_pools.size()) <= device) g_pools.resize(device + 1, nullptr);
  if (g_pools[device] == nullptr) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t p = nullptr;
    GPUPRIMS_CUDA_CHECK(op, cudaMemPoolCreate(&p, &props));
    // Keep freed blocks for reuse instead of returning them to the driver at every synchronization.
    uint64_t threshold = UINT64_MAX;
    GPUPRIMS_CUDA_CHECK(op, cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &threshold));
    g_pools[device] = p;
  }
  *pool = g_pools[device];
  return Status::ok();
}

// StreamStateLock's stripes: 64, far more than the streams a process enqueues on at once, so
// unrelated streams rarely share one (and then only wait for each other's enqueue).
constexpr unsigned kStateStripeBits = 6;
std::mutex g_state_stripes[1u << kStateStripeBits];

unsigned state_stripe(cudaStream_t stream) {
  const uint64_t key = stream == cudaStreamLegacy ? 0 : reinterpret_cast<uintptr_t>(stream);
  return unsigned((key * 0x9E3779B97F4A7C15ull) >> (64 - kStateStripeBits));  // Fibonacci hashing
}

}  // namespace

StreamStateLock::StreamStateLock(cudaStream_t stream) : stream_(stream), stripe_(state_stripe(stream)) {
  g_state_stripes[stripe_].lock();
}

StreamStateLock::~StreamStateLock() { g_state_stripes[stripe_].unlock(); }

Status DeviceGuard::enter(int device, const char* op) {
  int current = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaGetDevice(&current));
  if (current != device) {
    GPUPRIMS_CUDA_CHECK(op, cudaSetDevice(device));
    previous_ = current;
  }
  return Status::ok();
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Status StreamScratch::allocate(std::size_t bytes, int device, cudaStream_t stream, const char* op) {
  cudaMemPool_t pool = nullptr;
  GPUPRIMS_TRY(device_pool(device, &pool, op));
  GPUPRIMS_CUDA_CHECK(op, cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream));
  stream_ = stream;
  return Status::ok();
}

StreamScratch::~StreamScratch() {
  // Stream-ordered: the memory returns to the pool only after the work queued before it finishes.
  if (ptr_ != nullptr) cudaFreeAsync(ptr_, stream_);
}

Status stream_counters(int device, const StreamStateLock& held, size_t count, unsigned int** counters, const char* op) {
  const cudaStream_t stream = held.stream();
  *counters = nullptr;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GPUPRIMS_CUDA_CHECK(op, cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) return Status::ok();

  unsigned long long stream_id = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaStreamGetId(stream, &stream_id));
  std::lock_guard<std::mutex> lock(g_mutex);
  CounterBlock* block = nullptr;
  for (CounterBlock& b : g_counter_blocks)
    if (b.device == device && b.stream_id == stream_id) block = &b;
  size_t capacity = count > kMinCounters ? count : kMinCounters;
  if (block != nullptr && block->capacity < count) {
    // Grow (rare: more rows than ever before on this stream). cudaFree waits for the device, so the
    // kernels still counting in the old block finish first.
    GPUPRIMS_CUDA_CHECK(op, cudaFree(block->counters));
    block->counters = nullptr;
    capacity = capacity > 2 * block->capacity ? capacity : 2 * block->capacity;
  }
  if (block == nullptr) {
    if (g_counter_blocks.size() >= kMaxCounterBlocks) {
      auto oldest = g_counter_blocks.begin();
      for (auto it = g_counter_blocks.begin(); it != g_counter_blocks.end(); ++it)
        if (it->last_use < oldest->last_use) oldest = it;
      GPUPRIMS_CUDA_CHECK(op, cudaFree(oldest->counters));
      if (oldest->partials != nullptr) GPUPRIMS_CUDA_CHECK(op, cudaFree(oldest->partials));
      g_counter_blocks.erase(oldest);
    }
    g_counter_blocks.push_back(CounterBlock{device, stream_id, nullptr, 0, 0});
    block = &g_counter_blocks.back();
  }
  if (block->counters == nullptr) {
    void* p = nullptr;
    Status st = cuda_status(cudaMalloc(&p, capacity * sizeof(unsigned int)), op, "cudaMalloc");
    if (st.is_ok()) st = cuda_status(cudaMemsetAsync(p, 0, capacity * sizeof(unsigned int), stream), op, "cudaMemsetAsync");
    if (!st.is_ok()) {
      if (p != nullptr) cudaFree(p);
      g_counter_blocks.erase(g_counter_blocks.begin() + (block - g_counter_blocks.data()));
      return st;
    }
    block->counters = static_cast<unsigned int*>(p);
    block->capacity = capacity;
  }
  block->last_use = ++g_counter_clock;
  *counters = block->counters;
  return Status::ok();
}

Status scratch_and_counters(int device, const StreamStateLock& held, size_t bytes, size_t count, StreamScratch* scratch,
                            void** data, unsigned int** counters, const char* op) {
  const cudaStream_t stream = held.stream();
  GPUPRIMS_TRY(stream_counters(device, held, count, counters, op));
  const size_t counters_at = (bytes + 15) / 16 * 16;
  const size_t counter_bytes = *counters == nullptr ? count * sizeof(unsigned int) : 0;
  GPUPRIMS_TRY(scratch->allocate(counters_at + counter_bytes, device, stream, op));
  *data = scratch->data();
  if (*counters == nullptr) {
    *counters = reinterpret_cast<unsigned int*>(static_cast<char*>(scratch->data()) + counters_at);
    GPUPRIMS_CUDA_CHECK(op, cudaMemsetAsync(*counters, 0, counter_bytes, stream));
  }
  return Status::ok();
}

Status stream_partials(int device, const StreamStateLock& held, size_t bytes, void** partials, const char* op) {
  *partials = nullptr;
  if (bytes > kMaxStreamPartialBytes) return Status::ok();
  unsigned int* counters = nullptr;  // finds (or makes) the stream's block; nullptr while capturing
  GPUPRIMS_TRY(stream_counters(device, held, 0, &counters, op));
  if (counters == nullptr) return Status::ok();
  unsigned long long stream_id = 0;
  GPUPRIMS_CUDA_CHECK(op, cudaStreamGetId(held.stream(), &stream_id));
  std::lock_guard<std::mutex> lock(g_mutex);
  for (CounterBlock& b : g_counter_blocks) {
    if (b.device != device || b.stream_id != stream_id) continue;
    if (b.partial_bytes < bytes) {
      // First use or growth (rare): cudaFree waits for the kernels still writing the old region.
      if (b.partials != nullptr) GPUPRIMS_CUDA_CHECK(op, cudaFree(b.partials));
      b.partials = nullptr;
      b.partial_bytes = 0;
      const size_t capacity = bytes > kMinStreamPartialBytes ? bytes : kMinStreamPartialBytes;
      GPUPRIMS_CUDA_CHECK(op, cudaMalloc(&b.partials, capacity));
      b.partial_bytes = capacity;
    }
    *partials = b.partials;
    break;
  }
  return Status::ok();
}

namespace {

// The device's multiprocessor count, compute capability major and opt-in shared memory per block,
// queried once per device.
Status device_info(int device, DeviceInfo* info) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (static_cast<int>(g_device_info.size()) > device && g_device_info[device].sm_count > 0) {
      *info = g_device_info[device];
      return Status::ok();
    }
  }
  DeviceInfo queried;
  GPUPRIMS_CUDA_CHECK("device query",
                      cudaDeviceGetAttribute(&queried.sm_count, cudaDevAttrMultiProcessorCount, device));
  GPUPRIMS_CUDA_CHECK("device query",
                      cudaDeviceGetAttribute(&queried.cc_major, cudaDevAttrComputeCapabilityMajor, device));
  GPUPRIMS_CUDA_CHECK("device query", cudaDeviceGetAttribute(&queried.smem_optin,
                                                             cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Performance hints only: a driver that does not report them leaves 0 (and no sticky error).
  if (cudaDeviceGetAttribute(&queried.memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&queried.bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();
    queried.memory_khz = queried.bus_bits = 0;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (static_cast<int>(g_device_info.size()) <= device) g_device_info.resize(device + 1);
  g_device_info[device] = queried;
  *info = queried;
  return Status::ok();
}

}  // namespace

Status multiprocessor_count(int device, int* count) {
  DeviceInfo info;
  GPUPRIMS_TRY(device_info(device, &info));
  *count = info.sm_count;
  return Status::ok();
}

Status compute_capability_major(int device, int* major) {
  DeviceInfo info;
  GPUPRIMS_TRY(device_info(device, &info));
  *major = info.cc_major;
  return Status::ok();
}

Status shared_memory_per_block_optin(int device, int* bytes) {
  DeviceInfo info;
  GPUPRIMS_TRY(device_info(device, &info));
  *bytes = info.smem_optin;
  return Status::ok();
}

bool sm_holds_shared_memory(int device, int bytes) {
  int optin = 0;
  return shared_memory_per_block_optin(device, &optin).is_ok() && optin >= bytes;
}

Status dram_gbps_per_sm(int device, double* gbps) {
  DeviceInfo info;
  GPUPRIMS_TRY(device_info(device, &info));
  *gbps = 2.0 * info.memory_khz * 1e3 * (info.bus_bits / 8) / 1e9 / info.sm_count;
  return Status::ok();
}

bool wide_dram_per_sm(int device) {
  constexpr double kWideSmGbps = 30.0;
  double gbps = 0.0;
  return dram_gbps_per_sm(device, &gbps).is_ok() && gbps >= kWideSmGbps;
}

}  // namespace gpuprims
