"""pytest-benchmark regression runs of the topk variants (GPU only).

Run and save a baseline, then compare later runs against it and fail on a slowdown:

    python -m pytest bench/test_bench_topk.py --benchmark-save=topk --benchmark-storage=file://.benchmarks/$GPU
    python -m pytest bench/test_bench_topk.py --benchmark-compare --benchmark-compare-fail=median:10% \
        --benchmark-storage=file://.benchmarks/$GPU

Each round ends with a device synchronization; `extra_info` carries the CUDA-event median and GB/s
(x read once) that `python -m gpuprims.bench topk` reports.
"""
from __future__ import annotations

import pytest

import gpuprims
from gpuprims.bench._timing import median_ms, torch_cuda

torch = torch_cuda()
pytestmark = pytest.mark.skipif(torch is None, reason="needs torch with a CUDA GPU")
CASES = {"64x131072": ((64, 131072), (50, 1024)), "2^24": ((1 << 24,), (100,)), "256x50257": ((256, 50257), (50,)),
         "16384x1024": ((16384, 1024), (8,))}


@pytest.fixture(scope="module")
def data():
    gen = torch.Generator(device="cuda").manual_seed(7)
    return {name: torch.randn(shape, device="cuda", generator=gen) for name, (shape, _) in CASES.items()}


@pytest.mark.parametrize("case, k", [(name, k) for name, (_, ks) in CASES.items() for k in ks])
@pytest.mark.parametrize("algorithm", [v.name for v in gpuprims.variants("topk")] + ["auto"])
def test_topk_float32(benchmark, data, case, k, algorithm):
    x = data[case]
    out = (torch.empty(x.shape[:-1] + (k,), device="cuda"),
           torch.empty(x.shape[:-1] + (k,), dtype=torch.int64, device="cuda"))

    def run():
        gpuprims.topk(x, k, out=out, algorithm=algorithm)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=30, warmup_rounds=3)
    ms = median_ms(lambda: gpuprims.topk(x, k, out=out, algorithm=algorithm))
    benchmark.extra_info.update(gpu_ms=ms, GBps=x.numel() * x.element_size() / ms / 1e6)
