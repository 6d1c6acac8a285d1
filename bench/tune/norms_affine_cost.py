# What the affine vectors cost the long-row norm kind: layer_norm and rms_norm through row_hold and
# cluster_row with weight and bias, with the weight only, and with neither, float32, 256 MiB of x
# per shape, beside log_softmax (the softmax kind's register loop, no vectors), % of the copy
# bandwidth of the same run (bytes: x read and y written; the vectors, read once per row from L2,
# are not counted). Every row's vectors are the same n elements, read again for each row's
# output pass: a hypothesis for the norm kind's gap to log_softmax on the H200.
#   python3 bench/tune/norms_affine_cost.py
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms

copy = copy_gbps(1 << 30)
print(f"{torch.cuda.get_device_name()}, copy {copy:.0f} GB/s", flush=True)
for n in (131072, 262144):
    rows = (256 << 20) // (4 * n)
    gen = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(rows, n, device="cuda", generator=gen)
    w = torch.rand(n, device="cuda", generator=gen) + 0.5
    b = torch.randn(n, device="cuda", generator=gen)
    out = torch.empty_like(x)
    pct = lambda ms: 100 * 2 * x.numel() * 4 / ms / 1e6 / copy
    for algorithm in ("row_hold", "cluster_row"):
        cells = {
            "layer_norm w b": lambda: gpuprims.layer_norm(x, w, b, out=out, algorithm=algorithm),
            "layer_norm w": lambda: gpuprims.layer_norm(x, w, None, out=out, algorithm=algorithm),
            "layer_norm": lambda: gpuprims.layer_norm(x, None, None, out=out, algorithm=algorithm),
            "rms_norm w": lambda: gpuprims.rms_norm(x, w, out=out, algorithm=algorithm),
            "rms_norm": lambda: gpuprims.rms_norm(x, None, out=out, algorithm=algorithm),
            "log_softmax": lambda: gpuprims.log_softmax(x, out=out, algorithm=algorithm),
        }
        line = "  ".join(f"{k} {pct(median_ms(f)):5.1f}" for k, f in cells.items())
        print(f"{algorithm:<11} {rows:>4}x{n:<7} {line}", flush=True)
    del x, out
    torch.cuda.empty_cache()
