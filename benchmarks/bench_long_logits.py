"""Scoring one long window with the small GPT: :func:`gptembed.gpt.logits` against
:func:`gptembed.gpt.forward`, and the memory a call leaves behind.

Run by hand (not part of pytest): ``python benchmarks/bench_long_logits.py``. A fresh model of
the stored runs' sizes (2 blocks of 4 heads, width 64, float32) with a table of ``LENGTH`` rows
scores one window of ``LENGTH`` random ids. ``forward`` keeps every block's ``(T, T)`` weights;
``logits`` works them out ``QUERY_BLOCK`` queries at a time. Each time is the median CPU time
(``time.process_time``) of 3 repeats; "kept" is what ``tracemalloc`` still counts as allocated
after the call returned and its result was dropped. BLAS runs on one thread, as the tests and
the chapters run it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from bench_embedding import cpu_model  # noqa: E402  # run as a script, benchmarks/ is on the path

from gptembed import gpt  # noqa: E402
from gptembed.gpt_config import GPTConfig  # noqa: E402

LENGTH = 4096
"""Positions of the window scored."""
REPEATS = 3


def _timed(call: Callable[[], object]) -> tuple[float, int]:
    """Median CPU seconds of ``call`` over :data:`REPEATS`, and the bytes the first call left
    allocated once its result was dropped."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.process_time()
    call()
    seconds = [time.process_time() - start]
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    for _ in range(REPEATS - 1):
        start = time.process_time()
        call()
        seconds.append(time.process_time() - start)
    return statistics.median(seconds), kept


def main() -> None:
    model = gpt.init_model(GPTConfig(seq_len=LENGTH))
    ids = np.random.default_rng(0).integers(0, model.embedding.vocab_size, (1, LENGTH))
    print(f"{cpu_model()}; numpy {np.__version__}; load {os.getloadavg()[0]:.2f}\n")
    print(f"| call, one window of {LENGTH:,} | CPU (s) | kept after the call (MiB) |")
    print("| --- | ---: | ---: |")
    for name, call in {
        "forward": lambda: gpt.forward(model, ids),
        "logits": lambda: gpt.logits(model, ids),
    }.items():
        seconds, kept = _timed(call)
        print(f"| `{name}` | {seconds:.2f} | {kept / 2**20:,.1f} |")


if __name__ == "__main__":
    main()
