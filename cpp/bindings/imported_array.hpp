#pragma once
// ImportedArray: a TensorView plus ownership of the consumed DLPack capsule it views (the
// capsule's deleter runs when the ImportedArray dies or, with release_after, once the launches
// that read it have run).
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

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
  // deleter waits for the launches that read it (deferred_release.hpp). CUDA views only; CPU views
  // release at once.
  void release_after(uintptr_t stream);

  // After a binding's launches (RecordImportLaunches): (re)records the event the deleter will wait
  // for on the hold stream. A capturing stream, or a failed record, releases at once instead.
  void record_launches();

 private:
  friend TensorView view_of(nanobind::handle arg, const char* op, const char* name);
  ImportedArray() = default;
  TensorView view_;
  bool held_ = false;
  uintptr_t hold_stream_ = 0;
  cudaEvent_t launched_ = nullptr;  // recorded after the last launch that read this import
  dlpack::ManagedTensor* legacy_ = nullptr;
  dlpack::ManagedTensorVersioned* versioned_ = nullptr;
};

// The call guard of every binding that launches (nb::call_guard<RecordImportLaunches>()): when the
// binding returns or throws, its launches are enqueued and its stream is still alive (the call is
// running), so the held imports it read record their event then. Recording when the import is
// dropped instead would touch a stream that may be gone by then: an exception's traceback keeps
// the op's frame, and so the import, alive past the end of `with cupy.cuda.Stream():`.
class RecordImportLaunches {
 public:
  RecordImportLaunches();
  ~RecordImportLaunches();
  RecordImportLaunches(const RecordImportLaunches&) = delete;
  RecordImportLaunches& operator=(const RecordImportLaunches&) = delete;

 private:
  std::size_t first_;  // this call's entries in the thread's list of held imports read
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
