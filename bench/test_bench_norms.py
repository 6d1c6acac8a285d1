"""pytest-benchmark regression runs of the norms variants (GPU only).

Run and save a baseline, then compare later runs against it and fail on a slowdown:

    python -m pytest bench/test_bench_norms.py --benchmark-save=norms --benchmark-storage=file://.benchmarks/$GPU
    python -m pytest bench/test_bench_norms.py --benchmark-compare --benchmark-compare-fail=median:10% \\
        --benchmark-storage=file://.benchmarks/$GPU

Each round ends with a device synchronization; `extra_info` carries the CUDA-event median and the
GB/s (x read once, y written once) that `python -m gpuprims.bench norms` reports.
"""
from __future__ import annotations

import pytest

import gpuprims
from gpuprims.bench._timing import median_ms, torch_cuda

torch = torch_cuda()
pytestmark = pytest.mark.skipif(torch is None, reason="needs torch with a CUDA GPU")
ROWS, N = 16384, 8192
OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm")


@pytest.fixture(scope="module")
def data():
    x = torch.randn(ROWS, N, device="cuda")
    return x, torch.empty_like(x), torch.rand(N, device="cuda") + 0.5, torch.randn(N, device="cuda")


def _call(op, x, out, w, b, algorithm):
    if op == "layer_norm":
        return gpuprims.layer_norm(x, w, b, out=out, algorithm=algorithm)
    if op == "rms_norm":
        return gpuprims.rms_norm(x, w, out=out, algorithm=algorithm)
    return getattr(gpuprims, op)(x, out=out, algorithm=algorithm)


@pytest.mark.parametrize("op,algorithm", [(op, v.name) for op in OPS for v in gpuprims.variants(op)]
                         + [(op, "auto") for op in OPS])
def test_norms_float32(benchmark, data, op, algorithm):
    x, out, w, b = data

    def run():
        _call(op, x, out, w, b, algorithm)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=20, warmup_rounds=3)
    ms = median_ms(lambda: _call(op, x, out, w, b, algorithm))
    benchmark.extra_info.update(gpu_ms=ms, GBps=2 * 4 * ROWS * N / ms / 1e6)


def _backward_call(op, x, dy, out, w, algorithm, saved):
    if op in ("softmax", "log_softmax"):
        return getattr(gpuprims, op + "_backward")(saved[0], dy, out=out, algorithm=algorithm)
    if op == "layer_norm":
        return gpuprims.layer_norm_backward(dy, x, w, *saved, out=out, algorithm=algorithm)
    return gpuprims.rms_norm_backward(dy, x, w, *saved, out=out, algorithm=algorithm)


@pytest.mark.parametrize("op,algorithm", [(op, v.name) for op in OPS for v in gpuprims.variants(op + "_backward")])
def test_norms_backward_float32(benchmark, data, op, algorithm):
    """Bytes: dy and the saved row read once, dx written once."""
    x, out, w, _ = data
    dy = torch.randn_like(x)
    if op in ("softmax", "log_softmax"):
        saved = (getattr(gpuprims, op)(x),)
    elif op == "layer_norm":
        saved = gpuprims.layer_norm(x, w, return_stats=True)[1:]
    else:
        saved = gpuprims.rms_norm(x, w, return_stats=True)[1:]

    def run():
        _backward_call(op, x, dy, out, w, algorithm, saved)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=20, warmup_rounds=3)
    ms = median_ms(lambda: _backward_call(op, x, dy, out, w, algorithm, saved))
    benchmark.extra_info.update(gpu_ms=ms, GBps=3 * 4 * ROWS * N / ms / 1e6)


@pytest.mark.parametrize("op", ("add_rms_norm", "add_layer_norm", "bias_dropout_add"))
def test_fused_float32(benchmark, data, op):
    """Bytes: add-norms read x and residual and write y and the sum; bias_dropout_add reads x and
    residual and writes out."""
    x, out, w, b = data
    r = torch.randn_like(x)
    call = {"add_rms_norm": lambda: gpuprims.add_rms_norm(x, r, w, out=out),
            "add_layer_norm": lambda: gpuprims.add_layer_norm(x, r, w, b, out=out),
            "bias_dropout_add": lambda: gpuprims.bias_dropout_add(x, b, r, 0.1, seed=1, offset=0, out=out)}[op]

    def run():
        call()
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=20, warmup_rounds=3)
    ms = median_ms(call)
    benchmark.extra_info.update(gpu_ms=ms, GBps=(3 if op == "bias_dropout_add" else 4) * 4 * ROWS * N / ms / 1e6)
