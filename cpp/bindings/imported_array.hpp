#pragma once
// ImportedArray: a TensorView plus ownership of what it views: a consumed DLPack capsule (its
// deleter runs when the ImportedArray dies) or, for the raw path, a reference to the producer.
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
  // A view described field by field (frameworks whose metadata is cheaper to read than to export).
  // `owner` is kept alive while the view exists.
  static ImportedArray* from_fields(uintptr_t data, const std::string& dtype, nanobind::handle shape,
                                    nanobind::handle strides, bool on_cuda, int device_id, bool readonly,
                                    nanobind::object owner, const char* op, const char* arg);
  ~ImportedArray();
  ImportedArray(const ImportedArray&) = delete;
  ImportedArray& operator=(const ImportedArray&) = delete;

  const TensorView& view() const { return view_; }

 private:
  ImportedArray() = default;
  TensorView view_;
  dlpack::ManagedTensor* legacy_ = nullptr;
  dlpack::ManagedTensorVersioned* versioned_ = nullptr;
  nanobind::object owner_;
};

// Parses a dtype name ("float32", "bfloat16", ...). Returns false for unknown names.
bool parse_dtype_name(const std::string& name, DType* out);

void bind_imported_array(nanobind::module_& m);

}  // namespace gpuprims
