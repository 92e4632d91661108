"""Scoring many windows with the small GPT: at once or a few windows at a time, and each
window's queries at once or a block at a time.

Run by hand (not part of pytest): ``python benchmarks/bench_eval.py``. :func:`gptembed.gpt.logits`
and :func:`gptembed.gpt.token_losses` send a batch of windows through the model in chunks of
about :data:`gptembed.gpt.EVAL_TOKENS` positions. This times ``token_losses`` on the batches the
chapters score (chapter 7: 256 windows of 128 characters with the stored model; chapter 10: 16
windows of 512 with its table grown four times) with ``EVAL_TOKENS`` at several sizes, against
the whole batch in one piece (the baseline, run in the same process), and checks that every size
gives the baseline's losses. Then the same with ``QUERY_BLOCK`` (the queries a head scores at
once, each block against the keys up to its last query) at several sizes, against every query at
once (one block). Each time is the median CPU time (``time.process_time``) of 7
repeats, the sizes interleaved in each repeat so that background load hits them alike; BLAS runs
on one thread, as the tests and the chapters run it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from bench_embedding import cpu_model  # noqa: E402  # run as a script, benchmarks/ is on the path

from gptembed import _transformer, gpt  # noqa: E402
from gptembed.gpt_runs import stored_run  # noqa: E402

SIZES = (256, 512, 1024, 4096)
"""The values of ``EVAL_TOKENS`` timed against the whole batch at once."""
BLOCKS = (16, 32, 64, 128)
"""The values of ``QUERY_BLOCK`` timed against every query at once."""
REPEATS = 7


def _losses(
    model: gpt.GPT, ids: np.ndarray, tokens: int, block: int = _transformer.QUERY_BLOCK
) -> tuple[float, np.ndarray]:
    """CPU seconds of one ``token_losses`` call with ``EVAL_TOKENS = tokens`` and
    ``QUERY_BLOCK = block``, and its losses."""
    gpt.EVAL_TOKENS, _transformer.QUERY_BLOCK = tokens, block
    start = time.process_time()
    losses = gpt.token_losses(model, ids[:, :-1], ids[:, 1:])
    return time.process_time() - start, losses


def main() -> None:
    default, default_block = gpt.EVAL_TOKENS, _transformer.QUERY_BLOCK
    whole = 10**9  # more positions than any batch: one piece
    model = stored_run(seed=0).model
    length = stored_run(seed=0).config.seq_len
    rng = np.random.default_rng(0)
    cases = {
        f"256 x {length} (chapter 7)": (model, rng.integers(0, 105, (256, length + 1))),
        f"16 x {4 * length} (chapter 10)": (
            gpt.at_length(model, 4 * length),
            rng.integers(0, 105, (16, 4 * length + 1)),
        ),
    }
    print(f"{cpu_model()}; numpy {np.__version__}; load {os.getloadavg()[0]:.2f}\n")
    print("| windows | at once (s) | " + " | ".join(f"{n} / at once" for n in SIZES) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in SIZES) + " |")
    for name, (m, ids) in cases.items():
        times: dict[int, list[float]] = {n: [] for n in (whole, *SIZES)}
        _, expected = _losses(m, ids, whole)  # warm-up, and the losses every size must give
        for _ in range(REPEATS):
            for n in times:
                seconds, losses = _losses(m, ids, n)
                np.testing.assert_allclose(losses, expected, rtol=1e-5, atol=1e-6)
                times[n].append(seconds)
        base = statistics.median(times[whole])
        ratios = " | ".join(f"{statistics.median(times[n]) / base:.2f}" for n in SIZES)
        print(f"| {name} | {base:.3f} | {ratios} |")
    head = " | ".join(f"{n} / at once" for n in BLOCKS)
    print(f"\n| windows | every query at once (s) | {head} |")
    print("| --- | ---: | " + " | ".join("---:" for _ in BLOCKS) + " |")
    for name, (m, ids) in cases.items():
        times = {n: [] for n in (whole, *BLOCKS)}
        _, expected = _losses(m, ids, default, whole)
        for _ in range(REPEATS):
            for n in times:
                seconds, losses = _losses(m, ids, default, n)
                np.testing.assert_allclose(losses, expected, rtol=1e-5, atol=1e-6)
                times[n].append(seconds)
        base = statistics.median(times[whole])
        ratios = " | ".join(f"{statistics.median(times[n]) / base:.2f}" for n in BLOCKS)
        print(f"| {name} | {base:.3f} | {ratios} |")
    gpt.EVAL_TOKENS, _transformer.QUERY_BLOCK = default, default_block
    print(f"\nThe package's EVAL_TOKENS: {default}; QUERY_BLOCK: {default_block}.")


if __name__ == "__main__":
    main()
