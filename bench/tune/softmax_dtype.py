"""softmax(x, dtype=) against torch.softmax(x, -1, dtype=) on the same data, and the op without
dtype=: docs/norms.md's figures for dtype=. Rows up to 16384 elements of float16 / bfloat16 ->
float32 and float32 -> float16 / bfloat16 run the one-pass converting kernel; the 32768-element
rows convert first, then run in place (convert_rows + row_hold / cluster_row).

    python bench/tune/softmax_dtype.py
"""
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms


def main():
    copy = copy_gbps(1 << 30)
    print(torch.cuda.get_device_name(), "copy", round(copy), "GB/s")
    for rows, n in ((16384, 8192), (65536, 4096), (4096, 32768)):
        for src, dst in ((torch.bfloat16, torch.float32), (torch.float16, torch.float32),
                         (torch.float32, torch.bfloat16), (torch.float32, torch.float16)):
            x = torch.randn(rows, n, device="cuda").to(src)
            ours = lambda: gpuprims.softmax(x, dtype=dst)  # noqa: E731
            peer = lambda: torch.softmax(x, -1, dtype=dst)  # noqa: E731
            torch.testing.assert_close(ours(), peer(), rtol=2e-2 if dst != torch.float32 else 1e-5, atol=1e-6)
            t_ours, t_peer = median_ms(ours), median_ms(peer)
            plain = median_ms(lambda: gpuprims.softmax(x))
            gbps = rows * n * (x.element_size() + torch.empty((), dtype=dst).element_size()) / t_ours / 1e6
            print(f"{rows}x{n} {str(src)[6:]}->{str(dst)[6:]}: gpuprims {t_ours:.4f} ms ({gbps:.0f} GB/s, "
                  f"{100 * gbps / copy:.1f} % of copy), torch {t_peer:.4f} ms ({t_peer / t_ours:.3f}x torch); "
                  f"gpuprims without dtype= {plain:.4f} ms")


if __name__ == "__main__":
    main()
