"""Profiler evidence for the GEMM ladder (docs/gemm.md): one Nsight Compute report row per rung.

Run under ncu on the GPU machine (only the calls between cudaProfilerStart/Stop are profiled):

    ncu --clock-control none --profile-from-start off --csv --page raw \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        python3 scripts/profile_gemm.py > gemm_ncu.csv
    python3 scripts/profile_gemm.py --summarize gemm_ncu.csv

Each rung multiplies fresh random 4096^3 operands once after a warm-up call; cuBLAS (torch.matmul)
is profiled the same way as the reference row. --summarize prints the table the doc quotes.
"""
from __future__ import annotations

import csv
import io
import sys

SIZE = 4096
RUNGS = {
    "float32": ["naive", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d", "vectorized", "warptile"],
    "bfloat16": ["wmma", "mma_pipelined"],
}

# (column in the table, ncu raw metric): throughput, traffic, pipes, stalls, occupancy.
METRICS = [
    ("ms", "gpu__time_duration.sum"),
    ("SM %", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM %", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM GB", "dram__bytes.sum"),
    ("L2 GB", "lts__t_bytes.sum"),
    ("L1 GB", "l1tex__t_bytes.sum"),
    ("smem bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
    ("FMA pipe %", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("tensor pipe %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue %", "sm__inst_issued.avg.pct_of_peak_sustained_active"),
    ("occupancy %", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("regs", "launch__registers_per_thread"),
    ("stall long sb", "smsp__average_warp_latency_issue_stalled_long_scoreboard"),
    ("stall barrier", "smsp__average_warp_latency_issue_stalled_barrier"),
    ("stall mio", "smsp__average_warp_latency_issue_stalled_mio_throttle"),
    ("stall short sb", "smsp__average_warp_latency_issue_stalled_short_scoreboard"),
    ("stall math", "smsp__average_warp_latency_issue_stalled_math_pipe_throttle"),
]


def profile() -> None:
    import torch

    import gpuprims

    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype_name, rungs in RUNGS.items():
        dtype = getattr(torch, dtype_name)
        a = torch.randn(SIZE, SIZE, device="cuda", generator=gen).to(dtype)
        b = torch.randn(SIZE, SIZE, device="cuda", generator=gen).to(dtype)
        calls = [("cuBLAS", lambda: torch.matmul(a, b))]
        calls += [(r, (lambda r=r: gpuprims.matmul(a, b, algorithm=r))) for r in rungs]
        for name, fn in calls:
            fn()  # warm-up: module load, cuBLAS heuristics, shared-memory attributes
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            fn()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            print(f"# profiled {dtype_name} {name}", file=sys.stderr)


def summarize(path: str) -> str:
    """The doc's table from ncu's raw CSV: one row per profiled kernel, in launch order (cuBLAS, then
    the rungs of RUNGS, per dtype)."""
    with open(path, newline="") as f:
        text = f.read()
    start = text.find('"ID"')
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units, data = rows[0], rows[1], rows[2:]
    # Raw names carry a suffix (".ratio", ".sum", ...) that differs between ncu versions: match by prefix.
    col = {}
    for _, metric in METRICS:
        hits = [i for i, name in enumerate(header) if name == metric or name.startswith(metric + ".")]
        if hits:
            col[metric] = hits[0]
    kernel_col = header.index("Kernel Name") if "Kernel Name" in header else None
    out = ["| kernel | " + " | ".join(c for c, _ in METRICS) + " |", "| --- |" + " --- |" * len(METRICS)]
    for row in data:
        cells = []
        for column, metric in METRICS:
            if metric not in col or not row[col[metric]]:
                cells.append("n/a")
                continue
            value = float(row[col[metric]].replace(",", ""))
            unit = units[col[metric]]
            if column == "ms":
                value /= {"nsecond": 1e6, "usecond": 1e3, "msecond": 1.0, "second": 1e-3}.get(unit, 1e6)
            elif column.endswith("GB"):
                value /= {"byte": 1e9, "Kbyte": 1e6, "Mbyte": 1e3, "Gbyte": 1.0, "Tbyte": 1e-3}.get(unit, 1e9)
            cells.append(f"{value:.3g}" if abs(value) < 1e4 else f"{value:.3e}")
        kernel = row[kernel_col][:60] if kernel_col is not None else "?"
        out.append(f"| `{kernel}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summarize":
        print(summarize(sys.argv[2]))
    else:
        profile()
