#include "gpuprims/core/stream.hpp"

#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuprims {
namespace {

std::mutex g_mutex;
std::vector<cudaMemPool_t> g_pools;  // per device, created on first use
std::vector<int> g_sm_counts;        // per device, 0 = not queried yet

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

}  // namespace

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

Status multiprocessor_count(int device, int* count) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (static_cast<int>(g_sm_counts.size()) > device && g_sm_counts[device] > 0) {
      *count = g_sm_counts[device];
      return Status::ok();
    }
  }
  int n = 0;
  GPUPRIMS_CUDA_CHECK("device query", cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  std::lock_guard<std::mutex> lock(g_mutex);
  if (static_cast<int>(g_sm_counts.size()) <= device) g_sm_counts.resize(device + 1, 0);
  g_sm_counts[device] = n;
  *count = n;
  return Status::ok();
}

}  // namespace gpuprims
