"""Forward ops across row lengths (2^26 elements each case, well beyond L2; 12289: unaligned) against
torch on the same data: docs/norms.md's figures for the tiles between the warp tile and the
128-thread block (kRowOnChipMidTiles, row_on_chip_launch.cuh) and at both ends of the ladder.

    python bench/tune/norms_row_lengths.py [LENGTH ...]
"""
import sys

import torch
from norms_unaligned import compare, forward_cases

from gpuprims.bench._timing import copy_gbps

LENGTHS = (256, 512, 640, 768, 1000, 1024, 1536, 2048, 3072, 4096, 12288, 12289, 16384)


def main():
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s")
    for dtype in (torch.bfloat16, torch.float32):
        for n in [int(a) for a in sys.argv[1:]] or LENGTHS:
            rows = (1 << 26) // n
            x = torch.randn(rows, n, device="cuda", dtype=dtype)
            w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
            b = torch.randn(n, device="cuda", dtype=dtype)
            for name, (ours, peer) in forward_cases(x, w, b).items():
                if name != "log_softmax":  # as softmax (the same kernels)
                    compare(name, x, ours, peer, copy)


if __name__ == "__main__":
    main()
