"""Reductions where torch.sum / torch.amax / torch.amin led the library (session 45's probe,
docs/reduce.md "Known gaps"): column sums of 2-byte items (axis 0), minima and maxima of 2^28
float16 / bfloat16, with their float32 neighbours as controls; since session 53 also float32 and
float64 minima and maxima (the operators without branches, docs/reduce.md). Each output is checked against a
float64 reference before timing (sums to a relative 1e-2 of the column's scale for 2-byte
results, 1e-4 else; minima and maxima exactly). Inputs rotate through 4x L2; GB/s counts the
bytes read and written once; the copy ceiling is measured in the same run.

    python3 bench/tune/reduce_torch_gaps.py [--passes 2] [--ops max,min]
"""
from __future__ import annotations

import argparse

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from scan_held_dtypes import Rotation, make, timing_fields  # this folder: run as a script

TORCH_OPS = {"sum": torch.sum, "max": torch.amax, "min": torch.amin}
# (op, shape, dtype, axis, view): view "offset1" reads x[:, 1:] (no 16-byte vectors in column tiles)
CASES = [("sum", (16384, 8192), "float16", 0, None), ("sum", (16384, 8192), "bfloat16", 0, None),
         ("sum", (16384, 8192), "float32", 0, None), ("sum", (16384, 8192), "float16", 0, "offset1"),
         ("max", (16384, 8192), "float16", 0, None), ("sum", (4096, 65536), "bfloat16", 0, None),
         ("sum", (65536, 1024), "float16", 0, None), ("sum", (16384, 8192), "int32", 0, None),
         ("max", (1 << 28,), "bfloat16", None, None), ("min", (1 << 28,), "float16", None, None),
         ("max", (1 << 28,), "float32", None, None), ("sum", (1 << 28,), "float16", None, None),
         ("min", (1 << 28,), "float32", None, None), ("max", (1 << 27,), "float64", None, None),
         ("max", (16384, 8192), "float32", 1, None), ("max", (16384, 8192), "float32", 0, None)]


def case(op, shape, dtype, axis, view, l2, copy):
    gen = torch.Generator(device="cuda").manual_seed(sum(shape))
    pick = (lambda t: t[:, 1:]) if view == "offset1" else (lambda t: t)
    inputs = Rotation(lambda: pick(make(shape, dtype, gen)), l2)
    bufs, rotate = inputs.bufs, inputs.rotate
    in_bytes = bufs[0].numel() * bufs[0].element_size()
    dims = () if axis is None else (axis,)
    result = gpuprims.reduce(bufs[0], op, axis)
    got = result.double()
    if op == "sum":
        ref = bufs[0].double().sum(dims)
        scale = bufs[0].double().abs().sum(dims) + 1.0
        tol = 1e-2 if bufs[0].element_size() == 2 else 1e-4
        ok = bool(((got - ref).abs() <= tol * scale).all())
    else:
        ref = TORCH_OPS[op](bufs[0].double(), dims)
        ok = bool((got == ref).all())
    nbytes = in_bytes + result.numel() * result.element_size()
    ms = {"gpuprims": median_ms(lambda: gpuprims.reduce(inputs.cur, op, axis), before=rotate),
          f"torch.{TORCH_OPS[op].__name__}": median_ms(lambda: TORCH_OPS[op](inputs.cur, dims), before=rotate)}
    t_gp, t_torch = ms.values()
    label = f"{op} {dtype} {'x'.join(map(str, shape))}{' ' + view if view else ''} axis={axis}"
    print("  ".join([f"{label:44s}", "ok" if ok else "MISMATCH"] + timing_fields(ms, nbytes, copy)
                    + [f"x torch {t_torch / t_gp:.2f}"]), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--ops", default="sum,max,min", help="comma-separated: run only the cases of these ops")
    args = ap.parse_args()
    ops = set(args.ops.split(","))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s; % of copy, bytes read + written")
    for p in range(args.passes):
        print(f"== pass {p + 1}")
        for c in CASES:
            if c[0] in ops:
                case(*c, l2, copy)


if __name__ == "__main__":
    main()
