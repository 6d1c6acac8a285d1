# Many contiguous rows of a few KiB (x.sum(-1), the first step of a two-step reduction): the
# `vectorized` block per row against `warp_per_row`, "auto" and torch.sum in one process (CUDA
# events, medians of 20, inputs rotated past L2, out= preallocated). Sets auto's row-length and
# row-count limits for warp_per_row (cpp/src/reduce/dispatch.cpp).
#   python3 bench/tune/reduce_short_rows.py
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms
from gpuprims.bench.reduce import _buffers

props = torch.cuda.get_device_properties(0)
print(props.name, f"copy {copy_gbps(1 << 30):.0f} GB/s (read + write)", flush=True)
ALGORITHMS = ("vectorized", "warp_per_row", "auto")


def case(label, shape, dtype, axes, algorithms=ALGORITHMS):
    n = 1
    for s in shape:
        n *= s
    xs = [b.view(shape) for b in _buffers(torch, n, dtype, props.L2_cache_size)]
    cur = [xs[0]]

    def rotate(i):
        cur[0] = xs[i % len(xs)]

    out = torch.sum(xs[0], dim=axes)
    nbytes = n * xs[0].element_size()
    t_torch = median_ms(lambda: torch.sum(cur[0], dim=axes, out=out), before=rotate)
    parts = [f"torch {t_torch:.4f}"]
    for algorithm in algorithms:
        t = median_ms(lambda: gpuprims.sum(cur[0], axis=axes, out=out, algorithm=algorithm), before=rotate)
        parts.append(f"{algorithm} {t:.4f} ({nbytes / t / 1e6:.0f} GB/s, {t_torch / t:.3f}x)")
    print(f"{label} {tuple(shape)} {str(dtype)[6:]} axis={axes}: " + ", ".join(parts), flush=True)


for row in (16, 32, 40):  # auto: thread_per_output up to 32 elements
    case("rows", (2**28 // row, row), torch.float32, (1,), ALGORITHMS + ("thread_per_output",))
for row in (48, 64, 128, 256, 512, 1024, 1536, 2048, 2560, 3136, 3584, 4096, 8192, 16384):
    case("rows", (2**28 // row, row), torch.float32, (1,))
for row in (64, 128, 1024, 2048, 4096, 8192):
    case("rows", (2**28 // row, row), torch.bfloat16, (1,))
    case("rows", (2**27 // row, row), torch.int32, (1,))
for rows in (66, 132, 528, 2112, 8448):  # few rows: where a warp each leaves the GPU idle
    for row in (1024, 4096):
        case("few rows", (rows, row), torch.float32, (1,))
case("two-step", (64, 4096, 1024), torch.float32, (0, 2))
case("two-step", (256, 64, 56, 56), torch.float32, (0, 2, 3))
case("two-step", (32, 2048, 4096), torch.bfloat16, (0, 2))
