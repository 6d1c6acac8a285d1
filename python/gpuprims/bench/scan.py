"""Scan benchmark: every variant next to cub::DeviceScan::InclusiveSum and torch.cumsum on the same
buffers, row scans next to torch.cumsum, compaction next to cub::DeviceSelect::Flagged and segmented
sums next to cub::DeviceSegmentedReduce::Sum.

Bytes are the minimum traffic (input read once, output written once); the ceiling is the
device-to-device copy bandwidth measured in the same run.
"""
from __future__ import annotations

import gpuprims
from gpuprims import _cub_ref

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache
SLOW = ("hillis_steele", "blelloch")  # the textbook rungs: fewer repetitions


def _rotating(torch, make, nbytes, l2_bytes):
    count = max(1, -(-ROTATE_FACTOR * l2_bytes // nbytes))
    bufs = [make() for _ in range(count)]
    cur = [bufs[0]]

    def rotate(i):
        cur[0] = bufs[i % len(bufs)]

    return cur, rotate


def _temp(torch, nbytes):
    return torch.empty(max(nbytes, 1), dtype=torch.uint8, device="cuda")


def _device_scan_case(torch, n, dtype, l2, copy, variants):
    dname = str(dtype).replace("torch.", "")
    gen = torch.Generator(device="cuda").manual_seed(7)
    make = (lambda: torch.randn(n, device="cuda", generator=gen)) if dtype.is_floating_point else \
        (lambda: torch.randint(-1000, 1000, (n,), device="cuda", dtype=dtype, generator=gen))
    elem = torch.empty((), dtype=dtype).element_size()
    cur, rotate = _rotating(torch, make, n * elem, l2)
    out = torch.empty(n, device="cuda", dtype=dtype)
    stream = torch.cuda.current_stream().cuda_stream
    temp_bytes = _cub_ref.inclusive_sum(dname, 0, 0, n, 0, 0, stream)
    temp = _temp(torch, temp_bytes)
    case = f"inclusive sum {dname} n={n}" + (" dtype=int32" if dname == "int32" else "")
    nbytes = 2 * n * elem
    rows = []
    cub_ms = median_ms(lambda: _cub_ref.inclusive_sum(dname, cur[0].data_ptr(), out.data_ptr(), n, temp.data_ptr(),
                                                      temp_bytes, stream), before=rotate)
    rows.append(("cub::DeviceScan::InclusiveSum", cub_ms))
    rows.append(("torch.cumsum", median_ms(lambda: torch.cumsum(cur[0], 0, dtype=dtype, out=out), before=rotate)))
    for name in variants:
        reps = 5 if name in SLOW else 20
        rows.append((name, median_ms(lambda: gpuprims.cumsum(cur[0], dtype=dname, out=out, algorithm=name),
                                     before=rotate, reps=reps, warmup=1 if reps < 20 else 3)))
    rows.append(("auto", median_ms(lambda: gpuprims.cumsum(cur[0], dtype=dname, out=out), before=rotate)))
    return [bandwidth_row(case, impl, ms, nbytes, copy, cub_ms, "cub") for impl, ms in rows]


def _row_scan_case(torch, shape, l2, copy):
    n = shape[0] * shape[1]
    gen = torch.Generator(device="cuda").manual_seed(8)
    cur, rotate = _rotating(torch, lambda: torch.randn(shape, device="cuda", generator=gen), 4 * n, l2)
    out = torch.empty(shape, device="cuda")
    case = f"row scans float32 {shape[0]}x{shape[1]} axis=-1"
    peer_ms = median_ms(lambda: torch.cumsum(cur[0], -1, out=out), before=rotate)
    rows = [("torch.cumsum", peer_ms)]
    for name in ("decoupled_lookback", "reduce_then_scan", "warp_shuffle", "warp_per_row", "block_per_row", "auto"):
        rows.append((name, median_ms(lambda: gpuprims.cumsum(cur[0], axis=-1, out=out, algorithm=name),
                                     before=rotate)))
    return [bandwidth_row(case, impl, ms, 8 * n, copy, peer_ms, "torch") for impl, ms in rows]


def _compact_case(torch, n, l2, copy):
    gen = torch.Generator(device="cuda").manual_seed(9)
    xs = [torch.randn(n, device="cuda", generator=gen) for _ in range(2)]
    ms = [torch.rand(n, device="cuda", generator=gen) < 0.5 for _ in range(2)]
    cur = [xs[0], ms[0]]

    def rotate(i):
        cur[0], cur[1] = xs[i % 2], ms[i % 2]

    out = torch.empty(n, device="cuda")
    count = torch.empty((), dtype=torch.int64, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    temp_bytes = _cub_ref.select_flagged_f32(0, 0, 0, 0, n, 0, 0, stream)
    temp = _temp(torch, temp_bytes)
    selected = int(ms[0].sum())
    nbytes = 5 * n + 4 * selected  # values and flags read, selected values written
    case = f"compact float32 n={n} 50% random mask"
    cub_ms = median_ms(lambda: _cub_ref.select_flagged_f32(cur[0].data_ptr(), cur[1].data_ptr(), out.data_ptr(),
                                                           count.data_ptr(), n, temp.data_ptr(), temp_bytes, stream),
                       before=rotate)
    rows = [("cub::DeviceSelect::Flagged", cub_ms),
            ("torch.masked_select", median_ms(lambda: torch.masked_select(cur[0], cur[1]), before=rotate)),
            ("gpuprims.compact(out=)", median_ms(lambda: gpuprims.compact(cur[0], cur[1], out=out), before=rotate)),
            ("gpuprims.compact (exact size)", median_ms(lambda: gpuprims.compact(cur[0], cur[1]), before=rotate))]
    return [bandwidth_row(case, impl, ms, nbytes, copy, cub_ms, "cub") for impl, ms in rows]


def _segmented_case(torch, lengths, name, l2, copy):
    """Float32 sums over segments of the given lengths (a CPU int64 tensor): CUB, then gpuprims'
    auto and each variant."""
    segments, n = lengths.numel(), int(lengths.sum())
    gen = torch.Generator(device="cuda").manual_seed(10)
    cur, rotate = _rotating(torch, lambda: torch.randn(n, device="cuda", generator=gen), 4 * n, l2)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).cuda()
    out = torch.empty(segments, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    temp_bytes = _cub_ref.segmented_sum_f32(0, 0, segments, 0, 0, 0, stream)
    temp = _temp(torch, temp_bytes)
    case = f"segmented sum float32 {name}"
    cub_ms = median_ms(lambda: _cub_ref.segmented_sum_f32(cur[0].data_ptr(), out.data_ptr(), segments,
                                                          offsets.data_ptr(), temp.data_ptr(), temp_bytes, stream),
                       before=rotate)
    rows = [("cub::DeviceSegmentedReduce::Sum", cub_ms)]
    for algorithm in ["auto"] + [v.name for v in gpuprims.variants("segmented_reduce")]:
        label = "gpuprims.segmented_reduce" + ("" if algorithm == "auto" else f" {algorithm}")
        rows.append((label, median_ms(lambda: gpuprims.segmented_reduce(cur[0], offsets, out=out, algorithm=algorithm),
                                      before=rotate)))
    nbytes = 4 * n + 8 * (segments + 1) + 4 * segments
    return [bandwidth_row(case, impl, ms, nbytes, copy, cub_ms, "cub") for impl, ms in rows]


def _segmented_cases(torch, quick, l2, copy):
    """The issue's 65536 x 4096, longer regular segments, and random lengths of 1-8191 items."""
    scale = 16 if quick else 1
    full = torch.full
    cases = _segmented_case(torch, full((65536 // scale,), 4096, dtype=torch.int64), f"{65536 // scale} x 4096",
                            l2, copy)
    cases += _segmented_case(torch, full((16384 // scale,), 16384, dtype=torch.int64), f"{16384 // scale} x 16384",
                             l2, copy)
    gen = torch.Generator().manual_seed(11)
    random = torch.randint(1, 8192, (65536 // scale,), generator=gen, dtype=torch.int64)
    cases += _segmented_case(torch, random, f"{65536 // scale} random lengths 1-8191", l2, copy)
    return cases


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    n = 1 << (24 if quick else 28)
    ladder = [v.name for v in gpuprims.variants("scan") if v.name not in ("block_per_row", "warp_per_row", "columns")]
    cases = []
    cases += _device_scan_case(torch, n, torch.int32, l2, copy, ladder)
    cases += _device_scan_case(torch, n, torch.float32, l2, copy, ladder)
    if not quick:
        cases += _device_scan_case(torch, 2**31 + 17, torch.int32, l2, copy, ["decoupled_lookback", "lagged_lookback",
                                                                                "held_lookback"])
    cases += _row_scan_case(torch, (1024, 8192) if quick else (4096, 8192), l2, copy)
    cases += _compact_case(torch, n, l2, copy)
    cases += _segmented_cases(torch, quick, l2, copy)
    return {"family": "scan", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 48, 30)
    return "\n".join(lines)
