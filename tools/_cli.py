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
import tempfile  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

from gptembed._npz import npz_path  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "gptembed" / "data"
"""Where the tools store by default: the package's data."""


def seed(text: str) -> int:
    """``--seed``'s value: an integer >= 0, as numpy's generators take.

    Raises:
        argparse.ArgumentTypeError: anything else (argparse says it and exits).
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def stored_seeds(stem: str) -> list[int]:
    """The seeds ``N`` of the runs stored as ``DATA/<stem>_seed<N>.npz``."""
    found = (path.stem.removeprefix(f"{stem}_seed") for path in DATA.glob(f"{stem}_seed*.npz"))
    return sorted(int(text) for text in found if text.isdigit())


def seed_and_out(
    description: str,
    seed_help: str,
    stem: str,
    *,
    schemes: Sequence[str] = (),
    scheme_stem: str = "",
    seed_of: str = "",
) -> tuple[int, Path, str | None]:
    """The command line's ``--seed N`` (default 0; with ``seed_of``, one of
    :func:`stored_seeds` of it), its ``--scheme S`` if the tool takes one (``schemes`` lists the
    choices; None when not given), and the file to store into: ``--out``, else
    ``DATA/<stem>_seed<N>.npz``, or with a scheme ``DATA/<scheme_stem>_<S>_seed<N>.npz``.

    The path is checked before a tool trains for minutes (its folder exists and takes a new
    file, and it, with ``.npz`` added, is no folder); ``--help`` and a bad path exit with
    argparse's message.
    """
    parser = argparse.ArgumentParser(description=description)
    choices = stored_seeds(seed_of) if seed_of else None
    parser.add_argument("--seed", type=seed, default=0, choices=choices, help=seed_help)
    if schemes:
        parser.add_argument("--scheme", choices=schemes, help="the position scheme")
    parser.add_argument("--out", type=Path, help="where to store (default: the package's data)")
    args = parser.parse_args()
    scheme = getattr(args, "scheme", None)
    name = stem if scheme is None else f"{scheme_stem}_{scheme}"
    name = f"{name}_seed{args.seed}"
    try:
        return args.seed, writable(npz_path(args.out or DATA / f"{name}.npz")), scheme
    except ValueError as err:
        parser.error(f"--out: {err}")


def writable(path: Path) -> Path:
    """``path``, once an empty file was made and removed beside it: the save at the end of a run
    writes a new file in that folder and moves it onto ``path``.

    Raises:
        ValueError: the folder takes no new file (read-only, not ours, a full disk), with the
            system's reason.
    """
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"):
            pass
    except OSError as err:
        raise ValueError(f"cannot write a file in the folder {path.parent}: {err}") from err
    return path
