#include "deferred_release.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "event_pool.hpp"

namespace gpuprims {
namespace {

struct Pending {
  int device;  // the event's
  cudaEvent_t event;
  std::function<void()> release;
};

// One queue per launch stream: its events complete in the order they were recorded, so polling
// stops at a queue's first pending event and a call costs O(streams + completed), however many
// asynchronous calls are in flight. (A destroyed stream's handle reused by a new stream, or
// the per-thread and legacy default streams of several devices sharing a handle, only make a
// completed entry wait behind a pending one: never an early release.)
struct StreamQueue {
  cudaStream_t stream;
  std::deque<Pending> pending;
};

std::mutex g_mutex;
std::vector<StreamQueue> g_queues;

// Runs the releases outside the lock: a deleter may drop Python objects whose destructors import
// or release again.
void run_all(std::vector<Pending>& done) {
  for (Pending& p : done) {
    release_event(p.device, p.event);  // the event has completed (or the context is gone)
    p.release();
  }
}

// Moves out the entries whose events completed (all of them with `wait`).
std::vector<Pending> take_completed(bool wait) {
  std::vector<Pending> done;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (StreamQueue& q : g_queues) {
    while (!q.pending.empty()) {
      Pending& front = q.pending.front();
      const cudaError_t e = wait ? cudaEventSynchronize(front.event) : cudaEventQuery(front.event);
      if (e == cudaErrorNotReady) break;
      // Completed, or the context is gone (a sticky error): nothing will read the memory either way.
      done.push_back(std::move(front));
      q.pending.pop_front();
    }
  }
  // Streams come and go (a torch side stream per request): keep only the queues still waiting.
  g_queues.erase(std::remove_if(g_queues.begin(), g_queues.end(),
                                [](const StreamQueue& q) { return q.pending.empty(); }),
                 g_queues.end());
  // A not-ready query is not an error, but keep it out of the next launch's cudaGetLastError check.
  if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
  return done;
}

}  // namespace

void defer_release(cudaStream_t stream, int device, cudaEvent_t event, std::function<void()> release) {
  std::vector<Pending> done = take_completed(/*wait=*/false);
  run_all(done);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (StreamQueue& q : g_queues) {
    if (q.stream == stream) {
      q.pending.push_back(Pending{device, event, std::move(release)});
      return;
    }
  }
  g_queues.push_back(StreamQueue{stream, {}});
  g_queues.back().pending.push_back(Pending{device, event, std::move(release)});
}

std::size_t pending_releases() {
  std::vector<Pending> done = take_completed(/*wait=*/false);
  run_all(done);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::size_t n = 0;
  for (const StreamQueue& q : g_queues) n += q.pending.size();
  return n;
}

void flush_releases() {
  std::vector<Pending> done = take_completed(/*wait=*/true);
  run_all(done);
}

}  // namespace gpuprims
