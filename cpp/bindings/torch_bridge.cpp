#include "torch_bridge.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "imported_array.hpp"
#include "raise.hpp"

namespace nb = nanobind;

namespace gpuprims {
namespace {

// What _interop.install_torch_bridge hands over, kept for the life of the module.
struct Bridge {
  PyObject* tensor_type = nullptr;   // torch.Tensor (exact type: subclasses take the general path)
  PyObject* dtypes = nullptr;        // dict torch.dtype -> int(DType)
  PyObject* empty_like = nullptr;    // torch.empty_like
  PyObject* raw_stream = nullptr;    // torch._C._cuda_getCurrentRawStream(device) -> int
  PyObject* prototype = nullptr;     // (dtype name, device) -> cached 0-d CUDA tensor
  std::vector<PyObject*> prototypes;  // [device * kNumDTypes + dtype], filled on first use
};
Bridge g_bridge;

// Interned attribute names, created at install.
PyObject* s_is_cuda = nullptr;
PyObject* s_get_device = nullptr;
PyObject* s_data_ptr = nullptr;
PyObject* s_shape = nullptr;
PyObject* s_stride = nullptr;
PyObject* s_dtype = nullptr;
PyObject* s_new_empty = nullptr;
PyObject* s_requires_grad = nullptr;

// A new reference from a Python call, or the pending Python error raised as a C++ exception.
nb::object checked(PyObject* result) {
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

int64_t as_int64(PyObject* o) {
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

// shape or strides (a tuple, torch.Size included) into dims[0, n).
int read_dims(PyObject* tuple, int64_t* dims) {
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  if (n > kMaxArrayDims) return -1;
  for (Py_ssize_t i = 0; i < n; ++i) dims[i] = as_int64(PyTuple_GET_ITEM(tuple, i));
  return static_cast<int>(n);
}

void install(nb::handle tensor_type, nb::dict dtype_names, nb::handle empty_like, nb::handle raw_stream,
             nb::handle prototype) {
  nb::dict dtypes;
  for (auto [torch_dtype, name] : dtype_names) {
    DType t;
    if (!parse_dtype_name(nb::cast<std::string>(name), &t)) {
      throw nb::value_error(("install_torch_bridge: unknown dtype name " + nb::cast<std::string>(name)).c_str());
    }
    dtypes[torch_dtype] = static_cast<int>(t);
  }
  auto keep = [](nb::handle h) {
    PyObject* o = h.ptr();
    Py_INCREF(o);
    return o;
  };
  g_bridge.tensor_type = keep(tensor_type);
  g_bridge.dtypes = keep(dtypes);
  g_bridge.empty_like = keep(empty_like);
  g_bridge.raw_stream = keep(raw_stream);
  g_bridge.prototype = keep(prototype);
  s_is_cuda = PyUnicode_InternFromString("is_cuda");
  s_get_device = PyUnicode_InternFromString("get_device");
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_shape = PyUnicode_InternFromString("shape");
  s_stride = PyUnicode_InternFromString("stride");
  s_dtype = PyUnicode_InternFromString("dtype");
  s_new_empty = PyUnicode_InternFromString("new_empty");
  s_requires_grad = PyUnicode_InternFromString("requires_grad");
}

// o's view when it is a CUDA torch.Tensor (exactly, or also a subclass: nn.Parameter) of a dtype
// gpuprims takes; false (touching nothing) else.
bool read_cuda_view(PyObject* o, bool exact, TensorView* view) {
  const auto tensor_type = reinterpret_cast<PyTypeObject*>(g_bridge.tensor_type);
  if (tensor_type == nullptr || (exact ? Py_TYPE(o) != tensor_type : !PyObject_TypeCheck(o, tensor_type))) {
    return false;
  }
  if (checked(PyObject_GetAttr(o, s_is_cuda)).ptr() != Py_True) return false;
  nb::object dtype = checked(PyObject_GetAttr(o, s_dtype));
  PyObject* code = PyDict_GetItemWithError(g_bridge.dtypes, dtype.ptr());  // borrowed
  if (code == nullptr) {
    if (PyErr_Occurred()) throw nb::python_error();
    return false;  // a dtype gpuprims does not take: the general path raises the typed error
  }
  const int device = static_cast<int>(as_int64(checked(PyObject_CallMethodNoArgs(o, s_get_device)).ptr()));
  nb::object shape = checked(PyObject_GetAttr(o, s_shape));
  // Sparse and other storage-less layouts have no strides or no data pointer (which one raises
  // depends on the torch version): the general path raises the typed error for them.
  const auto call_or_decline = [o](PyObject* method) {
    PyObject* result = PyObject_CallMethodNoArgs(o, method);
    if (result == nullptr) PyErr_Clear();
    return nb::steal(result);
  };
  nb::object strides = call_or_decline(s_stride);
  if (!strides.is_valid()) return false;
  TensorView v;
  v.ndim = read_dims(shape.ptr(), v.shape);
  if (v.ndim < 0 || read_dims(strides.ptr(), v.strides) != v.ndim) return false;
  nb::object data_ptr = call_or_decline(s_data_ptr);
  if (!data_ptr.is_valid()) return false;
  v.dtype = static_cast<DType>(as_int64(code));
  v.data = reinterpret_cast<void*>(static_cast<uintptr_t>(as_int64(data_ptr.ptr())));
  v.device = Device{DeviceKind::kCUDA, device};
  v.readonly = false;
  *view = v;
  return true;
}

}  // namespace

bool torch_cuda_view(nb::handle x, TensorView* view, cudaStream_t* stream) {
  TensorView v;
  if (!read_cuda_view(x.ptr(), /*exact=*/true, &v)) return false;
  nb::object device_arg = checked(PyLong_FromLong(v.device.id));
  PyObject* args[] = {device_arg.ptr()};
  const int64_t handle = as_int64(checked(PyObject_Vectorcall(g_bridge.raw_stream, args, 1, nullptr)).ptr());
  *view = v;
  *stream = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(handle));
  return true;
}

bool torch_cuda_operand(nb::handle a, Device device, TensorView* view) {
  TensorView v;
  if (!read_cuda_view(a.ptr(), /*exact=*/false, &v) || v.device != device) return false;
  *view = v;
  return true;
}

bool torch_cuda_out(nb::handle out, Device device, DType dtype, TensorView* view) {
  TensorView v;
  if (!torch_cuda_operand(out, device, &v) || v.dtype != dtype) return false;
  if (checked(PyObject_GetAttr(out.ptr(), s_requires_grad)).ptr() != Py_False) return false;
  *view = v;
  return true;
}

bool read_python_axis(nb::handle axis, int ndim, int* normalized) {
  if (!PyLong_CheckExact(axis.ptr())) return false;
  int overflow = 0;
  const long long a = PyLong_AsLongLongAndOverflow(axis.ptr(), &overflow);
  if (overflow != 0 || a < -ndim || a >= ndim) return false;  // ndim 0: no axis is in range
  *normalized = static_cast<int>(a < 0 ? a + ndim : a);
  return true;
}

nb::object torch_new_tensor(DType dtype, int device, const int64_t* shape, int ndim, TensorView* view) {
  const size_t slot = static_cast<size_t>(device) * kNumDTypes + static_cast<size_t>(dtype);
  if (g_bridge.prototypes.size() <= slot) g_bridge.prototypes.resize(slot + 1, nullptr);
  PyObject*& proto = g_bridge.prototypes[slot];
  if (proto == nullptr) {
    nb::object made = nb::borrow(g_bridge.prototype)(dtype_name(dtype), device);
    proto = made.release().ptr();  // kept for the life of the module, like the Python-side cache
  }
  TensorView v;
  v.ndim = ndim;
  nb::object obj;
  if (ndim == 0) {
    PyObject* args[] = {proto};
    obj = checked(PyObject_Vectorcall(g_bridge.empty_like, args, 1, nullptr));
  } else {
    nb::object size = checked(PyTuple_New(ndim));
    int64_t stride = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      PyTuple_SET_ITEM(size.ptr(), d, checked(PyLong_FromLongLong(shape[d])).release().ptr());
      v.shape[d] = shape[d];
      v.strides[d] = stride;
      stride *= shape[d];
    }
    PyObject* args[] = {proto, size.ptr()};
    obj = checked(PyObject_VectorcallMethod(s_new_empty, args, 2, nullptr));
  }
  v.data = reinterpret_cast<void*>(static_cast<uintptr_t>(as_int64(checked(PyObject_CallMethodNoArgs(obj.ptr(), s_data_ptr)).ptr())));
  v.dtype = dtype;
  v.device = Device{DeviceKind::kCUDA, device};
  *view = v;
  return obj;
}

void bind_torch_bridge(nb::module_& m) {
  m.def("install_torch_bridge", &install, nb::arg("tensor_type"), nb::arg("dtype_names"), nb::arg("empty_like"),
        nb::arg("raw_stream"), nb::arg("prototype"),
        "Hands torch's pieces to the C++ fast path of small CUDA torch calls (torch_bridge.hpp); once per process.");
}

}  // namespace gpuprims
