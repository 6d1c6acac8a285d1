#include "device_array.hpp"

#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "device_buffer_cache.hpp"
#include "dlpack.hpp"
#include "event_pool.hpp"
#include "imported_array.hpp"
#include "gpuprims/core/stream.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

constexpr const char* kOp = "DeviceArray";

dlpack::DataType to_dlpack(DType t) {
  const auto bits = static_cast<uint8_t>(dtype_size(t) * 8);
  if (t == DType::kBool) return {dlpack::kBool, 8, 1};
  if (t == DType::kBFloat16) return {dlpack::kBfloat, 16, 1};
  if (is_floating(t)) return {dlpack::kFloat, bits, 1};
  return {is_signed_integer(t) ? dlpack::kInt : dlpack::kUInt, bits, 1};
}

// What a capsule's deleter frees: the shape/stride storage and a reference to the buffer.
struct ExportContext {
  std::shared_ptr<DeviceBuffer> buffer;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void delete_managed(Managed* m) {
  delete static_cast<ExportContext*>(m->manager_ctx);
  delete m;
}

template <class Managed>
void capsule_destructor(PyObject* capsule, const char* name) {
  // Only a capsule nobody consumed still carries its original name; its owner must free it.
  if (PyCapsule_IsValid(capsule, name)) {
    auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
    m->deleter(m);
  }
}

cudaStream_t consumer_stream(const nb::object& stream) {
  if (stream.is_none()) return cudaStreamLegacy;  // array API: None means the legacy default stream
  const auto s = nb::cast<int64_t>(stream);
  if (s == 1) return cudaStreamLegacy;
  if (s == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s));
}

}  // namespace

DeviceBuffer::~DeviceBuffer() { retire_buffer(device, ptr, capacity); }

DeviceArray::DeviceArray(const std::vector<int64_t>& shape, DType dtype, int device)
    : buffer_(std::make_shared<DeviceBuffer>()), shape_(shape), dtype_(dtype) {
  int64_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) raise_status(value_error("DeviceArray: argument 'shape': expected sizes >= 0"));
    n *= s;
  }
  buffer_->device = device;
  throw_if_error(check_context_alive(kOp));
  DeviceGuard guard;
  throw_if_error(guard.enter(device, kOp));
  // At least one byte, so even an empty array has a valid, unique address.
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  throw_if_error(cuda_status(take_buffer(device, bytes > 0 ? bytes : 1, &buffer_->ptr, &buffer_->capacity), kOp,
                             "cudaMalloc"));
}

void DeviceArray::mark_ready(uintptr_t stream) {
  ready_stream_ = reinterpret_cast<cudaStream_t>(stream);
  has_ready_stream_ = true;
}

nb::object DeviceArray::dlpack(nb::object stream, nb::object max_version, nb::object dl_device,
                               nb::object copy) const {
  if (!copy.is_none() && nb::cast<bool>(copy)) {
    raise_status(value_error("DeviceArray.__dlpack__: copy=True is not supported; the export is zero-copy"));
  }
  if (!dl_device.is_none()) {
    auto d = nb::cast<nb::tuple>(dl_device);
    if (nb::cast<int>(d[0]) != dlpack::kCUDA || nb::cast<int>(d[1]) != buffer_->device) {
      raise_status(value_error("DeviceArray.__dlpack__: the array lives on cuda:" + std::to_string(buffer_->device) +
                               " and cannot be exported to another device"));
    }
  }
  // Order the consumer's stream after the producing op without blocking the host.
  const bool sync = !(!stream.is_none() && nb::cast<int64_t>(stream) == -1);
  if (sync && has_ready_stream_) {
    DeviceGuard guard;
    throw_if_error(guard.enter(buffer_->device, "DeviceArray.__dlpack__"));
    const cudaStream_t consumer = consumer_stream(stream);
    if (consumer != ready_stream_) {
      cudaEvent_t event = nullptr;
      throw_if_error(cuda_status(acquire_event(buffer_->device, &event), kOp, "cudaEventCreate"));
      Status st = cuda_status(cudaEventRecord(event, ready_stream_), kOp, "cudaEventRecord");
      if (st.is_ok()) st = cuda_status(cudaStreamWaitEvent(consumer, event, 0), kOp, "cudaStreamWaitEvent");
      release_event(buffer_->device, event);  // the wait keeps the record it was given
      throw_if_error(st);
    }
  }

  auto* ctx = new ExportContext{buffer_, shape_, {}};
  ctx->strides.resize(shape_.size());
  int64_t compact = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    ctx->strides[d] = compact;
    compact *= shape_[d];
  }
  dlpack::Tensor t{};
  t.data = buffer_->ptr;
  t.device = {dlpack::kCUDA, buffer_->device};
  t.ndim = static_cast<int32_t>(shape_.size());
  t.dtype = to_dlpack(dtype_);
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;

  const bool versioned = !max_version.is_none() && nb::cast<int>(nb::cast<nb::tuple>(max_version)[0]) >= 1;
  PyObject* capsule = nullptr;
  if (versioned) {
    auto* m = new dlpack::ManagedTensorVersioned{{1, 0}, ctx, &delete_managed<dlpack::ManagedTensorVersioned>, 0, t};
    capsule = PyCapsule_New(m, dlpack::kCapsuleNameVersioned, [](PyObject* c) {
      capsule_destructor<dlpack::ManagedTensorVersioned>(c, dlpack::kCapsuleNameVersioned);
    });
    if (capsule == nullptr) delete_managed(m);
  } else {
    auto* m = new dlpack::ManagedTensor{t, ctx, &delete_managed<dlpack::ManagedTensor>};
    capsule = PyCapsule_New(m, dlpack::kCapsuleName, [](PyObject* c) {
      capsule_destructor<dlpack::ManagedTensor>(c, dlpack::kCapsuleName);
    });
    if (capsule == nullptr) delete_managed(m);
  }
  if (capsule == nullptr) throw nb::python_error();
  return nb::steal(capsule);
}

nb::tuple DeviceArray::dlpack_device() const { return nb::make_tuple(int(dlpack::kCUDA), buffer_->device); }

void bind_device_array(nb::module_& m) {
  nb::class_<DeviceArray>(m, "DeviceArray",
                          "Device memory owned by gpuprims, exported through DLPack with stream ordering.")
      .def("__init__",
           [](DeviceArray* self, const std::vector<int64_t>& shape, const std::string& dtype, int device) {
             DType t;
             if (!parse_dtype_name(dtype, &t)) raise_status(type_error("DeviceArray: unknown dtype '" + dtype + "'"));
             new (self) DeviceArray(shape, t, device);
           },
           nb::arg("shape"), nb::arg("dtype"), nb::arg("device"))
      .def("mark_ready", &DeviceArray::mark_ready, nb::arg("stream"),
           "Consumers wait for the work queued on `stream` so far before reading.")
      .def("__dlpack__", &DeviceArray::dlpack, nb::kw_only(), nb::arg("stream").none() = nb::none(),
           nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
           nb::arg("copy").none() = nb::none())
      .def("__dlpack_device__", &DeviceArray::dlpack_device)
      .def_prop_ro("shape", [](const DeviceArray& a) {
        nb::list s;
        for (int64_t v : a.shape()) s.append(v);
        return nb::tuple(s);
      })
      .def_prop_ro("dtype", [](const DeviceArray& a) { return std::string(dtype_name(a.dtype())); })
      .def_prop_ro("device", &DeviceArray::device)
      .def("__repr__", [](const DeviceArray& a) {
        std::string s = "gpuprims.DeviceArray(shape=(";
        for (size_t i = 0; i < a.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape()[i]);
        if (a.shape().size() == 1) s += ",";
        return s + "), dtype=" + dtype_name(a.dtype()) + ", device=cuda:" + std::to_string(a.device()) + ")";
      });
  m.def("free_buffers", &free_buffers,
        "Waits for the devices that hold dropped DeviceArray memory, then frees all of it (at exit).");
}

}  // namespace gpuprims
