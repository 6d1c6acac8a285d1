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

# (column in the table, ncu raw metric): throughput, traffic, pipes, stall reasons, occupancy; all
# collected by the sections named in the command above.
METRICS = [
    ("ms", "gpu__time_duration.sum"),
    ("SM %", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM GB", "dram__bytes.sum.per_second"),  # times the duration, below
    ("L2 %", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("L1 %", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    ("L1 hit %", "l1tex__t_sector_hit_rate.pct"),
    ("FMA pipe %", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("tensor pipe %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue %", "sm__issue_active.avg.pct_of_peak_sustained_elapsed"),
    ("warps/SM %", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("regs", "launch__registers_per_thread"),
    ("stall long sb", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"),
    ("stall barrier", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"),
    ("stall mio", "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"),
    ("stall short sb", "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"),
    ("stall math", "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio"),
    ("stall wait", "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"),
    ("stall not sel.", "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio"),
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
                value /= {"ns": 1e6, "us": 1e3, "ms": 1.0, "s": 1e-3}[unit]
                ms = value
            elif column == "DRAM GB":  # a rate: bytes = rate x duration
                scale = {"byte/s": 1.0, "Kbyte/s": 1e3, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Tbyte/s": 1e12}[unit]
                value = value * scale * ms * 1e-3 / 1e9
            cells.append(f"{value:.3g}" if abs(value) < 1e4 else f"{value:.3e}")
        kernel = row[kernel_col][:60] if kernel_col is not None else "?"
        out.append(f"| `{kernel}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summarize":
        print(summarize(sys.argv[2]))
    else:
        profile()
