"""pytest-benchmark regression runs of the transpose variants (GPU only).

Run and save a baseline, then compare later runs against it and fail on a slowdown:

    python -m pytest bench/test_bench_transpose.py --benchmark-save=transpose --benchmark-storage=file://.benchmarks/$GPU
    python -m pytest bench/test_bench_transpose.py --benchmark-compare --benchmark-compare-fail=median:10% \
        --benchmark-storage=file://.benchmarks/$GPU

Each round ends with a device synchronization; `extra_info` carries the CUDA-event median and GB/s
(read + write) that `python -m gpuprims.bench transpose` reports.
"""
from __future__ import annotations

import pytest

import gpuprims
from gpuprims.bench._timing import median_ms, torch_cuda

torch = torch_cuda()
pytestmark = pytest.mark.skipif(torch is None, reason="needs torch with a CUDA GPU")


@pytest.fixture(scope="module")
def data():
    x = {"float32": torch.randn(8192, 8192, device="cuda"),
         "bfloat16": torch.randn(8192, 8192, device="cuda").bfloat16(),
         "uint8": torch.randint(0, 256, (8192, 8192), dtype=torch.uint8, device="cuda")}
    return {k: (v, torch.empty(v.shape[::-1], dtype=v.dtype, device="cuda")) for k, v in x.items()}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "uint8"])
@pytest.mark.parametrize("algorithm", [v.name for v in gpuprims.variants("transpose")] + ["auto"])
def test_transpose_8192_square(benchmark, data, dtype, algorithm):
    x, out = data[dtype]

    def run():
        gpuprims.transpose(x, out=out, algorithm=algorithm)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=30, warmup_rounds=3)
    ms = median_ms(lambda: gpuprims.transpose(x, out=out, algorithm=algorithm))
    benchmark.extra_info.update(gpu_ms=ms, GBps=2 * x.numel() * x.element_size() / ms / 1e6)
