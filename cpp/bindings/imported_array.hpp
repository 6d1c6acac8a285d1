#pragma once
// ImportedArray: a TensorView plus ownership of the consumed DLPack capsule it views (the
// capsule's deleter runs when the ImportedArray dies, or after release_after's stream has run
// the launches queued when it died).
#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>

#include "dlpack.hpp"
#include "gpuprims/core/tensor_view.hpp"

namespace gpuprims {

class ImportedArray {
 public:
  // Consumes a "dltensor" or "dltensor_versioned" capsule. `op` and `arg` name the caller in errors.
  static ImportedArray* from_capsule(nanobind::handle capsule, const char* op, const char* arg);
  ~ImportedArray();
  ImportedArray(const ImportedArray&) = delete;
  ImportedArray& operator=(const ImportedArray&) = delete;

  const TensorView& view() const { return view_; }

  // The call reads this import on `stream`, which its producer's allocator is not ordered on: the
  // deleter waits for the launches queued there when this import is dropped (deferred_release.hpp).
  // CUDA views only; CPU views release at once.
  void release_after(uintptr_t stream);

 private:
  ImportedArray() = default;
  TensorView view_;
  bool deferred_ = false;
  uintptr_t release_stream_ = 0;
  dlpack::ManagedTensor* legacy_ = nullptr;
  dlpack::ManagedTensorVersioned* versioned_ = nullptr;
};

// The view an op argument carries: an ImportedArray, or a field tuple
// (data_ptr, dtype_name, shape, strides_or_None, on_cuda, device_id, readonly) that the Python
// layer builds for arrays whose metadata is cheaper to read than to export (torch tensors already
// ordered on the launch stream, cuda.core views, outputs it allocated). The tuple's array must
// outlive the call; the caller holds it.
TensorView view_of(nanobind::handle arg, const char* op, const char* name);

// Parses a dtype name ("float32", "bfloat16", ...). Returns false for unknown names.
bool parse_dtype_name(const std::string& name, DType* out);

void bind_imported_array(nanobind::module_& m);

}  // namespace gpuprims
