#pragma once
// DeviceArray: device memory owned by gpuprims, for results handed to frameworks that cannot
// provide a writable output (JAX arrays are immutable) or that gpuprims does not know. It exports
// itself through DLPack and honours the consumer's stream: __dlpack__(stream=s) makes s wait on
// an event recorded after the op that produced the data.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>

#include "gpuprims/core/dtype.hpp"

namespace gpuprims {

// Memory from device_buffer_cache.hpp, given back (not freed) when the last export and the
// DeviceArray are gone.
struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t capacity = 0;
  int device = 0;
  ~DeviceBuffer();
};

class DeviceArray {
 public:
  DeviceArray(const std::vector<int64_t>& shape, DType dtype, int device);

  // Records that the data is complete once the work queued on `stream` so far has run.
  void mark_ready(uintptr_t stream);
  nanobind::object dlpack(nanobind::object stream, nanobind::object max_version, nanobind::object dl_device,
                          nanobind::object copy) const;
  nanobind::tuple dlpack_device() const;

  const std::vector<int64_t>& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int device() const { return buffer_->device; }

 private:
  std::shared_ptr<DeviceBuffer> buffer_;
  std::vector<int64_t> shape_;
  DType dtype_;
  cudaStream_t ready_stream_ = nullptr;
  bool has_ready_stream_ = false;
};

void bind_device_array(nanobind::module_& m);

}  // namespace gpuprims
