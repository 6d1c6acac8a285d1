"""scripts/gpu_check.sh's sanitizer step, run here with stand-in `compute-sanitizer` and `nvidia-smi`
scripts (no GPU, no build, no tests): a sanitizer killed by a signal before it printed anything is
rerun once on its own, its first log kept; one killed after printing, or one that passed, is not."""
from __future__ import annotations

import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]

# $2 is the tool (the script calls `compute-sanitizer --tool TOOL ...`). CRASH names the tool to kill
# with SIGSEGV on its first call, AFTER_OUTPUT=1 kills it after a line of pytest progress instead.
FAKE_SANITIZER = """#!/usr/bin/env bash
echo "========= COMPUTE-SANITIZER"
if [ "$2" = "$CRASH" ] && [ ! -e "$MARK" ]; then
  touch "$MARK"
  [ -n "$AFTER_OUTPUT" ] && echo "....."
  kill -SEGV $$
fi
echo "34 passed, 4460 deselected in 1.00s"
echo "========= ERROR SUMMARY: 0 errors"
"""


def run_check(tmp_path, crash="", after_output=""):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("compute-sanitizer", FAKE_SANITIZER), ("nvidia-smi", "#!/usr/bin/env bash\necho stand-in GPU\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SKIP_BUILD="1", SKIP_TESTS="1", SKIP_BENCH="1",
               CRASH=crash, AFTER_OUTPUT=after_output, MARK=str(tmp_path / "crashed"))
    proc = subprocess.run(["bash", "scripts/gpu_check.sh", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.split("===== summary", 1)[1]
    return out, summary


def test_sanitizer_killed_at_start_is_rerun(tmp_path):
    out, summary = run_check(tmp_path, crash="racecheck")
    assert "sanitizer racecheck (first run): killed at its start (rc=139" in summary
    assert "sanitizer racecheck: rc=0" in summary and "sanitizer memcheck: rc=0" in summary
    assert (out / "sanitizer_racecheck.crashed.txt").read_text().splitlines() == ["========= COMPUTE-SANITIZER", "rc=139"]


def test_sanitizer_killed_after_output_or_passing_is_not_rerun(tmp_path):
    out, summary = run_check(tmp_path, crash="memcheck", after_output="1")
    assert "first run" not in summary
    assert "sanitizer memcheck: rc=139" in summary and "sanitizer racecheck: rc=0" in summary
    assert not list(out.glob("*.crashed.txt"))
