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

// Buffers and their total capacity, oldest first.
struct BufferList {
  std::vector<Buffer> items;
  std::size_t bytes = 0;

  void push(const Buffer& b) {
    items.push_back(b);
    bytes += b.capacity;
  }
  std::vector<Buffer> take_all() {
    bytes = 0;
    return std::exchange(items, {});
  }
  // The most recently added buffer of exactly `capacity`, if any.
  bool take(std::size_t capacity, Buffer* out) {
    for (std::size_t i = items.size(); i-- > 0;) {
      if (items[i].capacity != capacity) continue;
      *out = items[i];
      bytes -= capacity;
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    return false;
  }
  // The oldest buffers while the total exceeds `limit`.
  std::vector<Buffer> take_beyond(std::size_t limit) {
    std::size_t n = 0;
    while (bytes > limit && n < items.size()) bytes -= items[n++].capacity;
    std::vector<Buffer> out(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n));
    items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(n));
    return out;
  }
};

struct DeviceBuffers {
  BufferList retired;  // dropped, maybe still read
  BufferList cached;   // reusable
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

void free_all(const std::vector<Buffer>& list, int device) {
  if (list.empty()) return;
  DeviceGuard guard;
  if (!guard.enter(device, "DeviceArray").is_ok()) return;  // a lost context at exit: nothing to free
  for (const Buffer& b : list) cudaFree(b.ptr);
}

// Makes the device's retired buffers reusable: a synchronization that begins after they were
// dropped has waited for whatever read them. Buffers beyond the cache's bound are freed.
void sweep(int device) {
  std::vector<Buffer> settling;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    settling = buffers_of(device).retired.take_all();
  }
  if (settling.empty()) return;  // (no synchronization of a device gpuprims holds nothing on)
  DeviceGuard guard;
  const bool settled = guard.enter(device, "DeviceArray").is_ok() && cudaDeviceSynchronize() == cudaSuccess;
  // Refused (another thread captures a graph in global mode), or the context is gone (exit): the
  // buffers stay dropped-but-unsettled, for the next sweep to try again.
  if (!settled) cudaGetLastError();
  std::vector<Buffer> excess;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceBuffers& d = buffers_of(device);
    BufferList& to = settled ? d.cached : d.retired;
    for (const Buffer& b : settling) to.push(b);
    if (settled) excess = d.cached.take_beyond(kMaxCachedBytes);
  }
  free_all(excess, device);
}

}  // namespace

cudaError_t take_buffer(int device, std::size_t bytes, void** ptr, std::size_t* capacity) {
  *ptr = nullptr;
  const std::size_t want = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    Buffer reused;
    if (buffers_of(device).cached.take(want, &reused)) {
      *ptr = reused.ptr;
      *capacity = want;
      return cudaSuccess;
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
    BufferList& retired = buffers_of(device).retired;
    retired.push(Buffer{ptr, capacity});
    full = retired.items.size() >= kMaxRetired || retired.bytes >= kMaxRetiredBytes;
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
      all = buffers_of(int(device)).cached.take_all();
    }
    free_all(all, int(device));
  }
}

}  // namespace gpuprims
