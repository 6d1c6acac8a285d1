"""Top-k benchmark: every variant and "auto" next to torch.topk, sorted results into preallocated
outputs (torch.topk(..., out=)), on the same buffers in the same run.

Bytes are the minimum traffic: x read once (the k results are a rounding error beside it), so the
GB/s column is the read bandwidth and % copy compares it with the device-to-device copy of the same
run (read + write), the memory-bound ceiling. Inputs smaller than 4x the L2 rotate through enough
buffers to defeat the cache. Random normal data.
"""
from __future__ import annotations

import gpuprims

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, median_ms, torch_cuda

ROTATE_FACTOR = 4  # inputs smaller than 4x L2 rotate through enough buffers to defeat the cache
MAX_BUFFERS = 16


def _cases(quick: bool):
    """(name, dtype, shape, k): ANCHORS.md's few long rows (64 x 131072 with k = 50 and 1024, one row
    of 2^24 with k = 100), LLM sampling over a vocabulary (256 x 50257, k = 50) and many short rows
    (16384 x 1024, k = 8). quick: 1/8 of the rows (of the 1-D row's length)."""
    s = 8 if quick else 1
    return [(f"float32 {64 // s}x131072 k=50", "float32", (64 // s, 131072), 50),
            (f"float32 {64 // s}x131072 k=1024", "float32", (64 // s, 131072), 1024),
            (f"float32 2^{24 - 3 * (s > 1)} k=100", "float32", ((1 << 24) // s,), 100),
            (f"float32 {256 // s}x50257 k=50 (sampling)", "float32", (256 // s, 50257), 50),
            (f"float32 {16384 // s}x1024 k=8 (short rows)", "float32", (16384 // s, 1024), 8)]


def _buffers(torch, name, dtype, shape, l2_bytes):
    gen = torch.Generator(device="cuda").manual_seed(len(name))
    first = torch.randn(shape, device="cuda", generator=gen).to(getattr(torch, dtype))
    count = max(1, min(MAX_BUFFERS, -(-ROTATE_FACTOR * l2_bytes // (first.numel() * first.element_size()))))
    return [first] + [torch.randn(shape, device="cuda", generator=gen).to(first.dtype) for _ in range(count - 1)]


def _case(torch, name, dtype, shape, k, l2_bytes, copy):
    xs = _buffers(torch, name, dtype, shape, l2_bytes)
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    out_shape = shape[:-1] + (k,)
    peer = (torch.empty(out_shape, dtype=xs[0].dtype, device="cuda"),
            torch.empty(out_shape, dtype=torch.int64, device="cuda"))
    out = (torch.empty_like(peer[0]), torch.empty_like(peer[1]))
    nbytes = xs[0].numel() * xs[0].element_size()
    peer_ms = median_ms(lambda: torch.topk(cur[0], k, dim=-1, largest=True, sorted=True, out=peer), before=rotate)
    rows = [("torch.topk", peer_ms)]
    for algorithm in [v.name for v in gpuprims.variants("topk")] + ["auto"]:
        rows.append((algorithm, median_ms(lambda: gpuprims.topk(cur[0], k, out=out, algorithm=algorithm),
                                          before=rotate)))
        torch.topk(xs[0], k, dim=-1, out=peer)
        gpuprims.topk(xs[0], k, out=out, algorithm=algorithm)
        # sorted values are the same whichever of several tied elements each side took
        if not torch.equal(out[0], peer[0]) or not torch.equal(xs[0].gather(-1, out[1]), out[0]):
            raise AssertionError(f"topk bench: {name}: {algorithm}'s result differs from torch's")
    return [bandwidth_row(name, impl, ms, nbytes, copy, peer_ms, "torch") for impl, ms in rows]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    cases = []
    for name, dtype, shape, k in _cases(quick):
        cases += _case(torch, name, dtype, shape, k, l2, copy)
        torch.cuda.empty_cache()
    return {"family": "topk", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 36, 16)
    lines += ["", "GB/s: x read once; x peer: torch.topk's time over this row's (above 1: faster than torch)"]
    return "\n".join(lines)
