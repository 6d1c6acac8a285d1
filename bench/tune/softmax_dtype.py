"""softmax(x, dtype=) (x cast first by its framework, then the op in place) against
torch.softmax(x, -1, dtype=) on the same data, and the op without dtype=: docs/norms.md's figures
for dtype= (session 22 run 11).

    python bench/tune/softmax_dtype.py
"""
import torch

import gpuprims
from gpuprims.bench._timing import copy_gbps, median_ms


def main():
    print(torch.cuda.get_device_name(), "copy", round(copy_gbps(1 << 30)), "GB/s")
    for rows, n in ((16384, 8192), (65536, 4096)):
        for src, dst in ((torch.bfloat16, torch.float32), (torch.float16, torch.float32),
                         (torch.float32, torch.bfloat16)):
            x = torch.randn(rows, n, device="cuda").to(src)
            ours = lambda: gpuprims.softmax(x, dtype=dst)  # noqa: E731
            peer = lambda: torch.softmax(x, -1, dtype=dst)  # noqa: E731
            torch.testing.assert_close(ours(), peer(), rtol=2e-2 if dst == torch.bfloat16 else 1e-5, atol=1e-6)
            t_ours, t_peer = median_ms(ours), median_ms(peer)
            plain = median_ms(lambda: gpuprims.softmax(x))
            print(f"{rows}x{n} {str(src)[6:]}->{str(dst)[6:]}: gpuprims {t_ours:.4f} ms, torch {t_peer:.4f} ms "
                  f"({t_peer / t_ours:.3f}x torch); gpuprims without dtype= {plain:.4f} ms")


if __name__ == "__main__":
    main()
