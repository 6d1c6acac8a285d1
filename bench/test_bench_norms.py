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
