"""Shared test machinery: GPU/big markers, framework adapters, seeded data, float64 references."""
from __future__ import annotations

import importlib
import os
import zlib

import numpy as np
import pytest

import gpuprims
from gpuprims import _C

GPU_COUNT = _C.cuda_device_count()


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="I/N",
                     help="run only the I-th of N interleaved shares of the collected tests (0 <= I < N): "
                          "scripts/gpu_check.sh runs the long test files as several processes this way")


def _shard(spec):
    try:
        index, count = (int(v) for v in spec.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard: expected I/N with 0 <= I < N, got {spec!r}") from None
    if not 0 <= index < count:
        raise pytest.UsageError(f"--shard: expected I/N with 0 <= I < N, got {spec!r}")
    return index, count


def pytest_collection_modifyitems(config, items):
    spec = config.getoption("shard")
    if spec is not None:
        # Every N-th test from the I-th, so that parametrized cases spread over the shares; the `big`
        # tests (tens of GB of device memory each) all in share 0, so that the shares of one file,
        # run side by side, never hold two of them at once.
        index, count = _shard(spec)
        small = [t for t in items if "big" not in t.keywords]
        mine = {id(t) for i, t in enumerate(small) if i % count == index}
        keep = [t for t in items if id(t) in mine or ("big" in t.keywords and index == 0)]
        kept = {id(t) for t in keep}
        config.hook.pytest_deselected(items=[t for t in items if id(t) not in kept])
        items[:] = keep
    usable, reason = gpuprims._variants.gpu_status()
    skip_gpu = pytest.mark.skip(reason=f"gpu test: {reason}")
    for item in items:
        if "gpu" in item.keywords and not usable:
            item.add_marker(skip_gpu)


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: fresh data per test, reproducible, printed on failure."""
    seed = zlib.crc32(request.node.nodeid.encode())
    request.node.user_properties.append(("seed", seed))
    print(f"seed={seed}")
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# frameworks: make an array of the framework from numpy data, and read any result back


def _optional(name):
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken install counts as absent
        return None


torch = _optional("torch")
cupy = _optional("cupy") if GPU_COUNT else None
if GPU_COUNT:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
jax = _optional("jax")
if jax is not None:
    jax.config.update("jax_enable_x64", True)


def _torch_dtype(name):
    return getattr(torch, name)


class Framework:
    def __init__(self, name, device):
        self.name, self.device = name, device

    def __repr__(self):
        return f"{self.name}-{self.device}"

    def available(self):
        if self.device == "cuda" and GPU_COUNT == 0:
            return False
        return {"numpy": True, "torch": torch is not None, "cupy": cupy is not None,
                "jax": jax is not None and (self.device == "cpu" or _jax_gpu() is not None),
                "cuda.core": cupy is not None and _optional("cuda.core.utils") is not None}[self.name]

    def make(self, a: np.ndarray, dtype: str | None = None):
        """The framework's array holding `a` converted to `dtype` (bfloat16 rounds from float32)."""
        dtype = dtype or a.dtype.name
        if self.name == "numpy":
            return a.astype(dtype)
        if self.name == "torch":
            t = torch.from_numpy(np.ascontiguousarray(a.astype(np.float32 if dtype == "bfloat16" else dtype)))
            return t.to(device=self.device, dtype=_torch_dtype(dtype))
        if self.name == "cupy":
            return cupy.asarray(a.astype(dtype))
        if self.name == "jax":
            dev = jax.devices("cpu")[0] if self.device == "cpu" else _jax_gpu()
            import jax.numpy as jnp

            return jax.device_put(jnp.asarray(a.astype(np.float32) if dtype == "bfloat16" else a.astype(dtype),
                                              dtype=getattr(jnp, dtype)), dev)
        if self.name == "cuda.core":
            from cuda.core.utils import StridedMemoryView

            backing = cupy.asarray(a.astype(dtype))
            make = getattr(StridedMemoryView, "from_dlpack", StridedMemoryView)
            view = make(backing, stream_ptr=-1)
            _keepalive.append(backing)
            return view
        raise AssertionError(self.name)

    def is_native(self, obj) -> bool:
        return {"numpy": lambda o: isinstance(o, np.ndarray),
                "torch": lambda o: torch.is_tensor(o),
                "cupy": lambda o: isinstance(o, cupy.ndarray),
                "jax": lambda o: isinstance(o, jax.Array),
                "cuda.core": lambda o: type(o).__name__ == "StridedMemoryView"}[self.name](obj)


_keepalive: list = []


def _jax_gpu():
    try:
        return jax.devices("gpu")[0]
    except Exception:  # noqa: BLE001
        return None


def to_numpy(obj) -> np.ndarray:
    """Reads any result back to host memory (bfloat16 as float32)."""
    if isinstance(obj, np.ndarray):
        return obj
    if torch is not None and torch.is_tensor(obj):
        obj = obj.detach().cpu()
        return (obj.float() if obj.dtype == torch.bfloat16 else obj).numpy()
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return cupy.asnumpy(obj)
    if jax is not None and isinstance(obj, jax.Array):
        a = np.asarray(obj)
        return a.astype(np.float32) if a.dtype.name == "bfloat16" else a
    if type(obj).__name__ == "StridedMemoryView":
        return to_numpy(torch.from_dlpack(obj.exporting_obj))
    if isinstance(obj, gpuprims.DeviceArray):
        return to_numpy(torch.from_dlpack(obj))
    return np.asarray(obj)


def framework_params(device):
    """pytest params of every framework that can hold arrays on `device` ("cpu" or "cuda")."""
    names = ("numpy", "torch", "jax") if device == "cpu" else ("torch", "cupy", "jax", "cuda.core")
    return [pytest.param(Framework(n, device), id=f"{n}-{device}") for n in names]


NUMPY_CPU = Framework("numpy", "cpu")
TORCH_CPU = Framework("torch", "cpu")


def cpu_framework(dtype):
    """numpy holds no bfloat16 without ml_dtypes: bfloat16 tests run on torch CPU tensors."""
    if dtype == "bfloat16":
        if torch is None:
            pytest.skip("bfloat16 on the CPU needs torch")
        return TORCH_CPU
    return NUMPY_CPU


# ---------------------------------------------------------------------------------------------
# data


INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
ALL_DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES


def random_values(rng, n, dtype: str) -> np.ndarray:
    """Fresh random data for `dtype` (never all zeros), as a numpy array of a type numpy holds
    (bfloat16 data is produced as float32 values exactly representable in bfloat16)."""
    if dtype == "bool":
        return rng.random(n) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -100), min(int(info.max), 100)
        return rng.integers(lo, hi, size=n, endpoint=True).astype(dtype)
    a = rng.standard_normal(n).astype(np.float32)
    if dtype == "bfloat16":
        return bf16_round(a)
    return a.astype(dtype)


def float32_round_odd(a: np.ndarray) -> np.ndarray:
    """float64 values as float32 rounded "to odd" (an inexact value becomes whichever float32
    neighbour has its last bit set): rounding that to bfloat16 rounds the float64 value once, as
    the library's conversions do (float32 first, to nearest, could round twice)."""
    a = np.asarray(a, np.float64)
    f = a.astype(np.float32)
    with np.errstate(invalid="ignore"):
        inexact = np.isfinite(f) & (f.astype(np.float64) != a) & ((f.view(np.uint32) & 1) == 0)
        toward = np.where(np.abs(a) > np.abs(f.astype(np.float64)), np.float32(np.inf), np.float32(0))
        toward = np.where(a < 0, -toward, toward).astype(np.float32)
    return np.where(inexact, np.nextafter(f, toward), f)


def bf16_round(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), still as float32. float64
    values are rounded once (through float32_round_odd)."""
    if np.asarray(a).dtype == np.float64:
        a = float32_round_odd(a)
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def reduced_count(shape, axis) -> int:
    """How many elements each result of a reduction over `axis` (None, an int or a tuple) combines."""
    if axis is None:
        return int(np.prod(shape, dtype=np.int64))
    axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[d] for d in axes], dtype=np.int64))


def float_tolerance(x64: np.ndarray, axis, dtype_out: str, acc_eps: float):
    """Bound on |result - float64 reference| for a tree reduction: accumulation error
    (eps_acc * depth * sum|x|) plus one rounding of the output."""
    n = reduced_count(x64.shape, axis)
    depth = max(1, int(np.ceil(np.log2(max(n, 2))))) + 2
    mag = np.abs(x64).sum(axis=axis)
    out_eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24, "float64": 2.0 ** -53}[dtype_out]
    ref = x64.sum(axis=axis)
    return acc_eps * depth * mag + out_eps * np.abs(ref) + 1e-300
