"""The suite's time as CI sees it: `.ci/run` from clean clones of HEAD, with the machine's speed.

Run by hand (not part of pytest): ``python benchmarks/bench_suite.py [RUNS]`` (default 3); about
five minutes a run on the 2-core machine. Each run clones the repository's HEAD (as it was when
the script started: later commits do not change what it measures) into a temporary
folder and runs ``CI=true bash .ci/run CHECK`` for each of `.ci/run`'s default checks in its
order (together: one `.ci/run`), timing each; README's test command is the ``test`` check.

Beside each run, the machine's speed: the median time of a fixed numpy product (float64,
512 x 512 @ 512 x 512, on one BLAS thread) and of a fixed Python loop, before and after the run.
On a shared machine these move by 30 to 50% from one hour to the next; a suite time is read
against them. A run that fails stops the script with that check's output.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKS = ("lower-bounds", "install-check", "book", "test")
"""`.ci/run`'s default checks, in its order."""

PROBE = """
import statistics, time
import numpy as np
a = np.random.default_rng(0).standard_normal((512, 512))
def product():
    t = time.perf_counter(); a @ a; return time.perf_counter() - t
def loop():
    t = time.perf_counter(); sum(i * i for i in range(200_000)); return time.perf_counter() - t
for f in (product, loop):
    f()
print(statistics.median(product() for _ in range(41)), statistics.median(loop() for _ in range(21)))
"""


def probe() -> tuple[float, float]:
    """Median seconds of the fixed numpy product and of the fixed Python loop, in a new process
    on one BLAS thread."""
    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def run_once(folder: Path, commit: str) -> dict[str, float]:
    """Clone ``commit`` into ``folder`` and time each of `.ci/run`'s checks there, in seconds."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    subprocess.run(["git", "checkout", "-q", commit], cwd=folder, check=True)
    times = {}
    for check in CHECKS:
        start = time.perf_counter()
        result = subprocess.run(
            ["bash", ".ci/run", check],
            cwd=folder,
            env=os.environ | {"CI": "true"},
            capture_output=True,
            text=True,
        )
        times[check] = time.perf_counter() - start
        if result.returncode != 0:
            sys.exit(f"{check} failed:\n{result.stdout[-5000:]}\n{result.stderr[-5000:]}")
    return times


def main(runs: int) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    print(f"`.ci/run` from clean clones of {commit[:7]}, {os.cpu_count()} cores, seconds")
    print()
    print(f"| run | {' | '.join(CHECKS)} | whole | numpy product | Python loop |")
    print(f"| --- | {' | '.join('---' for _ in CHECKS)} | --- | --- | --- |")
    tests = []
    for run in range(1, runs + 1):
        before = probe()
        with tempfile.TemporaryDirectory(prefix="gptembed-ci-") as folder:
            times = run_once(Path(folder) / "clone", commit)
        after = probe()
        tests.append(times["test"])
        speed = [f"{a:.4f} to {b:.4f}" for a, b in zip(before, after, strict=True)]
        cells = [f"{times[check]:.1f}" for check in CHECKS]
        print(f"| {run} | {' | '.join(cells)} | {sum(times.values()):.1f} | {' | '.join(speed)} |")
    print()
    print(f"README's test command (`test`): median {statistics.median(tests):.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
