"""Arrays in, arrays out: framework detection, launch streams, DLPack import, output allocation.

Every public op goes through here:

1. ``framework_of(x)`` names the producer (numpy, torch, cupy, jax, cuda.core, or any other object
   with ``__dlpack__``) by the type's module, cached per type.
2. ``launch_stream(stream, ...)`` resolves ``stream=``: an int handle, anything with
   ``__cuda_stream__``, a torch or CuPy stream object; ``None`` means the input framework's current
   stream on the input's device (torch, CuPy), else the legacy default stream.
3. ``import_array`` imports with ``x.__dlpack__(stream=...)`` so the producer's pending work is
   ordered before ours (torch tensors already ordered on that stream are described field by field,
   which costs a fraction of ``__dlpack__``).
4. ``new_output`` allocates the result with the input's own framework on the launch stream (JAX
   and unknown producers get a gpuprims ``DeviceArray``: JAX arrays are immutable), or
   ``import_output`` checks the caller's ``out=``.
5. ``result`` hands the output back as the input's framework type.
"""
from __future__ import annotations

import sys

from . import _C
from ._dtypes import dtype_name

CPU, CUDA = "cpu", "cuda"
_LEGACY_DEFAULT_STREAM = 0
_framework_by_type: dict = {}


# ---------------------------------------------------------------------------------------------
# framework and device


def framework_of(x, op: str, arg: str) -> str:
    t = type(x)
    fw = _framework_by_type.get(t)
    if fw is None:
        root = t.__module__.split(".")[0]
        if root in ("numpy", "torch", "cupy"):
            fw = root
        elif root in ("jax", "jaxlib"):
            fw = "jax"
        elif root == "cuda" and hasattr(x, "ptr") and hasattr(x, "is_device_accessible"):
            fw = "cuda.core"  # cuda.core StridedMemoryView
        elif hasattr(x, "__dlpack__"):
            fw = "dlpack"
        else:
            raise TypeError(
                f"{op}: argument '{arg}': expected an array supporting DLPack (numpy, torch, cupy, jax, "
                f"cuda.core, ...), got {t.__module__}.{t.__qualname__}"
            )
        _framework_by_type[t] = fw
    return fw


def device_of(x, fw: str, op: str, arg: str):
    """(CPU, 0) or (CUDA, device id) without importing the array."""
    if fw == "torch":
        d = x.device
        if d.type == "cuda":
            return CUDA, d.index
        if d.type == "cpu":
            return CPU, 0
        raise TypeError(f"{op}: argument '{arg}': expected a CPU or CUDA tensor, got one on {d}")
    if fw == "numpy":
        return CPU, 0
    if fw == "cuda.core":
        return (CUDA, x.device_id) if x.device_id >= 0 else (CPU, 0)
    kind, dev = x.__dlpack_device__()
    kind = int(kind)
    if kind in (1, 3):  # kDLCPU, kDLCUDAHost
        return CPU, 0
    if kind in (2, 13):  # kDLCUDA, kDLCUDAManaged
        return CUDA, int(dev)
    raise TypeError(f"{op}: argument '{arg}': expected an array in CPU or CUDA memory, got DLPack device type {kind}")


def device_string(device) -> str:
    return "cpu" if device[0] == CPU else f"cuda:{device[1]}"


# ---------------------------------------------------------------------------------------------
# streams


def _current_stream(fw: str, device_id: int) -> int:
    if fw == "torch":
        torch = sys.modules["torch"]
        get_raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if get_raw is not None:
            return get_raw(device_id)
        return torch.cuda.current_stream(device_id).cuda_stream
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device_id):
            return cupy.cuda.get_current_stream().ptr
    return _LEGACY_DEFAULT_STREAM


def launch_stream(stream, fw: str, device, op: str) -> int:
    """The CUDA stream handle the op runs on (validated for CPU arrays too, then unused)."""
    if stream is None:
        return _current_stream(fw, device[1]) if device[0] == CUDA else _LEGACY_DEFAULT_STREAM
    if isinstance(stream, bool):
        raise TypeError(f"{op}: argument 'stream': expected an int handle or a stream object, got {stream!r}")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"{op}: argument 'stream': expected a handle >= 0, got {stream}")
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        version_and_handle = protocol() if callable(protocol) else protocol
        return int(version_and_handle[1])
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(
        f"{op}: argument 'stream': expected an int handle, an object with __cuda_stream__, or a torch/cupy "
        f"stream, got {type(stream).__module__}.{type(stream).__qualname__}"
    )


def _dlpack_stream(stream: int):
    # Array API: the consumer's stream; 0 is ambiguous there, 1 names the legacy default stream.
    return 1 if stream == _LEGACY_DEFAULT_STREAM else stream


# ---------------------------------------------------------------------------------------------
# import


def _torch_dtype_names():
    torch = sys.modules["torch"]
    names = {}
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "bfloat16", "float32", "float64"):
        t = getattr(torch, name, None)
        if t is not None:
            names[t] = name
    return names


_torch_dtypes: dict = {}


def _torch_dtype_name(x, op: str, arg: str) -> str:
    if not _torch_dtypes:
        _torch_dtypes.update(_torch_dtype_names())
    name = _torch_dtypes.get(x.dtype)
    if name is None:
        raise TypeError(f"{op}: argument '{arg}': expected a bool, integer or float dtype, got {x.dtype}")
    return name


def _capsule(x, stream, on_cuda: bool):
    kwargs = {"stream": _dlpack_stream(stream)} if on_cuda else {}
    try:
        # Versioned capsules carry the read-only flag (numpy exports read-only arrays only so).
        return x.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:
        return x.__dlpack__(**kwargs)


def import_array(x, fw: str, device, stream: int, op: str, arg: str):
    """An _C.ImportedArray viewing x, its producer's work ordered before `stream`."""
    on_cuda = device[0] == CUDA
    if fw == "torch":
        if not on_cuda or stream == _current_stream("torch", device[1]):
            # Already ordered: torch's __dlpack__ would do no synchronization here either.
            return _C.ImportedArray.from_fields(
                x.data_ptr(), _torch_dtype_name(x, op, arg), x.shape, x.stride(), on_cuda, device[1],
                False, x, op, arg)
        x = x.detach()
    elif fw == "cuda.core":
        return _C.ImportedArray.from_fields(
            x.ptr, dtype_name(x.dtype, op, arg), x.shape, x.strides, on_cuda, device[1], bool(x.readonly),
            x, op, arg)
    try:
        capsule = _capsule(x, stream, on_cuda)
    except BufferError as e:
        raise TypeError(f"{op}: argument '{arg}': its producer refused to export it through DLPack: {e}") from e
    return _C.ImportedArray.from_capsule(capsule, op, arg)


# ---------------------------------------------------------------------------------------------
# outputs


class Output:
    """A result buffer: the object handed back to the caller and its imported view."""

    __slots__ = ("obj", "view", "fw", "device", "stream")

    def __init__(self, obj, view, fw, device, stream):
        self.obj, self.view, self.fw, self.device, self.stream = obj, view, fw, device, stream


def new_output(fw: str, like, shape: tuple, dtype: str, device, stream: int, op: str) -> Output:
    on_cuda = device[0] == CUDA
    if fw == "torch":
        torch = sys.modules["torch"]
        if not _torch_dtypes:
            _torch_dtypes.update(_torch_dtype_names())
        tdtype = next(t for t, n in _torch_dtypes.items() if n == dtype)
        obj = torch.empty(shape, dtype=tdtype, device=like.device)
        if on_cuda and stream != _current_stream("torch", device[1]):
            # Allocated for torch's current stream but written on ours: keep the caching allocator
            # from reusing it before our kernels finish.
            obj.record_stream(torch.cuda.ExternalStream(stream, device=like.device))
        view = _C.ImportedArray.from_fields(obj.data_ptr(), dtype, obj.shape, obj.stride(), on_cuda, device[1],
                                            False, obj, op, "out")
        return Output(obj, view, fw, device, stream)
    if fw == "cupy" and on_cuda:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device[1]):
            if stream != cupy.cuda.get_current_stream().ptr:
                with cupy.cuda.ExternalStream(stream):
                    obj = cupy.empty(shape, dtype=dtype)
            else:
                obj = cupy.empty(shape, dtype=dtype)
        return Output(obj, import_array(obj, "cupy", device, stream, op, "out"), fw, device, stream)
    if not on_cuda:
        import numpy as np

        obj = np.empty(shape, dtype=dtype)
        return Output(obj, import_array(obj, "numpy", device, stream, op, "out"), fw, device, stream)
    obj = _C.DeviceArray(list(shape), dtype, device[1])
    view = _C.ImportedArray.from_capsule(obj.__dlpack__(stream=-1, max_version=(1, 0)), op, "out")
    return Output(obj, view, fw, device, stream)


def import_output(out, dtype: str, device, stream: int, op: str) -> Output:
    """Checks the caller's out= (framework, dtype, device, writability) and imports it."""
    fw = framework_of(out, op, "out")
    if fw == "jax":
        raise TypeError(f"{op}: argument 'out': JAX arrays are immutable and cannot be written; leave out=None")
    out_device = device_of(out, fw, op, "out")
    if out_device != device:
        raise ValueError(f"{op}: arguments 'x' and 'out' must be on the same device, got x on "
                         f"{device_string(device)} and out on {device_string(out_device)}")
    if fw == "torch" and out.requires_grad:
        raise TypeError(f"{op}: argument 'out': expected a tensor that does not require grad")
    view = import_array(out, fw, device, stream, op, "out")
    if view.dtype != dtype:
        raise TypeError(f"{op}: argument 'out': expected dtype {dtype}, got {view.dtype}")
    return Output(out, view, fw, device, stream)


def result(out: Output, user_out: bool):
    """The output as the input's framework type (or the caller's own out= object)."""
    if user_out or out.fw in ("torch", "cupy", "numpy"):
        return out.obj
    if out.device[0] == CPU:
        if out.fw == "jax":
            import jax.numpy as jnp

            return jnp.asarray(out.obj)
        return out.obj
    out.obj.mark_ready(out.stream)
    if out.fw == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(out.obj)
    if out.fw == "cuda.core":
        from cuda.core.utils import StridedMemoryView

        return StridedMemoryView(out.obj, stream_ptr=out.stream)
    return out.obj
