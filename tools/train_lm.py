"""Train the book's small GPT on the stored corpus and store it in the package.

    .venv/bin/python tools/train_lm.py             # seed 0: gptembed/data/gpt_seed0.npz
    .venv/bin/python tools/train_lm.py --seed 1    # seeds 1 and 2: chapter 7's seed checks
    .venv/bin/python tools/train_lm.py --scheme rotary --seed 2   # chapter 10's five schemes
    .venv/bin/python tools/train_lm.py --scheme none --bos --seed 1   # chapter 10's <bos> control
    .venv/bin/python tools/train_lm.py --scheme sinusoidal --scaled --seed 1   # its scale control

With ``--scheme`` it trains chapter 10's comparison instead: the same model and schedule at 64
characters, with that position scheme (``learned``, ``sinusoidal``, ``rotary``, ``alibi`` or
``none``), stored with its weights in float16 (``gptembed/data/scheme_rotary_seed2.npz``; 15
runs, so the package stays small) and read by ``gptembed.gpt_runs.stored_scheme_run``. With
``--bos`` as well, every window starts with a ``<bos>`` id (``GPTConfig.bos``), stored as
``gptembed/data/scheme_bos_none_seed1.npz``; with ``--scaled`` (``--scheme sinusoidal`` only)
the sinusoidal table is added at :data:`SCALED` rather than 0.02, stored as
``gptembed/data/scheme_scaled_sinusoidal_seed1.npz``. ``stored_scheme_run(..., control=...)``
reads both.

The chapters never train these models: they load what this stores
(``gptembed.gpt_runs.stored_run``), the weights, the loss of every step and the held-out loss every
100 steps, with the wall time and the machine's load while it ran. ``tests/test_gpt_runs.py``
re-runs the first steps and matches the stored curve. BLAS runs on one thread (``tools/_cli.py``,
imported before numpy loads), so a re-run on the same machine gives the same bits whatever the
machine's thread count; another CPU may round differently in the last bits.
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
from dataclasses import replace
from pathlib import Path

import numpy as np

from gptembed.corpus import held_out_stream, random_passages, train_stream
from gptembed.gpt import GPT, evaluate, prepend_bos, train
from gptembed.gpt_config import BOS_ID, GPTConfig
from gptembed.gpt_runs import StoredRun, save
from gptembed.positions import SCHEMES

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

SCHEME_LEN = 64
"""The context of chapter 10's five runs: half the stored run's, so that 15 runs train in an hour
and the chapter can score them out to four times it."""

HELD_OUT_EVERY = 100
"""Steps between two held-out losses in the log and the stored curve."""

HELD_OUT_PASSAGES, HELD_OUT_SEED = 64, 99
HELD_OUT = random_passages(held_out_stream(), HELD_OUT_PASSAGES, CONFIG.seq_len, seed=HELD_OUT_SEED)
"""The held-out passages the curve is measured on (stored in the run's info, under the key the
stored runs have, ``held_out_windows``)."""


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


BOS_FLAG, SCALED_FLAG = "--bos", "--scaled"
"""The flags of chapter 10's two controls (taken off the command line before ``_cli`` parses
it): ``<bos>`` in front of every window, and the sinusoidal table at :data:`SCALED`."""

SCALED = 0.1
"""The sinusoidal table's scale in the ``--scaled`` control: its rows then about as long as the
learned table's after training, as the token rows are (0.02 is their length at initialisation)."""


def _flag(name: str) -> bool:
    """Whether ``name`` is on the command line; it is taken off it."""
    found = name in sys.argv[1:]
    if found:
        sys.argv.remove(name)
    return found


def main() -> None:
    bos, scaled = _flag(BOS_FLAG), _flag(SCALED_FLAG)
    seed, out, scheme = _cli.seed_and_out(
        __doc__.split("\n")[0],
        "seed of the weights and batches",
        "gpt",
        schemes=SCHEMES,
        scheme_stem="scheme" + ("_bos" if bos else "") + ("_scaled" if scaled else ""),
    )
    if (bos or scaled) and scheme is None:
        sys.exit(f"{BOS_FLAG} and {SCALED_FLAG} need --scheme: they are chapter 10's controls")
    if scaled and scheme != "sinusoidal":
        sys.exit(f"{SCALED_FLAG} scales the sinusoidal table: it needs --scheme sinusoidal")
    config = replace(CONFIG, seed=seed)
    held_out = HELD_OUT
    if scheme is not None:
        chosen = SCHEMES[SCHEMES.index(scheme)]  # the Scheme that argparse checked it is
        config = replace(config, seq_len=SCHEME_LEN, scheme=chosen)
        held_out = random_passages(
            held_out_stream(), HELD_OUT_PASSAGES, SCHEME_LEN, seed=HELD_OUT_SEED
        )
        if bos:
            config = replace(config, vocab_size=BOS_ID + 1, bos=True)
            held_out = prepend_bos(*held_out)
        if scaled:
            config = replace(config, sinusoidal_scale=SCALED)
    held_steps: list[int] = []
    held_losses: list[float] = []
    load_start = os.getloadavg()
    start = time.perf_counter()

    def log(done: int, model: GPT) -> None:
        if done % HELD_OUT_EVERY == 0 or done == config.steps:
            held_steps.append(done)
            held_losses.append(evaluate(model, *held_out).loss)
            elapsed = time.perf_counter() - start
            print(
                f"step {done:5d}  held-out {held_losses[-1]:.4f}  "
                f"{elapsed:6.0f} s  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )

    result = train(config, train_stream(), after_step=log)
    seconds = time.perf_counter() - start
    info = {
        "command": "python tools/train_lm.py"
        + ("" if scheme is None else f" --scheme {scheme}")
        + (f" {BOS_FLAG}" if bos else "")
        + (f" {SCALED_FLAG}" if scaled else "")
        + f" --seed {seed}",
        "seconds": round(seconds, 1),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "blas_threads": 1,
        "held_out_windows": {"windows": HELD_OUT_PASSAGES, "seed": HELD_OUT_SEED},
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
    save(out, run, weights_dtype=None if scheme is None else np.float16)
    print(f"stored {out} ({out.stat().st_size:,} bytes) after {seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
