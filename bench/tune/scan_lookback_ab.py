"""A/B timing of the look-back scan and compaction (bench/tune): run after each build variant.
python bench/tune/scan_lookback_ab.py LABEL  -> one line per case with ms and x CUB."""
import sys

import torch  # noqa: F401  (before gpuprims._cub_ref: importing _cub_ref first crashed torch's import on the H200 run 9)
from gpuprims.bench import scan
from gpuprims.bench._timing import copy_gbps, torch_cuda

torch = torch_cuda()
l2 = torch.cuda.get_device_properties(0).L2_cache_size
copy = copy_gbps(1 << 30)
rows = scan._device_scan_case(torch, 1 << 28, torch.float32, l2, copy, ["decoupled_lookback"])
rows += scan._device_scan_case(torch, 1 << 28, torch.int32, l2, copy, ["decoupled_lookback"])
rows += scan._compact_case(torch, 1 << 28, l2, copy)
for r in rows:
    print(f"{sys.argv[1]:10s} {r['case']:46s} {r['impl']:32s} {r['ms']:.4f} ms {r['pct_copy']:5.1f} % {r['vs_peer']:.3f}x")
