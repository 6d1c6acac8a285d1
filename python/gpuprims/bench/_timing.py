"""CUDA-event timing, the copy-bandwidth ceiling and host overhead, measured the same way for us
and for the peers. Needs torch with CUDA (its events and allocator)."""
from __future__ import annotations

import statistics
import time

from gpuprims import _C


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def median_ms(fn, *, warmup: int = 3, reps: int = 20, before=None) -> float:
    """Median of `reps` CUDA-event timings of fn() after `warmup` calls. `before(i)` runs untimed
    ahead of rep i (buffer rotation)."""
    torch = torch_cuda()
    for i in range(warmup):
        if before:
            before(i)
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if before:
            before(i)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def copy_gbps(nbytes: int) -> float:
    """Device-to-device copy bandwidth, bytes read + written, the memory-bound ceiling."""
    torch = torch_cuda()
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), reps=30)
    return 2 * nbytes / ms / 1e6


def host_us_per_call(fns: dict, *, calls: int = 2000, rounds: int = 15) -> dict:
    """Per-call cost of each function, enqueue and synchronization amortized: `calls` back-to-back
    calls then one sync, the functions interleaved round by round (so clock and load drift hit all
    alike); the median over rounds."""
    torch = torch_cuda()
    samples = {name: [] for name in fns}
    for fn in fns.values():
        for _ in range(200):
            fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            samples[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {name: statistics.median(v) for name, v in samples.items()}


def bandwidth_row(case: str, impl: str, ms: float, nbytes: int, copy: float, peer_ms: float, peer: str) -> dict:
    """One benchmark row: time, bandwidth over the minimum bytes, % of the copy ceiling, ratio to the peer."""
    gbps = nbytes / ms / 1e6
    return {"case": case, "impl": impl, "ms": ms, "GBps": gbps, "pct_copy": 100 * gbps / copy,
            "vs_peer": peer_ms / ms, "peer": peer}


def bandwidth_table(result: dict, case_width: int, impl_width: int) -> list:
    """The lines of a family's bandwidth table (bandwidth_row rows): the copy ceiling, then a row per case."""
    lines = [f"copy ceiling: {result['copy_GBps']:.0f} GB/s (read + write)", ""]
    lines.append(f"{'case':{case_width}s} {'impl':{impl_width}s} {'ms':>9s} {'GB/s':>8s} {'%copy':>6s} {'x peer':>7s}")
    for r in result["cases"]:
        lines.append(f"{r['case']:{case_width}s} {r['impl']:{impl_width}s} {r['ms']:9.4f} {r['GBps']:8.0f} "
                     f"{r['pct_copy']:6.1f} {r['vs_peer']:6.3f}x {r['peer']}")
    return lines


def gpu_info() -> dict:
    torch = torch_cuda()
    p = torch.cuda.get_device_properties(0)
    # dram_gbps_per_sm: what the dispatch rules that differ between an H100 and an H200 read
    # (reduce's "auto" for long rows, norms' row_lag), so a result file shows which side it ran.
    return {"name": p.name, "sm_count": p.multi_processor_count, "l2_bytes": getattr(p, "L2_cache_size", None),
            "memory_bytes": p.total_memory, "dram_gbps_per_sm": round(_C.dram_gbps_per_sm(0), 1),
            "torch": torch.__version__, "cuda": torch.version.cuda, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
