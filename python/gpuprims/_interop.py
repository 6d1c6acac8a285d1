"""Arrays in, arrays out: framework detection, launch streams, DLPack import, output allocation.

Every public op goes through here:

1. ``framework_of(x)`` names the producer (numpy, torch, cupy, jax, cuda.core, or any other object
   with ``__dlpack__``) by the type's module, cached per type.
2. ``prepare_input`` resolves ``stream=`` (an int handle, anything with ``__cuda_stream__``, a torch
   or CuPy stream; ``None`` means the input framework's current stream on the input's device for
   torch and CuPy, else the legacy default stream) and imports the array with
   ``x.__dlpack__(stream=...)`` so the producer's pending work is ordered before ours. A torch
   tensor whose current stream *is* the launch stream needs no ordering; it is described field by
   field instead, a fraction of ``__dlpack__``'s cost.
3. ``new_output`` allocates the result with the input's own framework on the launch stream (JAX and
   unknown producers get a gpuprims ``DeviceArray``: JAX arrays are immutable), or
   ``import_output`` checks the caller's ``out=``.
4. ``result`` hands the output back as the input's framework type.

What crosses into ``_C`` for an array is either an ``_C.ImportedArray`` (a consumed DLPack capsule)
or a field tuple ``(data_ptr, dtype, shape, strides_or_None, on_cuda, device_id, readonly)``.
"""
from __future__ import annotations

import atexit
import sys
import warnings

from . import _C
from ._dtypes import DTYPES, dtype_name

CPU, CUDA = "cpu", "cuda"
_LEGACY_DEFAULT_STREAM = 0
_framework_by_type: dict = {}


# An imported input is a plain tuple (plain tuples cost a tenth of a NamedTuple on this hot path):
#   (fw, device, stream, arg, shape, dtype, on_current)
#   fw: "numpy" | "torch" | "cupy" | "jax" | "cuda.core" | "dlpack"; device: (CPU, 0) or (CUDA, id);
#   stream: the launch stream; arg: what _C receives; shape: tuple; dtype: name;
#   on_current: whether the launch stream is the framework's current stream.
# An output is (obj, arg): the object the caller gets back (before result()) and what _C receives.


def device_string(device) -> str:
    return "cpu" if device[0] == CPU else f"cuda:{device[1]}"


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
    """(CPU, 0) or (CUDA, device id), read without importing the array."""
    if fw == "torch":
        if x.is_cuda:
            return CUDA, x.get_device()
        if x.device.type == "cpu":
            return CPU, 0
        raise TypeError(f"{op}: argument '{arg}': expected a CPU or CUDA tensor, got one on {x.device}")
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


# ---------------------------------------------------------------------------------------------
# streams


_torch_raw_stream = None  # torch's current-stream query, looked up once


def _torch_current_stream(device_id: int) -> int:
    global _torch_raw_stream
    if _torch_raw_stream is None:
        torch = sys.modules["torch"]
        _torch_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _torch_raw_stream(device_id)


def current_stream(fw: str, device) -> int:
    """The input framework's current stream on the device (the default stream for the rest)."""
    if device[0] == CPU:
        return _LEGACY_DEFAULT_STREAM
    if fw == "torch":
        return _torch_current_stream(device[1])
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device[1]):
            return cupy.cuda.get_current_stream().ptr
    return _LEGACY_DEFAULT_STREAM


def stream_handle(stream, op: str) -> int:
    """The handle of an explicit stream= argument."""
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


def launch_stream(stream, fw: str, device, op: str) -> int:
    """The stream the op runs on (validated for CPU arrays too, where it is unused)."""
    return current_stream(fw, device) if stream is None else stream_handle(stream, op)


# ---------------------------------------------------------------------------------------------
# import


torch_tensor_type = None  # torch.Tensor once a torch tensor was seen (the C++ fast path is installed then)
_torch_by_name: dict = {}  # "float32" -> torch.float32, filled on first use
_name_by_torch: dict = {}  # torch.float32 -> "float32"
_torch_prototypes: dict = {}  # (dtype, device) -> a 0-d tensor that outputs are made like
_torch_empty_like = None


def _torch_dtype_name(x, op: str, arg: str) -> str:
    name = _name_by_torch.get(x.dtype)
    if name is None:
        if not _name_by_torch:
            torch = sys.modules["torch"]
            for dname in DTYPES:
                t = getattr(torch, dname, None)
                if t is not None:
                    _torch_by_name[dname], _name_by_torch[t] = t, dname
            _install_torch_bridge(torch)
            return _torch_dtype_name(x, op, arg)
        raise TypeError(f"{op}: argument '{arg}': expected a bool, integer or float dtype, got {x.dtype}")
    return name


def _torch_prototype(dtype: str, device):
    """The cached 0-d tensor of (dtype, device) that outputs are allocated like. Called after the
    input's dtype was named, so the dtype tables are filled."""
    global _torch_empty_like
    torch = sys.modules["torch"]
    _torch_empty_like = torch.empty_like
    proto = torch.empty((), dtype=_torch_by_name[dtype], device=device[1] if device[0] == CUDA else "cpu")
    _torch_prototypes[(dtype, device)] = proto
    return proto


def _install_torch_bridge(torch) -> None:
    """Hands torch's pieces to the C++ fast path (cpp/bindings/torch_bridge.hpp): the same current-stream
    query and the same prototype-based allocation as this module's general path."""
    global torch_tensor_type

    def cuda_prototype(dtype: str, device_id: int):
        proto = _torch_prototypes.get((dtype, (CUDA, device_id)))
        return _torch_prototype(dtype, (CUDA, device_id)) if proto is None else proto

    _C.install_torch_bridge(torch.Tensor, dict(_name_by_torch), torch.empty_like,
                            getattr(torch._C, "_cuda_getCurrentRawStream", None) or _torch_current_stream,
                            cuda_prototype)
    torch_tensor_type = torch.Tensor


def _capsule_view(x, stream: int, on_cuda: bool, op: str, arg: str):
    # Array API: the consumer's stream; 0 is ambiguous there, 1 names the legacy default stream.
    kwargs = {"stream": 1 if stream == _LEGACY_DEFAULT_STREAM else stream} if on_cuda else {}
    try:
        try:
            # Versioned capsules carry the read-only flag (numpy exports read-only arrays only so).
            capsule = x.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:
            capsule = x.__dlpack__(**kwargs)
    except BufferError as e:
        raise TypeError(f"{op}: argument '{arg}': its producer refused to export it through DLPack: {e}") from e
    return _C.ImportedArray.from_capsule(capsule, op, arg)


def prepare_input(x, stream, op: str, arg: str = "x") -> tuple:
    """Resolves the launch stream for x and imports x, ordered on that stream."""
    fw = framework_of(x, op, arg)
    if fw == "torch":
        if x.is_cuda:
            device = (CUDA, x.get_device())
            current = _torch_current_stream(device[1])
            s = current if stream is None else stream_handle(stream, op)
            ordered = s == current
        else:
            device = device_of(x, fw, op, arg)
            s = _LEGACY_DEFAULT_STREAM if stream is None else stream_handle(stream, op)
            ordered = True
        dtype = _torch_dtype_name(x, op, arg)
        if ordered:
            shape = x.shape  # a torch.Size is a tuple
            try:
                fields = (x.data_ptr(), dtype, shape, x.stride(), device[0] == CUDA, device[1], False)
            except RuntimeError:  # sparse, mkldnn, ...: no strided storage (free to try on the hot path)
                raise TypeError(f"{op}: argument '{arg}': expected a dense strided tensor, got layout "
                                f"{x.layout}") from None
            return fw, device, s, fields, shape, dtype, True
        if x.layout is not sys.modules["torch"].strided:
            raise TypeError(f"{op}: argument '{arg}': expected a dense strided tensor, got layout {x.layout}")
        view = _capsule_view(x.detach(), s, True, op, arg)
        _hold_until_launched(view, s)
        return fw, device, s, view, view.shape, dtype, False
    if fw == "numpy" and not hasattr(x, "__dlpack__"):
        x = sys.modules["numpy"].asarray(x)  # a numpy scalar (np.float32(3), x[()]) is a 0-d array
    device = device_of(x, fw, op, arg)
    s = launch_stream(stream, fw, device, op)
    if fw == "cuda.core":
        dtype = dtype_name(x.dtype, op, arg)
        shape = tuple(x.shape)
        strides = None if x.strides is None else tuple(x.strides)
        return fw, device, s, (x.ptr, dtype, shape, strides, device[0] == CUDA, device[1], bool(x.readonly)), \
            shape, dtype, stream is None
    view = _capsule_view(x, s, device[0] == CUDA, op, arg)
    if device[0] == CUDA and (fw != "cupy" or (stream is not None and s != current_stream(fw, device))):
        _hold_until_launched(view, s)
    return fw, device, s, view, view.shape, view.dtype, stream is None


def prepare_flat_input(x, stream, import_stream, op: str, arg: str) -> tuple:
    """(flat, xin): x taken as 1-D in C order (scan with axis=None, compact, nonzero) and imported
    like prepare_input(flat, import_stream, ...). An n-d array with reshape() is flattened by its
    framework: a view where it can make one, else its copy, made in the order of the launch on
    `stream` (on_launch_stream: x may be produced there); the caller keeps `flat` referenced until
    the launch. One without (cuda.core's StridedMemoryView) is imported as it is, then seen as 1-D
    by flat_view."""
    ndim = getattr(x, "ndim", None)
    if ndim is None and getattr(x, "shape", None) is not None:
        ndim = len(x.shape)  # cuda.core's StridedMemoryView, gpuprims.DeviceArray
    if ndim is None and getattr(x, "shape", None) is None:
        framework_of(x, op, arg)  # a non-array (a list): the usual "expected an array" TypeError
    flat = x
    if ndim is not None and ndim != 1 and hasattr(x, "reshape"):
        flat = on_launch_stream(x, framework_of(x, op, arg), stream, op, lambda: x.reshape(-1))
    return flat, flat_view(prepare_input(flat, import_stream, op, arg), op, arg)


def flat_view(xin: tuple, op: str, arg: str) -> tuple:
    """prepare_input's result seen as 1-D in C order, without a copy: a cuda.core view (0-d, n-d)
    is merged into one strided run when its dimensions allow (every outer stride the next extent
    times the next stride, size-1 dimensions ignored), else a TypeError: without reshape() there
    is no framework to copy it into C order, and gpuprims makes no hidden copies."""
    shape = xin[4]
    if len(shape) == 1:
        return xin
    view = xin[3]
    if not isinstance(view, tuple):  # a DLPack producer without reshape()
        raise TypeError(f"{op}: argument '{arg}': an n-d array needs reshape() (numpy, torch, CuPy, JAX) to be "
                        "taken in C order; pass a 1-D array")
    n = 1
    for extent in shape:
        n *= extent
    strides = view[3]
    step = 1
    if strides is not None and n > 1:
        kept = [(e, st) for e, st in zip(shape, strides) if e != 1]
        step = kept[-1][1]
        for (outer, outer_stride), (inner, inner_stride) in zip(kept, kept[1:]):
            if outer_stride != inner * inner_stride:
                raise TypeError(f"{op}: argument '{arg}': a {len(shape)}-d view of shape {tuple(shape)} and "
                                f"strides {tuple(strides)} is not one strided run in C order, and a cuda.core view "
                                "has no reshape() to copy it; pass a C-contiguous or 1-D view")
    flat = (view[0], view[1], (n,), (step,)) + view[4:]
    return xin[:3] + (flat, (n,)) + xin[5:]


_exit_hooks: set = set()


def _at_exit_once(hook) -> None:
    """Registers `hook` at exit the first time the library needs it, so that it runs before the exit
    hooks of the frameworks imported earlier (atexit runs the last registered first)."""
    if hook not in _exit_hooks:
        atexit.register(hook)
        _exit_hooks.add(hook)


def _hold_until_launched(view, s: int) -> None:
    """`view` (an import on the GPU) is read on stream `s`, which its producer's allocator is not
    ordered on (JAX: always; torch / CuPy: a stream= other than their current one; any other DLPack
    producer): once dropped, its source stays held until the launches on `s` that read it have run
    (an event recorded as each binding that read it returns: cpp/bindings/deferred_release.hpp).
    The exit hook that waits for the last ones is registered at the first such import, so that it
    runs before the producer's own."""
    _at_exit_once(_C.flush_releases)
    view.release_after(s)


def _cupy_stream(ptr: int, device_id: int):
    """A CuPy stream object for a raw stream handle. CuPy 14 deprecates ExternalStream (for
    Stream.from_external, which takes an object of the CUDA stream protocol); the library keeps the
    class every supported CuPy has and silences the warning, which is about CuPy's API, not the
    caller's code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return sys.modules["cupy"].cuda.ExternalStream(ptr, device_id)


def on_launch_stream(x, fw: str, stream, op: str, make):
    """make(): a framework op that reads x (a C-order copy, a dtype cast), ordered like the launch:
    with an explicit stream= other than the framework's current stream (torch, CuPy on the GPU),
    that stream first waits for the current one (where x may have been produced) and make() runs on
    it, its result allocated for it. Otherwise make() runs on the current stream, which is the
    launch stream (or there is none: numpy; JAX orders its own work, and the import orders the
    launch stream after it)."""
    if stream is None:
        return make()
    if fw == "torch" and x.is_cuda:
        torch = sys.modules["torch"]
        device = x.get_device()
        current = torch.cuda.current_stream(device)
        handle = stream_handle(stream, op)
        if handle == current.cuda_stream:
            return make()
        launch = torch.cuda.ExternalStream(handle, device=device)
        launch.wait_stream(current)
        with torch.cuda.stream(launch):
            return make()
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(x.device.id):
            current = cupy.cuda.get_current_stream()
            handle = stream_handle(stream, op)
            if handle == current.ptr:
                return make()
            launch = _cupy_stream(handle, x.device.id)
            launch.wait_event(current.record())
            with launch:
                return make()
    return make()


# ---------------------------------------------------------------------------------------------
# outputs


def new_output(x: tuple, shape: tuple, dtype: str, op: str) -> tuple:
    """(obj, arg): a fresh, compact result buffer of the input's framework, for work ordered on the
    input's launch stream."""
    fw, device, s = x[0], x[1], x[2]
    on_cuda = device[0] == CUDA
    if fw == "torch":
        proto = _torch_prototypes.get((dtype, device))
        if proto is None:
            proto = _torch_prototype(dtype, device)
        # empty_like of a 0-d prototype skips torch.empty's argument parsing: half its host cost.
        obj = _torch_empty_like(proto) if not shape else proto.new_empty(shape)
        if on_cuda and not x[6]:
            torch = sys.modules["torch"]
            # Allocated for torch's current stream but written on ours: keep the caching allocator
            # from handing the memory out again before our kernels finish.
            obj.record_stream(torch.cuda.ExternalStream(s, device=device[1]))
        return obj, (obj.data_ptr(), dtype, shape, None, on_cuda, device[1], False)
    if fw == "cupy" and on_cuda:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device[1]):
            if s != cupy.cuda.get_current_stream().ptr:
                with _cupy_stream(s, device[1]):
                    obj = cupy.empty(shape, dtype=dtype)
            else:
                obj = cupy.empty(shape, dtype=dtype)
        return obj, (obj.data.ptr, dtype, shape, None, True, device[1], False)
    if not on_cuda:
        import numpy as np

        if dtype == "bfloat16":
            import ml_dtypes  # numpy holds bfloat16 only through ml_dtypes (a JAX dependency)

            obj = np.empty(shape, dtype=ml_dtypes.bfloat16)
        else:
            obj = np.empty(shape, dtype=dtype)
        return obj, (obj.ctypes.data, dtype, shape, None, False, 0, False)
    _at_exit_once(_C.free_buffers)  # DeviceArray memory is kept for reuse (device_buffer_cache.hpp)
    obj = _C.DeviceArray(list(shape), dtype, device[1])
    return obj, _C.ImportedArray.from_capsule(obj.__dlpack__(stream=-1, max_version=(1, 0)), op, "out")


def import_output(out, dtype: str, x: tuple, op: str, arg: str = "out"):
    """Checks the caller's out= (framework, dtype, device, writability) and imports it; `arg` names
    it in errors (an op with several outputs: "out[0]", "out[1]")."""
    fw = framework_of(out, op, arg)
    if fw == "numpy" and not hasattr(out, "__dlpack__"):
        raise TypeError(f"{op}: argument '{arg}': expected a writable array, got a numpy scalar (immutable)")
    if fw == "jax":
        raise TypeError(f"{op}: argument '{arg}': JAX arrays are immutable and cannot be written; leave out=None")
    device = x[1]
    out_device = device_of(out, fw, op, arg)
    if out_device != device:
        raise ValueError(f"{op}: arguments 'x' and '{arg}' must be on the same device, got x on "
                         f"{device_string(device)} and {arg} on {device_string(out_device)}")
    if fw == "torch" and out.requires_grad:
        raise TypeError(f"{op}: argument '{arg}': expected a tensor that does not require grad")
    imported = prepare_input(out, x[2], op, arg)
    if imported[5] != dtype:
        raise TypeError(f"{op}: argument '{arg}': expected dtype {dtype}, got {imported[5]}")
    return imported[3]


def result(x: tuple, obj):
    """The freshly allocated output `obj` as the input's framework type."""
    fw, device = x[0], x[1]
    if fw in ("torch", "cupy", "numpy"):
        return obj
    if device[0] == CPU:
        if fw == "jax":
            import jax.numpy as jnp

            return jnp.asarray(obj)
        return obj
    obj.mark_ready(x[2])
    if fw == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(obj)
    if fw == "cuda.core":
        from cuda.core.utils import StridedMemoryView

        if hasattr(StridedMemoryView, "from_dlpack"):
            return StridedMemoryView.from_dlpack(obj, stream_ptr=x[2])
        return StridedMemoryView(obj, stream_ptr=x[2])
    return obj
