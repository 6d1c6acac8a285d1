# Session 37's new paths next to torch's same calls, in one process (CUDA events, medians of 20,
# inputs rotated past L2, out= preallocated): scans whose dtype= has no kernel of its own (x
# converted into out, then scanned in place), reductions over a tuple of axes, and a histogram
# with integer weights (no torch peer: the float64-weighted call beside it).
#   python3 bench/tune/session37_conversions.py
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from gpuprims.bench.reduce import _buffers

props = torch.cuda.get_device_properties(0)
print(props.name, f"copy {copy_gbps(1 << 30):.0f} GB/s (read + write)", flush=True)


def timed(label, ours, peer, xs, nbytes):
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    t_ours = median_ms(lambda: ours(cur[0]), before=rotate)
    t_peer = median_ms(lambda: peer(cur[0]), before=rotate) if peer else None
    line = f"{label}: gpuprims {t_ours:.4f} ms ({nbytes / t_ours / 1e6:.0f} GB/s)"
    if t_peer:
        line += f", torch {t_peer:.4f} ms, {t_peer / t_ours:.3f}x torch"
    print(line, flush=True)


n = 1 << 28
for src, dst in ((torch.int32, torch.float32), (torch.float32, torch.float32), (torch.int64, torch.int32),
                 (torch.float64, torch.float32)):
    xs = _buffers(torch, n, src, props.L2_cache_size)
    out = torch.empty(n, device="cuda", dtype=dst)
    name = f"cumsum {str(src)[6:]} -> {str(dst)[6:]} n=2^28"
    nbytes = n * (xs[0].element_size() + out.element_size())  # the minimum: x read, the result written
    timed(name, lambda x: gpuprims.cumsum(x, dtype=dst, out=out),
          lambda x: torch.cumsum(x, 0, dtype=dst, out=out), xs, nbytes)
    del xs, out

shape = (64, 4096, 1024)
xs = [b.view(shape) for b in _buffers(torch, 64 * 4096 * 1024, torch.float32, props.L2_cache_size)]
for axes in ((0, 2), (0, 1), (1, 2)):
    kept = [s for d, s in enumerate(shape) if d not in axes]
    out = torch.empty(kept, device="cuda")
    timed(f"sum float32 {shape} axis={axes}", lambda x: gpuprims.sum(x, axis=axes, out=out),
          lambda x: torch.sum(x, dim=axes, out=out), xs, xs[0].numel() * 4)
del xs
shape = (256, 64, 56, 56)  # NCHW: per-channel sums, as batch norm's statistics
xs = [b.view(shape) for b in _buffers(torch, 256 * 64 * 56 * 56, torch.float32, props.L2_cache_size)]
out = torch.empty(64, device="cuda")
timed(f"sum float32 {shape} axis=(0, 2, 3)", lambda x: gpuprims.sum(x, axis=(0, 2, 3), out=out),
      lambda x: torch.sum(x, dim=(0, 2, 3), out=out), xs, xs[0].numel() * 4)
del xs

xs = _buffers(torch, n, torch.float32, props.L2_cache_size)
w32 = torch.randint(0, 4, (n,), device="cuda", dtype=torch.int32)
w64 = w32.double()
h32 = torch.empty(256, device="cuda", dtype=torch.int32)
h64 = torch.empty(256, device="cuda", dtype=torch.float64)
timed("histogram 2^28 float32, 256 bins, int32 weights", lambda x: gpuprims.histogram(x, 256, (-4, 4), weights=w32, out=h32),
      None, xs, n * 8)
timed("histogram 2^28 float32, 256 bins, float64 weights", lambda x: gpuprims.histogram(x, 256, (-4, 4), weights=w64, out=h64),
      None, xs, n * 12)
