#include "imported_array.hpp"

#include <memory>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "deferred_release.hpp"
#include "event_pool.hpp"
#include "gpuprims/core/stream.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

// The held imports that the running bindings of this thread read; each guard owns the entries past
// its first_. Outside a guard nothing is listed (such an import is not held: it releases when
// dropped), so no entry can outlive the call whose arguments keep it alive.
thread_local std::vector<ImportedArray*> t_held_reads;
thread_local int t_guards = 0;

std::string prefix(const char* op, const char* arg) { return std::string(op) + ": argument '" + arg + "': "; }

Status dtype_from_dlpack(dlpack::DataType t, DType* out, const char* op, const char* arg) {
  if (t.lanes == 1) {
    switch (t.code) {
      case dlpack::kInt:
        if (t.bits == 8) { *out = DType::kInt8; return Status::ok(); }
        if (t.bits == 16) { *out = DType::kInt16; return Status::ok(); }
        if (t.bits == 32) { *out = DType::kInt32; return Status::ok(); }
        if (t.bits == 64) { *out = DType::kInt64; return Status::ok(); }
        break;
      case dlpack::kUInt:
        if (t.bits == 8) { *out = DType::kUInt8; return Status::ok(); }
        if (t.bits == 16) { *out = DType::kUInt16; return Status::ok(); }
        if (t.bits == 32) { *out = DType::kUInt32; return Status::ok(); }
        if (t.bits == 64) { *out = DType::kUInt64; return Status::ok(); }
        break;
      case dlpack::kFloat:
        if (t.bits == 16) { *out = DType::kFloat16; return Status::ok(); }
        if (t.bits == 32) { *out = DType::kFloat32; return Status::ok(); }
        if (t.bits == 64) { *out = DType::kFloat64; return Status::ok(); }
        break;
      case dlpack::kBfloat:
        if (t.bits == 16) { *out = DType::kBFloat16; return Status::ok(); }
        break;
      case dlpack::kBool:
        if (t.bits == 8) { *out = DType::kBool; return Status::ok(); }
        break;
      default:
        break;
    }
  }
  static const char* kCodeNames[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const std::string code = t.code < 7 ? kCodeNames[t.code] : "code " + std::to_string(t.code);
  return type_error(prefix(op, arg) + "expected a bool, integer or float dtype, got " + code +
                    std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : ""));
}

Status device_from_dlpack(dlpack::Device d, Device* out, const char* op, const char* arg) {
  switch (d.device_type) {
    case dlpack::kCPU:
    case dlpack::kCUDAHost:
      *out = Device{DeviceKind::kCPU, 0};
      return Status::ok();
    case dlpack::kCUDA:
    case dlpack::kCUDAManaged:
      *out = Device{DeviceKind::kCUDA, d.device_id};
      return Status::ok();
    default:
      return type_error(prefix(op, arg) + "expected an array in CPU or CUDA memory, got DLPack device type " +
                        std::to_string(d.device_type));
  }
}

Status fill_view(const dlpack::Tensor& t, bool readonly, TensorView* v, const char* op, const char* arg) {
  GPUPRIMS_TRY(dtype_from_dlpack(t.dtype, &v->dtype, op, arg));
  GPUPRIMS_TRY(device_from_dlpack(t.device, &v->device, op, arg));
  if (t.ndim < 0 || t.ndim > kMaxArrayDims) {
    return value_error(prefix(op, arg) + "expected at most " + std::to_string(kMaxArrayDims) +
                       " dimensions, got " + std::to_string(t.ndim));
  }
  v->ndim = t.ndim;
  v->readonly = readonly;
  v->data = static_cast<char*>(t.data) + t.byte_offset;
  int64_t compact = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    v->shape[d] = t.shape[d];
    v->strides[d] = t.strides != nullptr ? t.strides[d] : compact;
    compact *= t.shape[d];
  }
  return Status::ok();
}

}  // namespace

bool parse_dtype_name(const std::string& name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    if (name == dtype_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

ImportedArray* ImportedArray::from_capsule(nb::handle capsule, const char* op, const char* arg) {
  PyObject* cap = capsule.ptr();
  auto result = std::unique_ptr<ImportedArray>(new ImportedArray());
  Status status;
  if (PyCapsule_IsValid(cap, dlpack::kCapsuleNameVersioned)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap, dlpack::kCapsuleNameVersioned));
    if (m->version.major != 1) {
      // The deleter must run even on a version we cannot read (DLPack spec).
      PyCapsule_SetName(cap, dlpack::kUsedCapsuleNameVersioned);
      if (m->deleter != nullptr) m->deleter(m);
      raise_status(type_error(prefix(op, arg) + "expected DLPack major version 1, got " +
                              std::to_string(m->version.major)));
    }
    PyCapsule_SetName(cap, dlpack::kUsedCapsuleNameVersioned);
    result->versioned_ = m;
    status = fill_view(m->dl_tensor, (m->flags & dlpack::kFlagReadOnly) != 0, &result->view_, op, arg);
  } else if (PyCapsule_IsValid(cap, dlpack::kCapsuleName)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, dlpack::kCapsuleName));
    PyCapsule_SetName(cap, dlpack::kUsedCapsuleName);
    result->legacy_ = m;
    status = fill_view(m->dl_tensor, false, &result->view_, op, arg);
  } else {
    raise_status(type_error(prefix(op, arg) + "expected an unconsumed DLPack capsule"));
  }
  throw_if_error(status);
  return result.release();
}

TensorView view_of(nb::handle arg, const char* op, const char* name) {
  if (nb::isinstance<ImportedArray>(arg)) {
    ImportedArray& a = nb::cast<ImportedArray&>(arg);
    if (a.held_ && t_guards > 0) t_held_reads.push_back(&a);
    return a.view();
  }
  if (!PyTuple_Check(arg.ptr()) || PyTuple_GET_SIZE(arg.ptr()) != 7) {
    raise_status(type_error(prefix(op, name) + "expected an ImportedArray or a field tuple"));
  }
  nb::tuple t = nb::borrow<nb::tuple>(arg);
  TensorView v;
  const std::string dtype = nb::cast<std::string>(t[1]);
  if (!parse_dtype_name(dtype, &v.dtype)) {
    raise_status(type_error(prefix(op, name) + "expected a bool, integer or float dtype, got " + dtype));
  }
  nb::handle shape = t[2], strides = t[3];
  const size_t ndim = nb::len(shape);
  if (ndim > static_cast<size_t>(kMaxArrayDims)) {
    raise_status(value_error(prefix(op, name) + "expected at most " + std::to_string(kMaxArrayDims) +
                             " dimensions, got " + std::to_string(ndim)));
  }
  v.ndim = static_cast<int>(ndim);
  int64_t compact = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.shape[d] = nb::cast<int64_t>(shape[d]);
    v.strides[d] = strides.is_none() ? compact : nb::cast<int64_t>(strides[d]);
    compact *= v.shape[d];
  }
  v.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(t[0]));
  v.device = nb::cast<bool>(t[4]) ? Device{DeviceKind::kCUDA, nb::cast<int>(t[5])} : Device{DeviceKind::kCPU, 0};
  v.readonly = nb::cast<bool>(t[6]);
  return v;
}

void ImportedArray::release_after(uintptr_t stream) {
  if (view_.device.kind != DeviceKind::kCUDA) return;
  held_ = true;
  hold_stream_ = stream;
}

void ImportedArray::record_launches() {
  const auto stream = reinterpret_cast<cudaStream_t>(hold_stream_);
  DeviceGuard guard;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  // Under capture the caller keeps a graph's inputs alive for its replays: release at once.
  bool ok = guard.enter(view_.device.id, "import").is_ok() && cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
            capture == cudaStreamCaptureStatusNone;
  if (ok && launched_ == nullptr) ok = acquire_event(view_.device.id, &launched_) == cudaSuccess;
  if (ok) ok = cudaEventRecord(launched_, stream) == cudaSuccess;
  if (!ok) {
    cudaGetLastError();  // not the op's error: the import is simply not held
    held_ = false;
  }
}

RecordImportLaunches::RecordImportLaunches() : first_(t_held_reads.size()) { ++t_guards; }

RecordImportLaunches::~RecordImportLaunches() {
  for (std::size_t i = first_; i < t_held_reads.size(); ++i) t_held_reads[i]->record_launches();
  t_held_reads.resize(first_);
  --t_guards;
}

ImportedArray::~ImportedArray() {
  auto* legacy = legacy_;
  auto* versioned = versioned_;
  auto release = [legacy, versioned] {
    if (versioned != nullptr && versioned->deleter != nullptr) versioned->deleter(versioned);
    if (legacy != nullptr && legacy->deleter != nullptr) legacy->deleter(legacy);
  };
  if (held_ && launched_ != nullptr) {
    defer_release(reinterpret_cast<cudaStream_t>(hold_stream_), view_.device.id, launched_, release);
    return;
  }
  release_event(view_.device.id, launched_);
  release();
}

void bind_imported_array(nb::module_& m) {
  nb::class_<ImportedArray>(m, "ImportedArray",
                            "An array imported for one call: a typed, strided view plus ownership of its source.")
      .def_static("from_capsule", &ImportedArray::from_capsule, nb::arg("capsule"), nb::arg("op"), nb::arg("arg"),
                  nb::rv_policy::take_ownership)
      .def("release_after", &ImportedArray::release_after, nb::arg("stream"),
           "Hold the source, once dropped, until the launches on `stream` that read it have run.")
      .def_prop_ro("dtype", [](const ImportedArray& a) { return std::string(dtype_name(a.view().dtype)); })
      .def_prop_ro("shape", [](const ImportedArray& a) {
        nb::list s;
        for (int d = 0; d < a.view().ndim; ++d) s.append(a.view().shape[d]);
        return nb::tuple(s);
      });
  m.def("pending_releases", &pending_releases,
        "Runs the deferred releases of imported arrays whose launches have completed; returns how many wait.");
  m.def("flush_releases", &flush_releases,
        "Waits for the launches every deferred release waits for, then runs them all (at exit).");
}

}  // namespace gpuprims
