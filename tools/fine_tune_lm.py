"""Grow a stored small GPT's table to 256 rows three ways, fine-tune each, store the curves.

    .venv/bin/python tools/fine_tune_lm.py --seed 0   # gptembed/data/grown_seed0.npz (and 1, 2)

For the stored model of the seed (``gptembed.gpt_runs.stored_run``), each of ``fresh``, ``tile`` and
``interpolate`` grows the table (``gptembed.growth.grown``); the grown model is then trained as
``gptembed.growth.fine_tune_config`` says, every array, on passages of 256 characters, with the
held-out loss at the trained and the new positions measured every 25 steps. Chapter 9 plots what
this stores; ``tests/test_growth.py`` re-runs the first steps and matches the stored curves. BLAS
runs on one thread (``tools/_cli.py``), as in ``tools/train_lm.py``.
"""

from __future__ import annotations

# First, before numpy loads: BLAS on one thread (tools/_cli.py).
if __package__:  # imported, as tools.fine_tune_lm
    from tools import _cli
else:  # run as a script, `python tools/fine_tune_lm.py`: imports look in tools/ first
    import _cli  # type: ignore[no-redef]

import os
import platform
import sys
import time

import numpy as np

from gptembed.corpus import held_out_stream, random_passages, train_stream
from gptembed.embedding import EXTENSIONS
from gptembed.gpt import GPT, train
from gptembed.gpt_runs import stored_run
from gptembed.growth import (
    GROWN_LEN,
    GrowthCurves,
    fine_tune_config,
    grown,
    old_and_new,
    save_growth,
)

EVAL_EVERY = 25
"""Steps between two held-out measurements."""

EVAL_PASSAGES, EVAL_SEED = 32, 5
HELD_OUT = random_passages(held_out_stream(), EVAL_PASSAGES, GROWN_LEN, seed=EVAL_SEED)
"""The held-out passages of 256 characters the curves are measured on (stored in the info, under
the key the stored curves have, ``held_out_windows``)."""


def main() -> None:
    seed, out, _ = _cli.seed_and_out(
        __doc__.split("\n")[0], "the stored model to grow", "grown", seed_of="gpt"
    )
    run = stored_run(seed=seed)
    config = fine_tune_config(run.config)
    trained_len = run.config.seq_len
    steps = [0, *range(EVAL_EVERY, config.steps + 1, EVAL_EVERY)]
    old: dict[str, list[float]] = {}
    new: dict[str, list[float]] = {}
    losses: dict[str, np.ndarray] = {}
    start = time.perf_counter()
    for method in EXTENSIONS:
        model = grown(run.model, method)
        old[method], new[method] = [], []

        def measure(done: int, model: GPT, method: str = method) -> None:
            if done in steps:
                o, n = old_and_new(model, *HELD_OUT, trained_len)
                old[method].append(o)
                new[method].append(n)
                print(f"{method:12} step {done:4d}  old {o:.4f}  new {n:.4f}", flush=True)

        measure(0, model)
        losses[method] = train(config, train_stream(), model, after_step=measure).losses
    seconds = time.perf_counter() - start
    info = {
        "command": f"python tools/fine_tune_lm.py --seed {seed}",
        "seconds": round(seconds, 1),
        "held_out_windows": {"windows": EVAL_PASSAGES, "seed": EVAL_SEED},
        "cores": os.cpu_count(),
        "blas_threads": 1,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    curves = GrowthCurves(
        config,
        trained_len,
        np.array(steps),
        {m: np.array(v) for m, v in old.items()},
        {m: np.array(v) for m, v in new.items()},
        losses,
        info,
    )
    save_growth(out, curves)
    print(f"stored {out} ({out.stat().st_size:,} bytes) after {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
