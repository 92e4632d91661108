"""The package's own ``.npz`` files: where one goes, writing it whole, and knowing one when read.

:func:`gptembed.gpt.save` and :func:`gptembed.growth.save_growth` write through here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from ._checks import check_int


def npz_path(path: str | os.PathLike[str]) -> Path:
    """The file :func:`save_npz` writes for ``path``, checked before anything is computed to store.

    ``path`` itself if it ends in ``.npz``, else ``path`` with ``.npz`` added, as ``np.savez``
    adds it. ``tools/train_lm.py`` and ``tools/fine_tune_lm.py`` check their ``--out`` here
    before they train for minutes.

    Raises:
        ValueError: ``path`` (or it with ``.npz``) is a folder, or its folder does not exist.
    """
    text = os.fspath(path)
    final = Path(text if text.endswith(".npz") else text + ".npz")
    for candidate in (Path(text), final):
        if candidate.is_dir():
            raise ValueError(
                f"{candidate} is a folder: name the file to write, such as {candidate / 'run.npz'}"
            )
    if not final.parent.is_dir():
        raise ValueError(f"the folder {final.parent} does not exist: make it first")
    return final


def save_npz(path: str | os.PathLike[str], arrays: Mapping[str, Any]) -> None:
    """``np.savez`` of ``arrays`` to :func:`npz_path` of ``path``, whole or not at all.

    The arrays go to a new file in the same folder, which then replaces ``path`` in one step
    (``os.replace``, atomic within a file system): a save cut short by a full disk, Ctrl-C or a
    kill leaves the file stored before as it was (a kill may leave the hidden ``.tmp`` file).
    :func:`~gptembed.gpt.save` and :func:`~gptembed.growth.save_growth` write through here.

    Raises:
        ValueError: as :func:`npz_path`.
    """
    final = npz_path(path)
    temp = final.with_name(f".{final.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(temp, "xb") as file:
            np.savez(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def check_stored(data: Any, names: Iterable[str], what: str) -> None:
    """Refuse an opened ``.npz`` that lacks one of ``names``: it is not ``what`` (``"a stored
    run"``), and reading it would raise a KeyError deep inside."""
    missing = [name for name in names if name not in data]
    if missing:
        held = ", ".join(data.files) or "nothing"
        raise ValueError(f"not {what}: it lacks {', '.join(missing)} (it holds {held})")


Stored = TypeVar("Stored")

STORED_SEEDS = (0, 1, 2)
"""The seeds the package stores a run (and its curves) for."""


def read_stored(name: str, seed: int, what: str, read: Callable[[IO[bytes]], Stored]) -> Stored:
    """``read`` of the package's ``data/{name}{seed}.npz`` (``name`` such as ``"gpt_seed"``).

    Raises:
        TypeError, ValueError: ``seed`` is not an integer >= 0.
        ValueError: no such file: the package stores ``what`` for :data:`STORED_SEEDS` only.
    """
    path = files("gptembed").joinpath(f"data/{name}{check_int('seed', seed, minimum=0)}.npz")
    if not path.is_file():
        seeds = ", ".join(map(str, STORED_SEEDS[:-1])) + f" and {STORED_SEEDS[-1]}"
        raise ValueError(f"no {what} for seed {seed}: the package stores seeds {seeds}")
    with path.open("rb") as file:
        return read(file)
