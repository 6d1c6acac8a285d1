"""held_lookback against the look-back, dtype pair by dtype pair (int32 to its default int64 result,
int64, float64, float16, bfloat16 to float32, float32, int32; bool, int8 and int16 to their default
int64 results, float16 to float32), 1-D sizes from 2^20 items, through the library
(gpuprims.cumsum, out= given), with "auto", torch.cumsum and the copy ceiling of the same run.
Outputs of the two scans are compared (integers exactly, floats to a relative 1e-3 of the row's
scale) before timing. Inputs rotate through 4x L2.

    python3 bench/tune/scan_held_dtypes.py [--sizes 20,22,24,26,28] [--passes 2] [--pairs bool-int64,int8-int64]
"""
from __future__ import annotations

import argparse

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms

PAIRS = [("int32", "int64"), ("int64", "int64"), ("float64", "float64"), ("float16", "float16"),
         ("bfloat16", "float32"), ("float32", "float32"), ("int32", "int32"), ("bool", "int64"),
         ("int8", "int64"), ("int16", "int64"), ("float16", "float32")]
ALGORITHMS = ("decoupled_lookback", "held_lookback")


def make(shape, dtype, gen):
    """Random CUDA data of `shape` (an int or a tuple): normal floats, fair bools, small integers."""
    shape = shape if isinstance(shape, tuple) else (shape,)
    t = getattr(torch, dtype)
    if t.is_floating_point:
        return torch.randn(shape, device="cuda", generator=gen).to(t)
    if t == torch.bool:
        return torch.rand(shape, device="cuda", generator=gen) < 0.5
    bound = 100 if t == torch.int8 else 1000
    return torch.randint(-bound, bound, shape, device="cuda", dtype=t, generator=gen)


class Rotation:
    """Inputs cycled through 4x the L2, so that timed calls read them from DRAM: `cur` is the input
    in use, `rotate(i)` (median_ms's `before`) moves to the next. make_one() returns a new input."""

    def __init__(self, make_one, l2):
        first = make_one()
        nbytes = first.numel() * first.element_size()
        self.bufs = [first] + [make_one() for _ in range(max(1, -(-4 * l2 // nbytes)) - 1)]
        self.cur = first

    def rotate(self, i):
        self.cur = self.bufs[i % len(self.bufs)]


def timing_fields(ms, nbytes, copy):
    """'name time us % of copy' for each timed call (ms: name -> milliseconds)."""
    return [f"{name} {t * 1e3:8.1f} us {100 * nbytes / t / 1e6 / copy:5.1f} %" for name, t in ms.items()]


def case(n, src, dst, l2, copy):
    gen = torch.Generator(device="cuda").manual_seed(n)
    in_bytes = n * torch.empty((), dtype=getattr(torch, src)).element_size()
    out = torch.empty(n, device="cuda", dtype=getattr(torch, dst))
    inputs = Rotation(lambda: make(n, src, gen), l2)
    bufs, rotate = inputs.bufs, inputs.rotate
    results = {}
    for name in ALGORITHMS:
        results[name] = gpuprims.cumsum(bufs[0], dtype=dst, algorithm=name).double()
    a, b = results.values()
    scale = a.abs().max().item() + 1.0
    ok = (a - b).abs().max().item() <= (0 if dst.startswith("int") else 1e-3 * scale)
    nbytes = in_bytes + out.numel() * out.element_size()
    row = [f"{src}->{dst}", f"2^{n.bit_length() - 1}", "ok" if ok else "MISMATCH"]
    ms = {}
    for name in ALGORITHMS:
        ms[name] = median_ms(lambda: gpuprims.cumsum(inputs.cur, dtype=dst, out=out, algorithm=name), before=rotate)
    ms["auto"] = median_ms(lambda: gpuprims.cumsum(inputs.cur, dtype=dst, out=out), before=rotate)
    ms["torch.cumsum"] = median_ms(lambda: torch.cumsum(inputs.cur, 0, dtype=out.dtype, out=out), before=rotate)
    row += timing_fields(ms, nbytes, copy)
    row.append(f"held/lookback {ms['decoupled_lookback'] / ms['held_lookback']:.3f}x")
    print("  ".join(row), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20,22,24,26,28")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--pairs", default="", help="src-dst pairs to run, comma-separated (default: all)")
    args = ap.parse_args()
    pairs = [tuple(p.split("-")) for p in args.pairs.split(",")] if args.pairs else PAIRS
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s; % of copy, bytes read + written")
    for p in range(args.passes):
        print(f"== pass {p + 1}")
        for src, dst in pairs:
            for k in (int(s) for s in args.sizes.split(",")):
                case(1 << k, src, dst, l2, copy)


if __name__ == "__main__":
    main()
