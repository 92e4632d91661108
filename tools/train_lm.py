"""Train the book's small GPT on the stored corpus and store it in the package.

    .venv/bin/python tools/train_lm.py             # seed 0: gptembed/data/gpt_seed0.npz
    .venv/bin/python tools/train_lm.py --seed 1    # seeds 1 and 2: chapter 9's seed checks

The chapters never train this model: they load what this stores (``gptembed.gpt.stored_run``),
the weights, the loss of every step and the held-out loss every 100 steps, with the wall time
and the machine's load while it ran. ``tests/test_gpt.py`` re-runs the first steps and
matches the stored curve. BLAS runs on one thread (``tools/_cli.py``, imported before numpy
loads), so a re-run on the same machine gives the same bits whatever the machine's thread count;
another CPU may round differently in the last bits.
"""

from __future__ import annotations

# First, before numpy loads: BLAS on one thread (tools/_cli.py).
if __package__:  # imported, as tools.train_lm
    from tools import _cli
else:  # run as a script, `python tools/train_lm.py`: imports look in tools/ first
    import _cli  # type: ignore[no-redef]

import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from gptembed.corpus import held_out_stream, random_windows, train_stream
from gptembed.gpt import GPT, GPTConfig, StoredRun, evaluate, save, train

CONFIG = GPTConfig(
    seq_len=128,
    n_layers=2,
    n_heads=4,
    embed_dim=64,
    batch_size=32,
    steps=3000,
    learning_rate=3e-3,
    warmup=100,
)
"""The stored run's sizes and schedule (the seed comes from the command line)."""

HELD_OUT_EVERY = 100
"""Steps between two held-out losses in the log and the stored curve."""

HELD_OUT_WINDOWS, HELD_OUT_SEED = 64, 99
HELD_OUT = random_windows(held_out_stream(), HELD_OUT_WINDOWS, CONFIG.seq_len, seed=HELD_OUT_SEED)
"""The held-out windows the curve is measured on (stored in the run's info)."""


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    seed, out = _cli.seed_and_out(__doc__.split("\n")[0], "seed of the weights and batches", "gpt")
    config = GPTConfig(**{**vars(CONFIG), "seed": seed})
    held_steps: list[int] = []
    held_losses: list[float] = []
    load_start = os.getloadavg()
    start = time.perf_counter()

    def log(done: int, model: GPT) -> None:
        if done % HELD_OUT_EVERY == 0 or done == config.steps:
            held_steps.append(done)
            held_losses.append(evaluate(model, *HELD_OUT).loss)
            elapsed = time.perf_counter() - start
            print(
                f"step {done:5d}  held-out {held_losses[-1]:.4f}  "
                f"{elapsed:6.0f} s  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )

    result = train(config, train_stream(), after_step=log)
    seconds = time.perf_counter() - start
    info = {
        "command": f"python tools/train_lm.py --seed {seed}",
        "seconds": round(seconds, 1),
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "blas_threads": 1,
        "held_out_windows": {"windows": HELD_OUT_WINDOWS, "seed": HELD_OUT_SEED},
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    run = StoredRun(
        result.model,
        config,
        result.losses,
        np.array(held_steps),
        np.array(held_losses),
        info,
    )
    save(out, run)
    print(f"stored {out} ({out.stat().st_size:,} bytes) after {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
