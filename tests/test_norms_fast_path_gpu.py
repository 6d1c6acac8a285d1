"""The norms' C++ path for CUDA torch tensors (_C.norm_forward_torch): it must give what the general
Python path gives (values bit for bit, dtypes, shapes, fresh tensors) and leave every call it does
not take to the general path, whose typed errors stay the reference. Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_COUNT, random_values, torch
from norms_reference import FLOATS, round_to

import gpuprims
from gpuprims import _interop

pytestmark = pytest.mark.gpu

# (public function, the arguments beside x: weight, bias, residual as wanted)
CALLS = (
    ("softmax", False, False, False),
    ("log_softmax", False, False, False),
    ("layer_norm", True, True, False),
    ("layer_norm", False, False, False),
    ("rms_norm", True, False, False),
    ("add_layer_norm", True, True, True),
    ("add_rms_norm", True, False, True),
)


def need_torch_cuda():
    if not GPU_COUNT or torch is None or not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")


def tensor(rng, shape, dtype, scale=3.0):
    a = round_to(random_values(rng, int(np.prod(shape)), "float32").reshape(shape) * scale, dtype)
    return torch.from_numpy(np.ascontiguousarray(a.astype(np.float32))).to("cuda", getattr(torch, dtype))


def call(name, x, w, b, r, axis, stats, **kw):
    f = getattr(gpuprims, name)
    if name in ("softmax", "log_softmax"):
        return f(x, axis=axis, **kw)
    args = (x, r) if r is not None else (x,)
    if name.endswith("layer_norm"):
        return f(*args, w, b, axis=axis, return_stats=stats, **kw)
    return f(*args, w, axis=axis, return_stats=stats, **kw)


def as_list(result):
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("dtype", FLOATS)
def test_torch_fast_path_matches_general_path(rng, dtype, monkeypatch):
    need_torch_cuda()
    base = tensor(rng, (6, 7, 131), dtype)
    views = (base, base.transpose(0, 2)[:, 1:], base[:, :, 1:])  # contiguous; strided; misaligned rows
    for name, has_w, has_b, has_r in CALLS:
        for x in views:
            for axis in (-1, 0):
                n = x.shape[axis]
                # nn.Parameter weights, as a module holds them (a torch.Tensor subclass)
                w = torch.nn.Parameter(tensor(rng, (n,), dtype, 0.5)) if has_w else None
                b = tensor(rng, (2 * n,), dtype)[::2] if has_b else None  # a strided bias
                r = tensor(rng, tuple(x.shape), dtype) if has_r else None
                for stats in (False, True):
                    what = f"{name} {dtype} {tuple(x.shape)} {x.stride()} axis={axis} stats={stats}"
                    general = as_list(call(name, x, w, b, r, axis, stats, stream=torch.cuda.current_stream()))
                    with monkeypatch.context() as m:
                        m.setattr(_interop, "prepare_input", lambda *a, **k: pytest.fail("fast path not taken"))
                        fast = as_list(call(name, x, w, b, r, axis, stats))
                        again = as_list(call(name, x, w, b, r, axis, stats))
                    assert len(fast) == len(general), what
                    for got, want, other in zip(fast, general, again):
                        assert type(got) is torch.Tensor and got.device == x.device, what
                        assert got.shape == want.shape and got.dtype == want.dtype, what
                        assert got.is_contiguous() and got.data_ptr() != other.data_ptr(), what
                        assert torch.equal(got, want), what


def test_torch_fast_path_declines_to_the_general_path(rng):
    """Calls the C++ path does not take reach the general path and its typed errors."""
    need_torch_cuda()
    x = tensor(rng, (4, 16), "float32")
    w = tensor(rng, (16,), "float32")
    with pytest.raises(ValueError, match="arguments 'x' and 'weight' must be on the same device"):
        gpuprims.layer_norm(x, w.cpu())
    with pytest.raises(ValueError, match=r"layer_norm: argument 'axis': expected an int in \[-2, 2\)"):
        gpuprims.layer_norm(x, w, axis=2)
    with pytest.raises(TypeError, match="softmax: argument 'axis'"):
        gpuprims.softmax(x, axis=1.0)
    with pytest.raises(TypeError, match="softmax: argument 'x': expected float16, bfloat16, float32 or float64"):
        gpuprims.softmax(torch.ones(4, 16, dtype=torch.int32, device="cuda"))
    with pytest.raises(ValueError, match="add_rms_norm: arguments 'x' and 'residual' must be on the same device"):
        gpuprims.add_rms_norm(x, x.cpu(), w)
    # errors of the kernels' own checks read the same on either path
    for stream in (None, torch.cuda.current_stream()):
        with pytest.raises(TypeError, match="layer_norm: argument 'weight'"):
            gpuprims.layer_norm(x, w.double(), stream=stream)
        with pytest.raises(ValueError, match="rms_norm: argument 'weight'"):
            gpuprims.rms_norm(x, w[:8], stream=stream)
    # numpy integer axes take the general path and give the same result
    assert torch.equal(gpuprims.softmax(x, axis=np.int64(0)), gpuprims.softmax(x, axis=0))
    # an empty input and a 0-d one
    assert gpuprims.layer_norm(torch.empty(0, 16, device="cuda")).shape == (0, 16)
    with pytest.raises(ValueError, match="expected at least 1 dimension"):
        gpuprims.softmax(torch.ones((), device="cuda"))
