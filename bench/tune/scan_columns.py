"""Scans along a strided axis (axis 0 of C-contiguous arrays): the `columns` variant (column tiles)
against the look-back per row (what "auto" took for fewer than 8448 columns before session 46),
"auto" and torch.cumsum, through the library with out= given, and the copy ceiling of the same run.
Each variant's output is compared with torch.cumsum's (integers exactly, floats to a relative 1e-3
of the column's scale) before timing. Inputs rotate through 4x L2.

    python3 bench/tune/scan_columns.py [--passes 1] [--algorithms columns,decoupled_lookback]
"""
from __future__ import annotations

import argparse

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from scan_held_dtypes import Rotation, make, timing_fields  # this folder: run as a script

# (shape, input dtype, result dtype)
CASES = [((4096, 8192), "float32", "float32"), ((8192, 4096), "int64", "int64"), ((8192, 4096), "int32", "int64"),
         ((8192, 8192), "bfloat16", "float32"), ((1000, 100000), "float32", "float32"),
         ((64, 1 << 20), "float32", "float32"), ((16, 1 << 22), "float32", "float32"),
         ((1 << 16, 2048), "float32", "float32"), ((1 << 17, 1024), "float32", "float32"),
         ((1 << 18, 512), "float32", "float32"), ((1 << 20, 64), "float32", "float32"),
         ((1 << 21, 32), "float32", "float32"), ((1 << 22, 16), "float32", "float32"),
         ((256, 64, 4096), "float32", "float32"), ((4096, 8192), "bool", "int64")]
ALGORITHMS = ("columns", "decoupled_lookback")


def case(shape, src, dst, l2, copy, algorithms):
    gen = torch.Generator(device="cuda").manual_seed(sum(shape))
    n = 1
    for s in shape:
        n *= s
    in_bytes = n * torch.empty((), dtype=getattr(torch, src)).element_size()
    out = torch.empty(shape, device="cuda", dtype=getattr(torch, dst))
    inputs = Rotation(lambda: make(shape, src, gen), l2)
    bufs, rotate = inputs.bufs, inputs.rotate
    ref = torch.cumsum(bufs[0], 0, dtype=out.dtype).double()
    scale = ref.abs().amax(0, keepdim=True) + 1.0
    row = [f"{src}->{dst} {'x'.join(map(str, shape))}"]
    ms = {}
    for name in algorithms + ("auto",):
        got = gpuprims.cumsum(bufs[0], axis=0, dtype=dst, algorithm=name).double()
        err = ((got - ref).abs() / scale).max().item()
        ok = err == 0 if dst.startswith("int") else err <= 1e-3
        row.append(f"{name} {'ok' if ok else f'MISMATCH {err:.2e}'}")
        ms[name] = median_ms(lambda: gpuprims.cumsum(inputs.cur, axis=0, dtype=dst, out=out, algorithm=name),
                             before=rotate)
    # torch.cumsum along axis 0 of a few columns takes seconds a call: one call is timed there
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cumsum(inputs.cur, 0, dtype=out.dtype, out=out)
    end.record()
    end.synchronize()
    once = start.elapsed_time(end)
    ms["torch.cumsum"] = once if once > 20 else median_ms(lambda: torch.cumsum(inputs.cur, 0, dtype=out.dtype, out=out),
                                                          before=rotate)
    nbytes = in_bytes + out.numel() * out.element_size()
    row += timing_fields(ms, nbytes, copy)
    row.append(f"auto x torch {ms['torch.cumsum'] / ms['auto']:.2f}")
    print("  ".join(row), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS), help="variants timed besides auto")
    args = ap.parse_args()
    algorithms = tuple(a for a in args.algorithms.split(",") if a)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s; % of copy, bytes read + written")
    for p in range(args.passes):
        print(f"== pass {p + 1}")
        for shape, src, dst in CASES:
            case(shape, src, dst, l2, copy, algorithms)


if __name__ == "__main__":
    main()
