"""The --shard=I/N option of tests/conftest.py (scripts/gpu_check.sh runs long files as several
processes with it): the shares of a file are disjoint and together its whole collection."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _collected(*args):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", *args],
                         cwd=HERE, capture_output=True, text=True)
    return run.returncode, [line for line in run.stdout.splitlines() if "::" in line], run.stdout + run.stderr


def test_shards_partition_the_collection():
    rc, whole, out = _collected("test_dropout.py")
    assert rc == 0 and len(whole) > 3, out
    shares = [_collected("test_dropout.py", f"--shard={i}/3")[1] for i in range(3)]
    assert sorted(sum(shares, [])) == sorted(whole)
    assert all(len(share) in (len(whole) // 3, len(whole) // 3 + 1) for share in shares)


def test_bad_shard_is_a_usage_error():
    for spec in ("3/3", "0/0", "a/b"):
        rc, _, out = _collected("test_dropout.py", f"--shard={spec}")
        assert rc == 4 and "--shard: expected I/N" in out, (spec, out)
