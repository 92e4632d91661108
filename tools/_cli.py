"""What the training tools (``train_lm.py``, ``fine_tune_lm.py``) share: BLAS on one thread, and
their command line.

Importing this module sets BLAS to one thread for the process (OpenBLAS, OpenMP, MKL), so a tool
imports it before anything that loads numpy: a re-run on the same machine then gives the same
bits whatever the machine's thread count (another CPU may round differently in the last bits).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402

from gptembed.gpt import npz_path  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "gptembed" / "data"
"""Where the tools store by default: the package's data."""


def seed_and_out(description: str, seed_help: str, stem: str) -> tuple[int, Path]:
    """The command line's ``--seed N`` (default 0) and the file to store into: ``--out``, or
    ``DATA/<stem>_seed<N>.npz``.

    The path is checked before a tool trains for minutes (its folder exists, and it, with
    ``.npz`` added, is no folder); ``--help`` and a bad path exit with argparse's message.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=0, help=seed_help)
    parser.add_argument("--out", type=Path, help="where to store (default: the package's data)")
    args = parser.parse_args()
    try:
        return args.seed, npz_path(args.out or DATA / f"{stem}_seed{args.seed}.npz")
    except ValueError as err:
        parser.error(f"--out: {err}")
