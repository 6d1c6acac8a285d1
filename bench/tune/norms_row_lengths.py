"""Forward ops across row lengths (2^26 elements each case, well beyond L2; 12289: unaligned) against
torch on the same data: docs/norms.md's figures for the tiles between the warp tile and the
128-thread block (kRowOnChipMidTiles, row_on_chip_launch.cuh).

    python bench/tune/norms_row_lengths.py [LENGTH ...]
"""
import sys

import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms

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
            cases = {
                "softmax": (lambda: gpuprims.softmax(x), lambda: torch.softmax(x, -1)),
                "layer_norm": (lambda: gpuprims.layer_norm(x, w, b),
                               lambda: torch.nn.functional.layer_norm(x, (n,), w, b)),
                "rms_norm": (lambda: gpuprims.rms_norm(x, w), lambda: torch.nn.functional.rms_norm(x, (n,), w)),
            }
            for name, (ours, peer) in cases.items():
                torch.testing.assert_close(ours(), peer(), rtol=2e-2 if dtype == torch.bfloat16 else 1e-4, atol=2e-3)
                t_ours, t_peer = median_ms(ours), median_ms(peer)
                gbps = 2 * x.numel() * x.element_size() / t_ours / 1e6
                print(f"{name} {rows}x{n} {str(dtype)[6:]}: gpuprims {t_ours:.4f} ms ({100 * gbps / copy:.1f} % of "
                      f"copy), torch {t_peer:.4f} ms ({t_peer / t_ours:.3f}x torch)")


if __name__ == "__main__":
    main()
