"""pytest-benchmark regression runs of the reduce variants (GPU only).

Run and save a baseline, then compare later runs against it and fail on a slowdown:

    python -m pytest bench/test_bench_reduce.py --benchmark-save=reduce --benchmark-storage=file://.benchmarks/$GPU
    python -m pytest bench/test_bench_reduce.py --benchmark-compare --benchmark-compare-fail=median:10% \
        --benchmark-storage=file://.benchmarks/$GPU

Each round ends with a device synchronization, so the times are complete GPU work plus launch cost;
`extra_info` carries the CUDA-event median and GB/s that `python -m gpuprims.bench` reports.
"""
from __future__ import annotations

import pytest

import gpuprims
from gpuprims.bench._timing import median_ms, torch_cuda

torch = torch_cuda()
pytestmark = pytest.mark.skipif(torch is None, reason="needs torch with a CUDA GPU")
N = 1 << 26


@pytest.fixture(scope="module")
def data():
    return torch.randn(N, device="cuda"), torch.empty((), device="cuda")


@pytest.mark.parametrize("algorithm", [v.name for v in gpuprims.variants("reduce")
                                       if v.name not in ("atomic_naive", "thread_per_output", "warp_per_row")]
                         + ["auto"])  # one output: a single thread's (warp's) loop
def test_reduce_sum_float32(benchmark, data, algorithm):
    x, out = data

    def run():
        gpuprims.sum(x, out=out, algorithm=algorithm)
        torch.cuda.synchronize()

    benchmark.pedantic(run, rounds=30, warmup_rounds=3)
    ms = median_ms(lambda: gpuprims.sum(x, out=out, algorithm=algorithm))
    benchmark.extra_info.update(gpu_ms=ms, GBps=4 * N / ms / 1e6)
