"""python -m gpuprims.bench FAMILY [--json PATH] [--quick]

Times every variant of a family and its best peer in the same process and prints a table (and
writes JSON). Needs a CUDA GPU and torch (for events, allocation and the framework peer).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys

from ._timing import gpu_info, torch_cuda

FAMILIES = ("reduce", "scan", "histogram", "norms", "gemm", "transpose", "topk")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuprims.bench", description=__doc__.splitlines()[2])
    parser.add_argument("family", choices=FAMILIES)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args(argv)
    if torch_cuda() is None:
        print("gpuprims.bench needs a CUDA GPU and torch with CUDA; none is visible here.", file=sys.stderr)
        return 2
    case = importlib.import_module(f".{args.family}", __package__)  # each family: run(quick), table(result)
    result = {"gpu": gpu_info(), "quick": args.quick, **case.run(quick=args.quick)}
    print(f"{result['gpu']['name']}, torch {result['gpu']['torch']}, CUDA {result['gpu']['cuda']}")
    print(case.table(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
