"""Train the book's small GPT on the stored corpus and store it in the package.

    .venv/bin/python tools/train_lm.py             # seed 0: gptembed/data/gpt_seed0.npz
    .venv/bin/python tools/train_lm.py --seed 1    # seeds 1 and 2: chapter 7's seed checks
    .venv/bin/python tools/train_lm.py --scheme rotary --seed 2   # chapter 10's five schemes
    .venv/bin/python tools/train_lm.py --scheme none --bos --seed 1   # chapter 10's <bos> control
    .venv/bin/python tools/train_lm.py --scheme sinusoidal --scaled --seed 1   # its scale control
    .venv/bin/python tools/train_lm.py --scheme rotary --interpolated --seed 1   # rotary at 4T
    .venv/bin/python tools/train_lm.py --scheme learned --shifted --seed 1   # a table to 4T

With ``--scheme`` it trains chapter 10's comparison instead: the same model and schedule at 64
characters, with that position scheme (``learned``, ``sinusoidal``, ``rotary``, ``alibi`` or
``none``), stored with its weights in float16 (``gptembed/data/scheme_rotary_seed2.npz``; 15
runs, so the package stays small) and read by ``gptembed.gpt_runs.stored_scheme_run``. With
``--bos`` as well, every window starts with a ``<bos>`` id (``GPTConfig.bos``), stored as
``gptembed/data/scheme_bos_none_seed1.npz``; with ``--scaled`` (``--scheme sinusoidal`` only)
the sinusoidal table is added at :data:`SCALED` rather than 0.02, stored as
``gptembed/data/scheme_scaled_sinusoidal_seed1.npz``. Two more flags make two of the field's
ways past the trained length. ``--interpolated`` (``--scheme rotary`` only) trains no new model:
it fine-tunes the stored rotary run of the seed with position interpolation at 4 times its length
(:func:`interpolated_config`: ``rotary_interpolation`` 4, 200 steps on windows of 256
characters), measuring the held-out loss from step 0 every 20 steps; ``--shifted``
(``--scheme learned`` only) trains the learned table with :data:`SHIFTED_ROWS` rows beyond the
window, each window read from a random start row (``GPTConfig.max_start``), its held-out loss
measured at start 0. They are stored as ``scheme_interpolated_rotary_seed1.npz`` and
``scheme_shifted_learned_seed1.npz``. ``stored_scheme_run(..., control=...)`` reads all four.

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
from gptembed.gpt import GPT, at_length, evaluate, prepend_bos, train
from gptembed.gpt_config import BOS_ID, GPTConfig
from gptembed.gpt_runs import StoredRun, save, stored_scheme_run
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

INTERPOLATED_FLAG, SHIFTED_FLAG = "--interpolated", "--shifted"
"""The flags of the two ways past the trained length (taken off the command line as the
controls' are): position interpolation fine-tuned, and a table trained at shifted starts."""

NEEDS = {
    BOS_FLAG: None,
    SCALED_FLAG: "sinusoidal",
    INTERPOLATED_FLAG: "rotary",
    SHIFTED_FLAG: "learned",
}
"""The scheme each flag needs (None: any scheme)."""

LONGER = 4
"""How many times the scheme runs' 64 characters the two ways past it reach: chapter 10 scores
every model out to 4T."""

SHIFTED_ROWS = (LONGER - 1) * SCHEME_LEN
"""``max_start`` of ``--shifted``: start rows 0 to 192, so windows of 64 read every row of a table
of 256."""

FINE_TUNE_EVERY = 20
"""Steps between two held-out losses of ``--interpolated``'s 200 steps."""


def interpolated_config(config: GPTConfig) -> GPTConfig:
    """The fine-tune of ``--interpolated``, from the stored rotary run's ``config``: position
    interpolation by :data:`LONGER` (``rotary_interpolation``) on windows :data:`LONGER` times as
    long, as many characters a step (a quarter of the windows), every array trained for 200
    steps on the run's own schedule, shortened: its peak rate (3e-3) after 20 steps of warmup,
    then the half-cosine decay to a tenth of it.

    Chen et al. 2023 fine-tune 1,000 steps at a small fixed rate (2e-5 for LLaMA 7B, below
    where its training's schedule ended) after the same 20 steps of warmup. At the rate this
    run's schedule ended at (3e-4), 200 steps leave the loss still falling far above the run's;
    at its peak rate, 200 steps reach about what 1,000 steps at 3e-4 reach (seed 0, measured
    once to choose).
    """
    return replace(
        config,
        seq_len=LONGER * config.seq_len,
        batch_size=config.batch_size // LONGER,
        rotary_interpolation=float(LONGER),
        steps=200,
        warmup=20,
    )


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
    given = [flag for flag in NEEDS if _flag(flag)]
    bos, scaled, interpolated, shifted = (flag in given for flag in NEEDS)
    seed, out, scheme = _cli.seed_and_out(
        __doc__.split("\n")[0],
        "seed of the weights and batches",
        "gpt",
        schemes=SCHEMES,
        scheme_stem="scheme" + "".join(f"_{flag[2:]}" for flag in given),
    )
    if len(given) > 1:
        sys.exit(f"one of {', '.join(NEEDS)} at a time, got {' '.join(given)}")
    if given and scheme is None:
        sys.exit(f"{given[0]} needs --scheme: it makes one of chapter 10's runs beside its five")
    if given and NEEDS[given[0]] not in (None, scheme):
        sys.exit(f"{given[0]} needs --scheme {NEEDS[given[0]]}")
    config = replace(CONFIG, seed=seed)
    held_out = HELD_OUT
    start_model = None
    every = HELD_OUT_EVERY
    if interpolated:
        try:
            stored = stored_scheme_run("rotary", seed=seed)
        except ValueError as err:
            sys.exit(f"{INTERPOLATED_FLAG} fine-tunes the stored rotary run: {err}")
        config = interpolated_config(stored.config)
        start_model = at_length(
            replace(stored.model, rotary_interpolation=config.rotary_interpolation),
            config.seq_len,
        )
        held_out = random_passages(
            held_out_stream(), HELD_OUT_PASSAGES, config.seq_len, seed=HELD_OUT_SEED
        )
        every = FINE_TUNE_EVERY
    elif scheme is not None:
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
        if shifted:
            config = replace(config, max_start=SHIFTED_ROWS)
    held_steps: list[int] = []
    held_losses: list[float] = []
    load_start = os.getloadavg()
    start = time.perf_counter()

    def log(done: int, model: GPT) -> None:
        if done % every == 0 or done == config.steps:
            held_steps.append(done)
            held_losses.append(evaluate(model, *held_out).loss)
            elapsed = time.perf_counter() - start
            print(
                f"step {done:5d}  held-out {held_losses[-1]:.4f}  "
                f"{elapsed:6.0f} s  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )

    if start_model is not None:  # a fine-tune: where it starts, as a curve's first point
        log(0, start_model)
    result = train(config, train_stream(), start_model, after_step=log)
    seconds = time.perf_counter() - start
    info = {
        "command": "python tools/train_lm.py"
        + ("" if scheme is None else f" --scheme {scheme}")
        + "".join(f" {flag}" for flag in given)
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
