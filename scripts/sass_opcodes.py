"""Counts chosen SASS opcodes per kernel of the installed library (GPU machine: needs cuobjdump).

    python3 scripts/sass_opcodes.py histogram ATOMS ATOM RED MATCH VOTE POPC REDUX

Prints, for every kernel whose demangled name contains the first argument, how many instructions
start with each opcode: what the compiler emitted for a variant (e.g. whether it aggregated
atomics itself) without reading thousands of lines of SASS.
"""
import collections
import re
import subprocess
import sys

import gpuprims._C as lib

pattern, opcodes = sys.argv[1], sys.argv[2:]
sass = subprocess.run(["cuobjdump", "-sass", lib.__file__], capture_output=True, text=True, check=True).stdout
counts, current = {}, None
for line in sass.splitlines():
    m = re.match(r"\s+Function : (\S+)", line)
    if m:
        name = subprocess.run(["c++filt", m.group(1)], capture_output=True, text=True).stdout.strip()
        current = name if pattern in name else None
        if current:
            counts[current] = collections.Counter()
        continue
    if current:
        m = re.search(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]*)?", line)
        if m and m.group(1) in opcodes:
            counts[current][m.group(1) + (m.group(2) or "")] += 1
for name, c in counts.items():
    print(f"{name[:160]}\n    " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) if c else f"{name[:160]}\n    (none)")
