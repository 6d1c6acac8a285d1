"""The array layer without a GPU: dtype names, stream resolution, framework detection."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import torch

import gpuprims
from gpuprims import _interop
from gpuprims._dtypes import dtype_name, reduce_result_dtype


@pytest.mark.parametrize("given, name", [
    ("float32", "float32"), (np.float16, "float16"), (np.dtype("uint16"), "uint16"), (float, "float64"),
    (int, "int64"), (bool, "bool"), (np.bool_, "bool"),
    ("f4", "float32"), ("i8", "int64"), ("<u2", "uint16"), ("float", "float64"), ("?", "bool"),  # numpy spellings
])
def test_dtype_names(given, name):
    assert dtype_name(given, "op") == name


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_sparse_torch_tensors_get_a_type_error():
    with pytest.raises(TypeError, match=r"^reduce: argument 'x': expected a dense strided tensor, got layout "
                                        r"torch.sparse_coo"):
        gpuprims.sum(torch.ones(3).to_sparse())


@pytest.mark.gpu
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_sparse_cuda_tensors_get_a_type_error():
    # Both the C++ fast path (a CUDA tensor, no other argument) and the explicit-stream path.
    x = torch.ones(3, device="cuda").to_sparse()
    for call in (lambda: gpuprims.sum(x), lambda: gpuprims.sum(x, stream=torch.cuda.Stream())):
        with pytest.raises(TypeError, match=r"^reduce: argument 'x': expected a dense strided tensor"):
            call()


@pytest.mark.parametrize("given", ["c8", "complex64", "U4", "f4,i4", "nonsense"])
def test_bad_dtype_strings_are_type_errors(given):
    with pytest.raises(TypeError, match=r"^op: argument 'dtype': expected one of bool, .* got "):
        dtype_name(given, "op")


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_dtype_names():
    assert dtype_name(torch.bfloat16, "op") == "bfloat16" and dtype_name(torch.uint32, "op") == "uint32"


def test_numpy_promotion_rules():
    assert [reduce_result_dtype("sum", d, None) for d in ("bool", "int8", "uint16", "float16", "bfloat16")] == \
        ["int64", "int64", "uint64", "float16", "bfloat16"]
    assert reduce_result_dtype("max", "int8", None) == "int8"
    assert reduce_result_dtype("sum", "int8", "int16") == "int16"


class CudaStreamProtocol:
    def __cuda_stream__(self):
        return (0, 0xABC0)


class TorchLikeStream:
    cuda_stream = 0x1230


class CupyLikeStream:
    ptr = 0x4560


@pytest.mark.parametrize("stream, handle", [
    (None, 0), (0, 0), (2, 2), (0xDEAD00, 0xDEAD00), (CudaStreamProtocol(), 0xABC0), (TorchLikeStream(), 0x1230),
    (CupyLikeStream(), 0x4560),
])
def test_stream_resolution(stream, handle):
    assert _interop.launch_stream(stream, "dlpack", (_interop.CUDA, 0), "op") == handle


def test_framework_detection():
    assert _interop.framework_of(np.zeros(1), "op", "x") == "numpy"
    with pytest.raises(TypeError, match=r"op: argument 'y': expected an array supporting DLPack .* got builtins.dict"):
        _interop.framework_of({}, "op", "y")


def test_package_ships_types():
    import importlib.resources as res

    files = {p.name for p in res.files("gpuprims").iterdir()}
    assert {"py.typed", "_C.pyi"} <= files
    stub = res.files("gpuprims").joinpath("_C.pyi").read_text()
    assert "def reduce(" in stub and "class DeviceArray" in stub


def test_import_makes_no_cuda_call_and_errors_are_exported():
    assert issubclass(gpuprims.CudaFatalError, gpuprims.CudaError)
    assert issubclass(gpuprims.CudaError, RuntimeError)


def test_cpu_imports_are_released_at_once():
    """release_after (the hold of a GPU import read on a stream its producer's allocator is not
    ordered on, cpp/bindings/deferred_release.hpp) leaves CPU imports alone: nothing waits."""
    from gpuprims import _C

    a = np.arange(5.0)
    view = _C.ImportedArray.from_capsule(a.__dlpack__(), "test", "x")
    view.release_after(0)
    del view
    assert _C.pending_releases() == 0
    _C.flush_releases()
    assert gpuprims.sum(a) == 10.0
