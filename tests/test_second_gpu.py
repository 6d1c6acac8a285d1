"""Every family on a GPU that is not the current one (DESIGN.md: GPU arrays run on their own device).

The current device stays cuda:0 while the arrays live on cuda:1: each op must allocate its scratch
and outputs, query its occupancy and launch on cuda:1, on cuda:1's current stream, and give the
same values as the same call on cuda:0. Arrays on two devices are a ValueError naming both.
Skipped unless two GPUs are visible.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_COUNT, cupy, random_values, torch

import gpuprims

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(GPU_COUNT < 2 or torch is None, reason="needs two GPUs and torch")]


def _f32(rng, *shape):
    return random_values(rng, int(np.prod(shape)), "float32").reshape(shape)


CASES = ("reduce", "scan", "scan rows", "compact", "compact out=", "nonzero", "segmented_reduce", "histogram",
         "bincount", "softmax", "softmax long rows", "layer_norm", "layer_norm long rows", "rms_norm long rows",
         "add_rms_norm", "layer_norm_backward", "softmax_backward", "bias_dropout_add", "matmul", "gemv")


def _cases(rng):
    """name: (function of torch arrays returning a tensor or a tuple of them, its numpy inputs)."""
    x = _f32(rng, 300, 5120)
    long_rows = _f32(rng, 8, 262144)  # cluster_row / row_lag: per-device attributes and occupancy
    w, b = _f32(rng, 5120), _f32(rng, 5120)
    offsets = np.array([0, 0, 7, 5000, 5000, 300_000, 1_536_000], dtype=np.int64)
    ints = rng.integers(-50, 50, size=1_000_003).astype(np.int32)
    mask = rng.random(1_000_003) < 0.5
    a, bm = _f32(rng, 257, 129), _f32(rng, 129, 65)
    cases = [
        ("reduce", lambda t: gpuprims.sum(t[0], axis=1), (x,)),
        ("scan", lambda t: gpuprims.scan(t[0]), (ints,)),
        ("scan rows", lambda t: gpuprims.cumsum(t[0], axis=1), (x,)),
        ("compact", lambda t: gpuprims.compact(t[0], t[1]), (ints, mask)),
        ("compact out=", lambda t: gpuprims.compact(t[0], t[1], out=torch.empty_like(t[0]))[1], (ints, mask)),
        ("nonzero", lambda t: gpuprims.nonzero(t[0]), (mask,)),
        ("segmented_reduce", lambda t: gpuprims.segmented_reduce(t[0].reshape(-1), t[1]), (x, offsets)),
        ("histogram", lambda t: gpuprims.histogram(t[0], bins=100, range=(-3.0, 3.0)), (x,)),
        ("bincount", lambda t: gpuprims.bincount(t[0] + 50), (ints,)),
        ("softmax", lambda t: gpuprims.softmax(t[0]), (x,)),
        ("softmax long rows", lambda t: gpuprims.softmax(t[0]), (long_rows,)),
        ("layer_norm", lambda t: gpuprims.layer_norm(t[0], t[1], t[2], return_stats=True), (x, w, b)),
        ("layer_norm long rows", lambda t: gpuprims.layer_norm(t[0]), (long_rows,)),
        ("rms_norm long rows", lambda t: gpuprims.rms_norm(t[0]), (long_rows,)),
        ("add_rms_norm", lambda t: gpuprims.add_rms_norm(t[0], t[1], t[2]), (x, x[::-1].copy(), w)),
        ("layer_norm_backward", lambda t: gpuprims.layer_norm_backward(
            t[0], t[1], t[2], *gpuprims.layer_norm(t[1], t[2], return_stats=True)[1:]), (x[::-1].copy(), x, w)),
        ("softmax_backward", lambda t: gpuprims.softmax_backward(gpuprims.softmax(t[1]), t[0]), (x[::-1].copy(), x)),
        ("bias_dropout_add", lambda t: gpuprims.bias_dropout_add(t[0], t[1], t[2], 0.25, seed=7, offset=3),
         (x, w, x[::-1].copy())),
        ("matmul", lambda t: gpuprims.matmul(t[0], t[1]), (a, bm)),
        ("gemv", lambda t: gpuprims.gemv(t[0], t[1]), (a, bm[:, 0].copy())),
    ]
    return {name: (fn, arrays) for name, fn, arrays in cases}


def _on(device, arrays):
    return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in arrays)


def _tensors(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", CASES)
def test_every_family_on_the_second_gpu(rng, name):
    cases = _cases(rng)
    assert sorted(cases) == sorted(CASES)
    fn, arrays = cases[name]
    assert torch.cuda.current_device() == 0
    on_second = _tensors(fn(_on("cuda:1", arrays)))
    on_first = _tensors(fn(_on("cuda:0", arrays)))
    assert torch.cuda.current_device() == 0, name
    for got, want in zip(on_second, on_first):
        assert got.device == torch.device("cuda:1"), name
        torch.testing.assert_close(got.cpu(), want.cpu(), rtol=1e-5, atol=1e-5, msg=name)


def test_second_gpu_current_stream_orders_after_its_producer(rng):
    """The default launch stream is cuda:1's current stream, whichever device is current: a
    reduction issued while cuda:0 is current and cuda:1's current stream is a side stream, right
    behind a long kernel there that produces its input, is correct without synchronizing."""
    a = _f32(rng, 1 << 20)
    s = torch.cuda.Stream(device=1)
    before = torch.cuda.current_stream(1)
    try:
        torch.cuda.set_stream(s)  # makes cuda:1 current too
        src = torch.from_numpy(a).to("cuda:1")
        torch.cuda._sleep(20_000_000)
        x = src * 2
        torch.cuda.set_device(0)
        assert torch.cuda.current_stream(1) == s
        r = gpuprims.sum(x)
        s.synchronize()
    finally:
        torch.cuda.set_stream(before)
        torch.cuda.set_device(0)
    np.testing.assert_allclose(float(r), 2 * a.astype(np.float64).sum(), rtol=1e-5)


def test_second_gpu_cupy_and_explicit_stream(rng):
    if cupy is None:
        pytest.skip("CuPy is not installed")
    a = _f32(rng, 64, 4097)
    with cupy.cuda.Device(1):
        xc = cupy.asarray(a)
    with cupy.cuda.Device(0):  # the current device is not the array's
        y = gpuprims.softmax(xc)
        assert y.device.id == 1
        s1 = torch.cuda.Stream(device=1)
        z = gpuprims.scan(xc, axis=1, stream=s1)
        s1.synchronize()
    want = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(cupy.asnumpy(y), want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(cupy.asnumpy(z), np.cumsum(a.astype(np.float64), 1), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", ("layer_norm", "scan", "compact", "matmul", "histogram", "bias_dropout_add"))
def test_arrays_on_two_devices_raise(rng, op):
    x1 = torch.from_numpy(_f32(rng, 16, 64)).to("cuda:1")
    x0 = torch.from_numpy(_f32(rng, 16, 64)).to("cuda:0")
    call = {
        "layer_norm": lambda: gpuprims.layer_norm(x1, torch.ones(64, device="cuda:0")),
        "scan": lambda: gpuprims.scan(x1, axis=1, out=torch.empty_like(x0)),
        "compact": lambda: gpuprims.compact(x1, x0 > 0),
        "matmul": lambda: gpuprims.matmul(x1, x0.T),
        "histogram": lambda: gpuprims.histogram(x1, bins=4, range=(0.0, 1.0), weights=x0),
        "bias_dropout_add": lambda: gpuprims.bias_dropout_add(x1, x1[0], x0, 0.5, seed=1, offset=0),
    }[op]
    with pytest.raises(ValueError, match="cuda:1.*cuda:0|cuda:0.*cuda:1"):
        call()
