"""row_on_chip's ragged kernels against row_staged's (the same softmax rows copied through shared
memory a run at a time; rows of up to 128 elements) and "auto" on contiguous rows of odd length,
and torch, in one process: docs/norms.md's "Rows back to back" figures. 2^26 elements a case; x one element
into its buffer with --offset.

    python bench/tune/norms_staged.py [--offset] [LENGTH ...]
"""
import sys

import torch
from norms_unaligned import compare, forward_cases

from gpuprims.bench._timing import copy_gbps

LENGTHS = (33, 63, 77, 100, 127)


def main():
    args = [a for a in sys.argv[1:] if a != "--offset"]
    offset = len(args) != len(sys.argv) - 1
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s", "offset 1" if offset else "")
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for n in [int(a) for a in args] or LENGTHS:
            rows = (1 << 26) // n
            x = torch.randn(rows * n + 1, device="cuda", dtype=dtype)[int(offset):][:rows * n].view(rows, n)
            w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
            b = torch.randn(n, device="cuda", dtype=dtype)
            for algorithm in ("row_on_chip", "row_staged", "auto"):
                for name, (ours, peer) in forward_cases(x, w, b, algorithm).items():
                    # log_softmax runs softmax's kernels; row_staged is the softmax kind's variant
                    if name == "softmax" or (name != "log_softmax" and algorithm != "row_staged"):
                        compare(f"{name} {algorithm}", x, ours, peer, copy)


if __name__ == "__main__":
    main()
