"""Norms benchmark: every variant of softmax, log_softmax, layer_norm and rms_norm next to torch
(the peer) on the same buffers.

Bytes are the minimum traffic: x read once and y written once (plus weight and bias, read once);
the ceiling is the device-to-device copy bandwidth measured in the same run. gpuprims writes into
a preallocated out=; torch allocates its result from its caching allocator (no cudaMalloc in the
timed region either way).
"""
from __future__ import annotations

import gpuprims

from ._timing import copy_gbps, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache
OPS = ("softmax", "log_softmax", "layer_norm", "rms_norm")


def _peer(torch, op, n):
    F = torch.nn.functional
    return {"softmax": (lambda x, w, b: torch.softmax(x, -1), "torch.softmax"),
            "log_softmax": (lambda x, w, b: torch.log_softmax(x, -1), "torch.log_softmax"),
            "layer_norm": (lambda x, w, b: F.layer_norm(x, (n,), w, b), "F.layer_norm"),
            "rms_norm": (lambda x, w, b: F.rms_norm(x, (n,), w, eps=1e-6), "F.rms_norm")}[op]


def _ours(op, x, w, b, out, algorithm):
    if op == "layer_norm":
        return gpuprims.layer_norm(x, w, b, out=out, algorithm=algorithm)
    if op == "rms_norm":
        return gpuprims.rms_norm(x, w, out=out, algorithm=algorithm)
    return getattr(gpuprims, op)(x, out=out, algorithm=algorithm)


def _case(torch, op, rows, n, dtype, l2_bytes, copy):
    elem = torch.empty((), dtype=dtype).element_size()
    count = max(1, -(-ROTATE_FACTOR * l2_bytes // (rows * n * elem)))
    gen = torch.Generator(device="cuda").manual_seed(1234)
    xs = [torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen) for _ in range(count)]
    w = torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5 if op in ("layer_norm", "rms_norm") else None
    b = torch.randn(n, device="cuda", dtype=dtype, generator=gen) if op == "layer_norm" else None
    out = torch.empty_like(xs[0])
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    nbytes = 2 * rows * n * elem + n * elem * ((w is not None) + (b is not None))
    peer_fn, peer_name = _peer(torch, op, n)
    peer_ms = median_ms(lambda: peer_fn(cur[0], w, b), before=rotate)
    timings = [(peer_name, peer_ms)]
    for v in gpuprims.variants(op):
        timings.append((v.name, median_ms(lambda: _ours(op, cur[0], w, b, out, v.name), before=rotate)))
    timings.append(("auto", median_ms(lambda: _ours(op, cur[0], w, b, out, "auto"), before=rotate)))
    dname = str(dtype).replace("torch.", "")
    case = f"{op} {dname} {rows}x{n}"
    return [_row(case, impl, ms, nbytes, copy, peer_ms) for impl, ms in timings]


def _row(case, impl, ms, nbytes, copy, peer_ms):
    gbps = nbytes / ms / 1e6
    return {"case": case, "impl": impl, "ms": ms, "GBps": gbps, "pct_copy": 100 * gbps / copy,
            "vs_peer": peer_ms / ms, "peer": "torch"}


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    shapes = ((2048, 8192), (8192, 4096)) if quick else ((16384, 8192), (65536, 4096))
    long_rows = (16, 262144) if quick else (256, 262144)
    cases = []
    for op in OPS:
        for dtype in (torch.float32, torch.bfloat16):
            for rows, n in shapes:
                cases += _case(torch, op, rows, n, dtype, l2, copy)
        cases += _case(torch, op, *long_rows, torch.float32, l2, copy)
    return {"family": "norms", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = [f"copy ceiling: {result['copy_GBps']:.0f} GB/s (read + write)", ""]
    lines.append(f"{'case':36s} {'impl':18s} {'ms':>9s} {'GB/s':>8s} {'%copy':>6s} {'x peer':>7s}")
    for r in result["cases"]:
        lines.append(f"{r['case']:36s} {r['impl']:18s} {r['ms']:9.4f} {r['GBps']:8.0f} {r['pct_copy']:6.1f} "
                     f"{r['vs_peer']:6.3f}x {r['peer']}")
    return "\n".join(lines)
