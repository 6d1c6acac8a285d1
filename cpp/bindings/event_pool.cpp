#include "event_pool.hpp"

#include <cstddef>
#include <mutex>
#include <vector>

namespace gpuprims {
namespace {

// More idle events than a process holds imports at once in practice; a burst beyond it is
// destroyed rather than kept.
constexpr std::size_t kMaxIdlePerDevice = 256;

std::mutex g_mutex;
std::vector<std::vector<cudaEvent_t>> g_idle;  // per device

}  // namespace

cudaError_t acquire_event(int device, cudaEvent_t* event) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (device >= 0 && static_cast<std::size_t>(device) < g_idle.size() && !g_idle[device].empty()) {
      *event = g_idle[device].back();
      g_idle[device].pop_back();
      return cudaSuccess;
    }
  }
  return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
}

void release_event(int device, cudaEvent_t event) {
  if (event == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (device >= 0) {
      if (static_cast<std::size_t>(device) >= g_idle.size()) g_idle.resize(device + 1);
      if (g_idle[device].size() < kMaxIdlePerDevice) {
        g_idle[device].push_back(event);
        return;
      }
    }
  }
  cudaEventDestroy(event);  // destruction waits for a pending record on the GPU, not on the host
}

}  // namespace gpuprims
