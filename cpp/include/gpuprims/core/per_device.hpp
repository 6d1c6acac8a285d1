#pragma once
// A non-negative int a variant asks of one device once (resident blocks or clusters of a kernel,
// whether a launch form is safe there) and keeps for the process. Declare one per question as a
// function-local static; calls may race: a first query may run twice, with the same answer.
#include <atomic>

namespace gpuprims {

class PerDeviceAnswer {
 public:
  static constexpr int kMaxDevices = 64;

  // query() on the first call for `device`, the kept answer after; 0 for devices beyond
  // kMaxDevices (every caller's answer for "cannot", so the call takes its fallback).
  template <class Query>
  int get(int device, Query query) {
    if (device < 0 || device >= kMaxDevices) return 0;
    int kept = known_[device].load(std::memory_order_relaxed);
    if (kept == 0) {
      kept = query() + 1;
      known_[device].store(kept, std::memory_order_relaxed);
    }
    return kept - 1;
  }

 private:
  std::atomic<int> known_[kMaxDevices] = {};  // answer + 1; 0: not asked yet
};

}  // namespace gpuprims
