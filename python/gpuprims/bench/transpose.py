"""Transpose benchmark: every variant next to torch's strided copy (out.copy_(x.permute(...)), the
copy that x.permute(...).contiguous() runs, into a preallocated output as ours), on the same
buffers in the same run.

Bytes are the minimum traffic: x read once and the result written once, the traffic of a copy,
so % of the device-to-device copy of the same run is the whole story. Inputs are 256 or 512 MiB
(quick: 1/8), several times the L2.
"""
from __future__ import annotations

import gpuprims

from ._timing import bandwidth_row, bandwidth_table, copy_gbps, median_ms, torch_cuda


def _cases(quick: bool):
    """(name, dtype, shape, axes): 2-D transposes of every element size (float32 and bfloat16 also
    in ANCHORS.md's 16384 x 8192), a batch of 2-D transposes, a 3-D rotation of axes, attention's
    head swap (rows of 128 stay whole: short_row_kernel), rows of 4096 (row_kernel), an odd row
    length and an odd column count (a vocabulary: one side without aligned words) and a plain copy,
    each 256-512 MiB (quick: 1/8)."""
    s = 8 if quick else 1  # shrink the first axis
    return [("float32 8192x8192 .T", "float32", (8192 // s, 8192), None),
            ("float32 16384x8192 .T", "float32", (16384 // s, 8192), None),
            ("bfloat16 16384x8192 .T", "bfloat16", (16384 // s, 8192), None),
            ("bfloat16 8192x16384 .T", "bfloat16", (8192 // s, 16384), None),
            ("uint8 16384x16384 .T", "uint8", (16384 // s, 16384), None),
            ("float64 4096x8192 .T", "float64", (4096 // s, 8192), None),
            ("float32 64x1024x1024 (0, 2, 1)", "float32", (64 // s, 1024, 1024), (0, 2, 1)),
            ("float32 256x512x512 (2, 0, 1)", "float32", (256 // s, 512, 512), (2, 0, 1)),
            ("bfloat16 8x32x4096x128 (0, 2, 1, 3)", "bfloat16", (8 // s, 32, 4096, 128), (0, 2, 1, 3)),
            ("float32 256x64x4096 (1, 0, 2)", "float32", (256 // s, 64, 4096), (1, 0, 2)),
            ("float32 4096x8191 .T (odd rows)", "float32", (4096 // s, 8191), None),
            ("bfloat16 50257x4096 .T (odd columns)", "bfloat16", (50257 // s, 4096), None),
            ("float32 8192x8192 (0, 1): a copy", "float32", (8192 // s, 8192), (0, 1))]


def _case(torch, name, dtype, shape, axes, copy):
    gen = torch.Generator(device="cuda").manual_seed(len(name))
    x = torch.randn(shape, device="cuda", generator=gen).to(getattr(torch, dtype)) if dtype != "uint8" else \
        torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=gen)
    perm = tuple(range(x.ndim - 1, -1, -1)) if axes is None else axes
    view = x.permute(perm)
    out = torch.empty(view.shape, dtype=x.dtype, device="cuda")
    nbytes = 2 * x.numel() * x.element_size()
    peer_ms = median_ms(lambda: out.copy_(view))
    rows = [("torch out.copy_(x.permute)", peer_ms)]
    for v in gpuprims.variants("transpose"):
        rows.append((v.name, median_ms(lambda: gpuprims.transpose(x, axes, out=out, algorithm=v.name))))
    rows.append(("auto", median_ms(lambda: gpuprims.transpose(x, axes, out=out))))
    if not torch.equal(out, view):
        raise AssertionError(f"transpose bench: {name}: the result differs from torch's")
    return [bandwidth_row(name, impl, ms, nbytes, copy, peer_ms, "torch") for impl, ms in rows]


def run(quick: bool = False) -> dict:
    torch = torch_cuda()
    copy = copy_gbps(256 << 20 if quick else 1 << 30)
    cases = []
    for name, dtype, shape, axes in _cases(quick):
        cases += _case(torch, name, dtype, shape, axes, copy)
        torch.cuda.empty_cache()
    return {"family": "transpose", "copy_GBps": copy, "cases": cases}


def table(result: dict) -> str:
    lines = bandwidth_table(result, 36, 28)
    return "\n".join(lines)
