#include "deferred_release.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "gpuprims/core/stream.hpp"

namespace gpuprims {
namespace {

struct Pending {
  cudaEvent_t event;
  std::function<void()> release;
};

std::mutex g_mutex;
std::vector<Pending> g_pending;  // in deferral order

// Runs the releases outside the lock: a deleter may drop Python objects whose destructors import
// or release again.
void run_all(std::vector<Pending>& done) {
  for (Pending& p : done) {
    cudaEventDestroy(p.event);  // deferred by the runtime until the event completes
    p.release();
  }
}

// Moves out the entries whose events completed (all of them with `wait`).
std::vector<Pending> take_completed(bool wait) {
  std::vector<Pending> done;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<Pending> still;
  for (Pending& p : g_pending) {
    const cudaError_t e = wait ? cudaEventSynchronize(p.event) : cudaEventQuery(p.event);
    if (e == cudaErrorNotReady) {
      still.push_back(std::move(p));
    } else {
      // Completed, or the context is gone (a sticky error): nothing will read the memory either way.
      done.push_back(std::move(p));
    }
  }
  g_pending = std::move(still);
  // A not-ready query is not an error, but keep it out of the next launch's cudaGetLastError check.
  if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
  return done;
}

}  // namespace

bool defer_release(int device, cudaStream_t stream, std::function<void()> release) {
  std::vector<Pending> done = take_completed(/*wait=*/false);
  run_all(done);
  DeviceGuard guard;
  if (!guard.enter(device, "import").is_ok()) {
    cudaGetLastError();
    return false;
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaEvent_t event = nullptr;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone ||
      cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (cudaEventRecord(event, stream) != cudaSuccess) {
    cudaGetLastError();
    cudaEventDestroy(event);
    return false;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_pending.push_back(Pending{event, std::move(release)});
  return true;
}

std::size_t pending_releases() {
  std::vector<Pending> done = take_completed(/*wait=*/false);
  run_all(done);
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_pending.size();
}

void flush_releases() {
  std::vector<Pending> done = take_completed(/*wait=*/true);
  run_all(done);
}

}  // namespace gpuprims
