# The reduce benchmark's axis cases (python -m gpuprims.bench reduce: float32 16384 x 8192, out=, inputs
# rotated) three times in one process, in the benchmark's order and reversed, to see whether one
# variant's slow reading (docs/reduce.md, "Known gaps") repeats or follows a position.
#   python3 bench/tune/reduce_axis_repeat.py
import torch, gpuprims
from gpuprims.bench._timing import median_ms
from gpuprims.bench.reduce import _buffers
props = torch.cuda.get_device_properties(0)
shape = (16384, 8192)
xs = [b.view(shape) for b in _buffers(torch, shape[0] * shape[1], torch.float32, props.L2_cache_size)]
cur = [xs[0]]
def rotate(i): cur[0] = xs[i % len(xs)]
names = ("torch", "vectorized", "column_tiles", "auto")
for p in range(3):
    for axis in (1, 0):
        out = torch.empty(shape[1 - axis], device="cuda")
        order = names if p % 2 == 0 else names[::-1]
        got = {}
        for a in order:
            f = (lambda: torch.sum(cur[0], dim=axis)) if a == "torch" else (lambda a=a: gpuprims.sum(cur[0], axis=axis, out=out, algorithm=a))
            got[a] = median_ms(f, before=rotate)
        print(f"pass {p} axis {axis} order {'fwd' if p % 2 == 0 else 'rev'}: " + "  ".join(f"{a} {got[a]:.4f}" for a in names), flush=True)
