"""Reduce benchmark: every variant, CUB's DeviceReduce::Sum and torch.sum on the same buffers.

Bytes are the minimum traffic (the input read once plus the output written); the ceiling is the
device-to-device copy bandwidth measured in the same run.
"""
from __future__ import annotations

import gpuprims
from gpuprims import _cub_ref

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, host_us_per_call, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache


def _buffers(torch, n, dtype, l2_bytes):
    elem = torch.empty((), dtype=dtype).element_size()
    count = max(1, -(-ROTATE_FACTOR * l2_bytes // (n * elem)))
    gen = torch.Generator(device="cuda").manual_seed(1234)
    if dtype.is_floating_point:
        return [torch.randn(n, device="cuda", dtype=dtype, generator=gen) for _ in range(count)]
    return [torch.randint(-1000, 1000, (n,), device="cuda", dtype=dtype, generator=gen) for _ in range(count)]


def _full_sum_case(torch, name, n, dtype, l2_bytes, copy, slow_reps):
    xs = _buffers(torch, n, dtype, l2_bytes)
    dname = str(dtype).replace("torch.", "")
    out = torch.empty((), device="cuda", dtype=dtype)
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    nbytes = n * xs[0].element_size() + out.element_size()
    rows = []
    temp_bytes = _cub_ref.reduce_sum_temp_bytes(dname, n)
    temp = torch.empty(max(temp_bytes, 1), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    cub_ms = median_ms(lambda: _cub_ref.reduce_sum(dname, cur[0].data_ptr(), out.data_ptr(), n, temp.data_ptr(),
                                                   temp_bytes, stream), before=rotate)
    rows.append(("cub::DeviceReduce::Sum", cub_ms))
    rows.append(("torch.sum", median_ms(lambda: torch.sum(cur[0], dtype=dtype), before=rotate)))
    for v in gpuprims.variants("reduce"):
        if v.name in ("thread_per_output", "warp_per_row", "column_tiles"):
            continue  # one output: a single thread's (warp's, tile column's) work
        reps = slow_reps if v.name == "atomic_naive" else 20
        ms = median_ms(lambda: gpuprims.sum(cur[0], dtype=dname, out=out, algorithm=v.name), before=rotate,
                       reps=reps, warmup=1 if reps < 20 else 3)
        rows.append((v.name, ms))
    rows.append(("auto", median_ms(lambda: gpuprims.sum(cur[0], dtype=dname, out=out), before=rotate)))
    return [bandwidth_row(name, impl, ms, nbytes, copy, cub_ms, "cub") for impl, ms in rows]


def _axis_case(torch, name, shape, axis, l2_bytes, copy):
    n = shape[0] * shape[1]
    xs = [b.view(shape) for b in _buffers(torch, n, torch.float32, l2_bytes)]
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    out = torch.empty(shape[1 - axis], device="cuda")
    nbytes = 4 * (n + out.numel())
    peer_ms = median_ms(lambda: torch.sum(cur[0], dim=axis), before=rotate)
    rows = [("torch.sum", peer_ms)]
    for algorithm in ("vectorized", "warp_per_row", "column_tiles", "thread_per_output", "auto"):
        rows.append((algorithm, median_ms(lambda: gpuprims.sum(cur[0], axis=axis, out=out, algorithm=algorithm),
                                          before=rotate)))
    return [bandwidth_row(name, impl, ms, nbytes, copy, peer_ms, "torch") for impl, ms in rows]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    n = 1 << (24 if quick else 28)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    cases = []
    cases += _full_sum_case(torch, f"sum int32 n=2^{n.bit_length() - 1} dtype=int32", n, torch.int32, l2, copy, 3)
    cases += _full_sum_case(torch, f"sum float32 n=2^{n.bit_length() - 1}", n, torch.float32, l2, copy, 3)
    rows_shape = (4096, 2048) if quick else (16384, 8192)
    cases += _axis_case(torch, f"row sum float32 {rows_shape[0]}x{rows_shape[1]} axis=1", rows_shape, 1, l2, copy)
    cases += _axis_case(torch, f"column sum float32 {rows_shape[0]}x{rows_shape[1]} axis=0", rows_shape, 0, l2, copy)
    short_shape = (65536, 1024) if quick else (262144, 1024)  # rows of 4 KiB: a warp each
    cases += _axis_case(torch, f"row sum float32 {short_shape[0]}x{short_shape[1]} axis=1", short_shape, 1, l2, copy)

    small = torch.randn(1024, device="cuda")
    out = torch.empty((), device="cuda")
    overhead = {"case": "sum of 1024 float32 on the GPU, per call (enqueue + sync amortized)"}
    overhead.update(host_us_per_call({
        "gpuprims.sum_us": lambda: gpuprims.sum(small),
        "gpuprims.reduce_us": lambda: gpuprims.reduce(small),
        "torch.sum_us": lambda: torch.sum(small),
        "gpuprims.sum_out_us": lambda: gpuprims.sum(small, out=out),
    }))
    return {"family": "reduce", "copy_GBps": copy, "cases": cases, "host_overhead": overhead}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 44, 24)
    o = result["host_overhead"]
    lines += ["", f"{o['case']}: gpuprims.sum {o['gpuprims.sum_us']:.2f} us, gpuprims.reduce "
                  f"{o.get('gpuprims.reduce_us', float('nan')):.2f} us, with out= "
                  f"{o['gpuprims.sum_out_us']:.2f} us, torch.sum {o['torch.sum_us']:.2f} us"]
    return "\n".join(lines)
