#include "device_buffer_cache.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "gpuprims/core/stream.hpp"

namespace gpuprims {
namespace {

// Bounds: one synchronization per 64 dropped results (or 256 MiB of them), and at most 256 MiB
// kept for reuse per device besides, so a loop over same-shaped results up to 64 MiB runs without a
// cudaMalloc, a cudaFree or a device-wide wait per call.
constexpr std::size_t kMaxRetired = 64;
constexpr std::size_t kMaxRetiredBytes = std::size_t(256) << 20;
constexpr std::size_t kMaxCachedBytes = std::size_t(256) << 20;

struct Buffer {
  void* ptr;
  std::size_t capacity;
};

struct DeviceBuffers {
  std::vector<Buffer> retired;  // dropped, maybe still read
  std::vector<Buffer> cached;   // reusable, most recently cached last
  std::size_t retired_bytes = 0, cached_bytes = 0;
};

std::mutex g_mutex;
std::vector<DeviceBuffers> g_devices;

DeviceBuffers& buffers_of(int device) {  // g_mutex held
  if (static_cast<std::size_t>(device) >= g_devices.size()) g_devices.resize(device + 1);
  return g_devices[device];
}

// Size classes, so results of nearby sizes share buffers: powers of two up to 1 MiB (at least 512
// bytes), then multiples of 2 MiB.
std::size_t size_class(std::size_t bytes) {
  constexpr std::size_t kLarge = std::size_t(1) << 20, kStep = std::size_t(2) << 20;
  if (bytes > kLarge) return (bytes + kStep - 1) / kStep * kStep;
  std::size_t c = 512;
  while (c < bytes) c *= 2;
  return c;
}

void free_all(std::vector<Buffer>& list, int device) {
  if (list.empty()) return;
  DeviceGuard guard;
  if (!guard.enter(device, "DeviceArray").is_ok()) return;  // a lost context at exit: nothing to free
  for (const Buffer& b : list) cudaFree(b.ptr);
  list.clear();
}

// Makes the device's retired buffers reusable: a synchronization that begins after they were
// dropped has waited for whatever read them. Buffers beyond the cache's bound are freed.
void sweep(int device) {
  std::vector<Buffer> settling, excess;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceBuffers& d = buffers_of(device);
    settling.swap(d.retired);
    d.retired_bytes = 0;
  }
  if (settling.empty()) return;  // (no synchronization of a device gpuprims holds nothing on)
  {
    DeviceGuard guard;
    if (!guard.enter(device, "DeviceArray").is_ok() || cudaDeviceSynchronize() != cudaSuccess) {
      // Refused (another thread captures a graph in global mode), or the context is gone (exit):
      // the buffers stay dropped-but-unsettled, for the next sweep to try again.
      cudaGetLastError();
      std::lock_guard<std::mutex> lock(g_mutex);
      DeviceBuffers& d = buffers_of(device);
      for (const Buffer& b : settling) {
        d.retired.push_back(b);
        d.retired_bytes += b.capacity;
      }
      return;
    }
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceBuffers& d = buffers_of(device);
    for (const Buffer& b : settling) {
      d.cached.push_back(b);
      d.cached_bytes += b.capacity;
    }
    // Oldest first out.
    std::size_t drop = 0;
    while (d.cached_bytes > kMaxCachedBytes && drop < d.cached.size()) d.cached_bytes -= d.cached[drop++].capacity;
    excess.assign(d.cached.begin(), d.cached.begin() + static_cast<std::ptrdiff_t>(drop));
    d.cached.erase(d.cached.begin(), d.cached.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  free_all(excess, device);
}

}  // namespace

cudaError_t take_buffer(int device, std::size_t bytes, void** ptr, std::size_t* capacity) {
  *ptr = nullptr;
  const std::size_t want = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceBuffers& d = buffers_of(device);
    for (std::size_t i = d.cached.size(); i-- > 0;) {
      if (d.cached[i].capacity == want) {
        *ptr = d.cached[i].ptr;
        *capacity = want;
        d.cached_bytes -= want;
        d.cached.erase(d.cached.begin() + static_cast<std::ptrdiff_t>(i));
        return cudaSuccess;
      }
    }
  }
  cudaError_t e = cudaMalloc(ptr, want);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    free_buffers();
    e = cudaMalloc(ptr, want);
  }
  if (e != cudaSuccess) *ptr = nullptr;
  *capacity = want;
  return e;
}

void retire_buffer(int device, void* ptr, std::size_t capacity) {
  if (ptr == nullptr) return;
  bool full;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceBuffers& d = buffers_of(device);
    d.retired.push_back(Buffer{ptr, capacity});
    d.retired_bytes += capacity;
    full = d.retired.size() >= kMaxRetired || d.retired_bytes >= kMaxRetiredBytes;
  }
  if (full) sweep(device);
}

void free_buffers() {
  std::size_t devices;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    devices = g_devices.size();
  }
  for (std::size_t device = 0; device < devices; ++device) {
    sweep(int(device));
    std::vector<Buffer> all;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      DeviceBuffers& d = buffers_of(int(device));
      all.swap(d.cached);
      d.cached_bytes = 0;
    }
    free_all(all, int(device));
  }
}

}  // namespace gpuprims
