"""pytest-benchmark regression runs of the histogram variants (GPU only).

Run and save a baseline, then compare later runs against it and fail on a slowdown:

    python -m pytest bench/test_bench_histogram.py --benchmark-save=histogram --benchmark-storage=file://.benchmarks/$GPU
    python -m pytest bench/test_bench_histogram.py --benchmark-compare --benchmark-compare-fail=median:10% \
        --benchmark-storage=file://.benchmarks/$GPU

Each round ends with a device synchronization; `extra_info` carries the CUDA-event median and GB/s
that `python -m gpuprims.bench histogram` reports.
"""
from __future__ import annotations

import pytest

import gpuprims
from gpuprims.bench._timing import median_ms, torch_cuda

torch = torch_cuda()
pytestmark = pytest.mark.skipif(torch is None, reason="needs torch with a CUDA GPU")
N = 1 << 27


@pytest.fixture(scope="module")
def data():
    return {"uint8": torch.randint(0, 256, (N,), dtype=torch.uint8, device="cuda"),
            "float32": torch.rand(N // 4, device="cuda"),
            "out": torch.empty(256, dtype=torch.int64, device="cuda")}


@pytest.mark.parametrize("dtype,range_", [("uint8", (0, 256)), ("float32", (0.0, 1.0))])
@pytest.mark.parametrize("algorithm", [v.name for v in gpuprims.variants("histogram") if v.name != "global_atomics"]
                         + ["auto"])
def test_histogram_256_bins(benchmark, data, dtype, range_, algorithm):
    x, out = data[dtype], data["out"]

    def run():
        gpuprims.histogram(x, 256, range_, out=out, algorithm=algorithm)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=30, warmup_rounds=3)
    ms = median_ms(lambda: gpuprims.histogram(x, 256, range_, out=out, algorithm=algorithm))
    benchmark.extra_info.update(gpu_ms=ms, GBps=x.numel() * x.element_size() / ms / 1e6)
