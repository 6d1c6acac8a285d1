"""Forward ops on rows that are not whole 16-byte vectors (row_on_chip's element-wise path:
odd lengths such as 8191 and 12289; softmax's ragged kernels; a vocabulary-sized 50257) against
torch on the same data: docs/norms.md's figures for the interleaved element layout and the
ragged rows. forward_cases and compare serve norms_row_lengths.py too.

    python bench/tune/norms_unaligned.py
"""
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms


def forward_cases(x, w, b, algorithm="auto"):
    """name -> (gpuprims call, torch call) for the forward ops on x's rows (last axis)."""
    n = x.shape[-1]
    a = {"algorithm": algorithm}
    return {
        "softmax": (lambda: gpuprims.softmax(x, **a), lambda: torch.softmax(x, -1)),
        "log_softmax": (lambda: gpuprims.log_softmax(x, **a), lambda: torch.log_softmax(x, -1)),
        "layer_norm": (lambda: gpuprims.layer_norm(x, w, b, **a),
                       lambda: torch.nn.functional.layer_norm(x, (n,), w, b)),
        "rms_norm": (lambda: gpuprims.rms_norm(x, w, **a), lambda: torch.nn.functional.rms_norm(x, (n,), w)),
    }


def compare(name, x, ours, peer, copy):
    """Checks ours() against peer(), times both and prints one line: ms, % of the copy bandwidth
    (x read, the result written), and the ratio to torch."""
    tight = x.dtype == torch.float32 and ours().dtype == torch.float32
    torch.testing.assert_close(ours(), peer(), rtol=1e-4 if tight else 2e-2, atol=2e-3)
    t_ours, t_peer = median_ms(ours), median_ms(peer)
    gbps = x.numel() * (x.element_size() + ours().element_size()) / t_ours / 1e6
    rows, n = x.shape
    print(f"{name} {rows}x{n} {str(x.dtype)[6:]}: gpuprims {t_ours:.4f} ms ({100 * gbps / copy:.1f} % of "
          f"copy), torch {t_peer:.4f} ms ({t_peer / t_ours:.3f}x torch)")


def main():
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s")
    for rows, n in ((16384, 8191), (8192, 12289), (65536, 1001), (4096, 50257)):
        for dtype in (torch.bfloat16, torch.float32):
            x = torch.randn(rows, n, device="cuda", dtype=dtype)
            w = torch.rand(n, device="cuda", dtype=dtype) + 0.5
            b = torch.randn(n, device="cuda", dtype=dtype)
            cases = forward_cases(x, w, b)
            if dtype == torch.bfloat16:  # softmax(x, dtype=): the converting kernels
                cases["softmax dtype=float32"] = (lambda: gpuprims.softmax(x, dtype=torch.float32),
                                                  lambda: torch.softmax(x, -1, dtype=torch.float32))
            for name, (ours, peer) in cases.items():
                compare(name, x, ours, peer, copy)


if __name__ == "__main__":
    main()
