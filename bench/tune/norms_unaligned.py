"""Forward ops on rows that are not whole 16-byte vectors (row_on_chip's element-wise path:
odd lengths such as 8191 and 12289; softmax's ragged kernels; a vocabulary-sized 50257) against
torch on the same data: docs/norms.md's figures for the interleaved element layout and the
ragged rows.

    python bench/tune/norms_unaligned.py
"""
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms


def main():
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s")
    for rows, n in ((16384, 8191), (8192, 12289), (65536, 1001), (4096, 50257)):
        for dtype in (torch.bfloat16, torch.float32):
            x = torch.randn(rows, n, device="cuda", dtype=dtype)
            w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
            b = torch.randn(n, device="cuda", dtype=dtype)
            cases = {
                "softmax": (lambda: gpuprims.softmax(x), lambda: torch.softmax(x, -1)),
                "log_softmax": (lambda: gpuprims.log_softmax(x), lambda: torch.log_softmax(x, -1)),
                "layer_norm": (lambda: gpuprims.layer_norm(x, w, b),
                               lambda: torch.nn.functional.layer_norm(x, (n,), w, b)),
                "rms_norm": (lambda: gpuprims.rms_norm(x, w), lambda: torch.nn.functional.rms_norm(x, (n,), w)),
            }
            if dtype == torch.bfloat16:  # softmax(x, dtype=): the converting kernel's element-wise path
                cases["softmax dtype=float32"] = (lambda: gpuprims.softmax(x, dtype=torch.float32),
                                                  lambda: torch.softmax(x, -1, dtype=torch.float32))
            for name, (ours, peer) in cases.items():
                torch.testing.assert_close(ours(), peer(), rtol=2e-2 if dtype == torch.bfloat16 else 1e-4, atol=2e-3)
                t_ours, t_peer = median_ms(ours), median_ms(peer)
                gbps = x.numel() * (x.element_size() + ours().element_size()) / t_ours / 1e6
                print(f"{name} {rows}x{n} {str(dtype)[6:]}: gpuprims {t_ours:.4f} ms ({100 * gbps / copy:.1f} % of "
                      f"copy), torch {t_peer:.4f} ms ({t_peer / t_ours:.3f}x torch)")


if __name__ == "__main__":
    main()
