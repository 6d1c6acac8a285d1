"""The --shard=I/N option of tests/conftest.py (scripts/gpu_check.sh runs long files as several
processes with it): the shares of a file are disjoint, together its whole collection, even in size
but for the `big` tests, which all go to share 0."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _collected(*args):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", *args],
                         cwd=HERE, capture_output=True, text=True)
    return run.returncode, [line for line in run.stdout.splitlines() if "::" in line], run.stdout + run.stderr


def test_shards_partition_the_collection():
    rc, whole, out = _collected("test_dropout_gpu.py")
    big = _collected("test_dropout_gpu.py", "-m", "big")[1]
    assert rc == 0 and len(whole) > 3 and big, out
    shares = [_collected("test_dropout_gpu.py", f"--shard={i}/2")[1] for i in range(2)]
    assert sorted(shares[0] + shares[1]) == sorted(whole)
    assert set(big) <= set(shares[0])
    small = [[t for t in share if t not in big] for share in shares]
    assert abs(len(small[0]) - len(small[1])) <= 1, [len(s) for s in small]


def test_bad_shard_is_a_usage_error():
    for spec in ("2/2", "a/b"):
        rc, _, out = _collected("test_dropout_gpu.py", f"--shard={spec}")
        assert rc == 4 and "--shard: expected I/N" in out, (spec, out)
