"""Rows beyond one block: the long-row variants (split_row, cluster_row, row_lag, row_hold) and
"auto" next to torch, over row lengths from 32768 to 524288 (2 to 64 chunks of 8192), float32 and
bfloat16, softmax / layer_norm / rms_norm, each shape 256 MiB (float32) or 128 MiB (bfloat16) of x;
% of the copy bandwidth of the same run, as `python -m gpuprims.bench norms` counts it. The sweep
behind "auto"'s long-row rule (docs/norms.md "row_hold").

    python bench/tune/norms_long_rows.py [--passes 2] [--ops softmax,layer_norm,rms_norm]
        [--lengths 32768,65536] [--dtypes float32]
"""
from __future__ import annotations

import argparse

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms, torch_cuda
from gpuprims.bench.norms import _ours, _peer

VARIANTS = ("split_row", "cluster_row", "row_lag", "row_hold", "auto")
LENGTHS = (32768, 65536, 100000, 131072, 262144, 524288)


def case(torch, op, rows, n, dtype, copy):
    gen = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(rows, n, device="cuda", dtype=dtype, generator=gen)
    w = torch.rand(n, device="cuda", dtype=dtype, generator=gen) + 0.5 if op != "softmax" else None
    b = torch.randn(n, device="cuda", dtype=dtype, generator=gen) if op == "layer_norm" else None
    out = torch.empty_like(x)
    nbytes = 2 * x.numel() * x.element_size() + n * x.element_size() * ((w is not None) + (b is not None))
    peer, _ = _peer(torch, op, n)
    times = {"torch": median_ms(lambda: peer(x, w, b))}
    for v in VARIANTS:
        times[v] = median_ms(lambda: _ours(op, x, w, b, out, v))
    dname = str(dtype).replace("torch.", "")
    cells = "  ".join(f"{k} {100 * nbytes / ms / 1e6 / copy:5.1f}" for k, ms in times.items())
    print(f"{op:<11} {dname:<9} {rows:>5}x{n:<7} {cells}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--ops", default="softmax,layer_norm,rms_norm", help="also log_softmax")
    ap.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="row lengths, comma-separated")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    args = ap.parse_args()
    torch = torch_cuda()
    copy = copy_gbps(1 << 30)
    print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s; % of copy per variant")
    for _ in range(args.passes):
        for op in args.ops.split(","):
            for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
                for n in map(int, args.lengths.split(",")):
                    rows = (256 << 20) // (4 * n)  # the same row count for bfloat16 (half the bytes)
                    case(torch, op, rows, n, dtype, copy)
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
