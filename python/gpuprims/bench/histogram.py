"""Histogram benchmark: every variant next to cub::DeviceHistogram::HistogramEven (uint8 and float32,
256 bins) and torch.bincount, on the same buffers in the same run.

Bytes are the minimum traffic: the samples read once plus the int64 counts written once; the
ceiling is the device-to-device copy bandwidth of the same run. The contention table runs every
variant on uniform, Zipf-skewed and single-bin uint8 data. CUB bins by its own rule (half-open,
float scale) and counts in int32; gpuprims reproduces numpy's rule and counts in int64: the
comparison is of speed, the tests check the counts.
"""
from __future__ import annotations

import gpuprims
from gpuprims import _cub_ref

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache
BINS = 256


def _rotating(torch, make, nbytes, l2_bytes):
    count = max(1, -(-ROTATE_FACTOR * l2_bytes // nbytes))
    return [make(i) for i in range(count)]


def _uint8_data(torch, kind, n, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    if kind == "uniform":
        return torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda", generator=gen)
    if kind == "one bin":
        return torch.full((n,), 77, dtype=torch.uint8, device="cuda")
    # Zipf-like (Pareto tail, exponent 1.3): value k with probability ~ k^-1.3; about 40 % in bin 1.
    out = torch.empty(n, dtype=torch.uint8, device="cuda")
    chunk = 1 << 26
    for s in range(0, n, chunk):
        u = torch.rand(min(chunk, n - s), device="cuda", generator=gen)
        out[s:s + chunk] = torch.clamp(torch.floor(u.pow(-1.0 / 0.3)), max=255).to(torch.uint8)
    return out


def _histogram_case(torch, case, xs, dtype, lower, upper, copy, slow_reps):
    n = xs[0].numel()
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    nbytes = n * xs[0].element_size() + BINS * 8
    out = torch.empty(BINS, dtype=torch.int64, device="cuda")
    counts = torch.empty(BINS, dtype=torch.int32, device="cuda")
    temp_bytes = _cub_ref.histogram_even_temp_bytes(dtype, BINS, n)
    temp = torch.empty(max(temp_bytes, 1), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    cub_ms = median_ms(lambda: _cub_ref.histogram_even(dtype, cur[0].data_ptr(), counts.data_ptr(), BINS, lower, upper,
                                                       n, temp.data_ptr(), temp_bytes, stream), before=rotate)
    rows = [("cub::DeviceHistogram::HistogramEven", cub_ms)]
    for v in gpuprims.variants("histogram"):
        reps = slow_reps if v.name == "global_atomics" else 20
        rows.append((v.name, median_ms(lambda: gpuprims.histogram(cur[0], BINS, (lower, upper), out=out,
                                                                  algorithm=v.name),
                                       before=rotate, reps=reps, warmup=1 if reps < 20 else 3)))
    rows.append(("auto", median_ms(lambda: gpuprims.histogram(cur[0], BINS, (lower, upper), out=out), before=rotate)))
    return [bandwidth_row(case, impl, ms, nbytes, copy, cub_ms, "cub") for impl, ms in rows]


def _bincount_case(torch, case, xs, copy):
    n = xs[0].numel()
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    nbytes = n + BINS * 8
    out = torch.empty(BINS, dtype=torch.int64, device="cuda")
    peer_ms = median_ms(lambda: torch.bincount(cur[0]), before=rotate)
    rows = [("torch.bincount", peer_ms),
            ("bincount (one pass, reads max: one sync)", median_ms(lambda: gpuprims.bincount(cur[0]), before=rotate)),
            ("bincount out= ignore (no sync)",
             median_ms(lambda: gpuprims.bincount(cur[0], out=out, out_of_range="ignore"), before=rotate))]
    return [bandwidth_row(case, impl, ms, nbytes, copy, peer_ms, "torch") for impl, ms in rows]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    n8 = 1 << (24 if quick else 29)
    n32 = 1 << (22 if quick else 28)
    nb = 1 << (24 if quick else 28)
    e8 = n8.bit_length() - 1
    cases = []
    for kind in ("uniform", "one bin", "zipf 1.3"):
        xs = _rotating(torch, lambda i, k=kind: _uint8_data(torch, k, n8, 1234 + i), n8, l2)
        cases += _histogram_case(torch, f"uint8 256 bins n=2^{e8} {kind}", xs, "uint8", 0, 256, copy, 3)
        del xs
    gen = torch.Generator(device="cuda").manual_seed(99)
    xs = _rotating(torch, lambda i: torch.rand(n32, device="cuda", generator=gen), 4 * n32, l2)
    cases += _histogram_case(torch, f"float32 256 bins [0, 1) n=2^{n32.bit_length() - 1}", xs, "float32", 0.0, 1.0,
                             copy, 3)
    del xs
    xs = _rotating(torch, lambda i: _uint8_data(torch, "uniform", nb, 77 + i), nb, l2)
    cases += _bincount_case(torch, f"bincount uint8 n=2^{nb.bit_length() - 1}", xs, copy)
    return {"family": "histogram", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 40, 36)
    return "\n".join(lines)
