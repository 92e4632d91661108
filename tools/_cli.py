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
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

from gptembed._npz import npz_path  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "gptembed" / "data"
"""Where the tools store by default: the package's data."""


def seed_and_out(
    description: str,
    seed_help: str,
    stem: str,
    *,
    schemes: Sequence[str] = (),
    scheme_stem: str = "",
) -> tuple[int, Path, str | None]:
    """The command line's ``--seed N`` (default 0), its ``--scheme S`` if the tool takes one
    (``schemes`` lists the choices; None when not given), and the file to store into:
    ``--out``, else ``DATA/<stem>_seed<N>.npz``, or with a scheme
    ``DATA/<scheme_stem>_<S>_seed<N>.npz``.

    The path is checked before a tool trains for minutes (its folder exists, and it, with
    ``.npz`` added, is no folder); ``--help`` and a bad path exit with argparse's message.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=0, help=seed_help)
    if schemes:
        parser.add_argument("--scheme", choices=schemes, help="the position scheme")
    parser.add_argument("--out", type=Path, help="where to store (default: the package's data)")
    args = parser.parse_args()
    scheme = getattr(args, "scheme", None)
    name = stem if scheme is None else f"{scheme_stem}_{scheme}"
    name = f"{name}_seed{args.seed}"
    try:
        return args.seed, npz_path(args.out or DATA / f"{name}.npz"), scheme
    except ValueError as err:
        parser.error(f"--out: {err}")
