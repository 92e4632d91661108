"""The package's own ``.npz`` files: where one goes, writing it whole, and knowing one when read.

:func:`gptembed.gpt_runs.save` and :func:`gptembed.growth.save_growth` write through here.
"""

from __future__ import annotations

import os
import uuid
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from ._checks import check_int


def npz_name(path: str | os.PathLike[str]) -> Path:
    """``path`` if it ends in ``.npz``, else ``path`` with ``.npz`` added, as ``np.savez`` adds
    it: the one rule by which a file is both written (:func:`npz_path`) and read
    (:func:`open_stored`)."""
    text = os.fspath(path)
    return Path(text if text.endswith(".npz") else text + ".npz")


def npz_path(path: str | os.PathLike[str]) -> Path:
    """The file :func:`save_npz` writes for ``path``, checked before anything is computed to store.

    ``path`` itself if it ends in ``.npz``, else ``path`` with ``.npz`` added, as ``np.savez``
    adds it. ``tools/train_lm.py`` and ``tools/fine_tune_lm.py`` check their ``--out`` here
    before they train for minutes.

    Raises:
        ValueError: ``path`` (or it with ``.npz``) is a folder, or its folder does not exist.
    """
    text = os.fspath(path)
    final = npz_name(path)
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
    :func:`~gptembed.gpt_runs.save` and :func:`~gptembed.growth.save_growth` write through here.

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


READ_ERRORS = (OSError, EOFError, ValueError, zipfile.BadZipFile)
"""What numpy and zipfile raise on a file that is not a whole ``.npz`` (empty, cut short, a
flipped byte that fails a member's CRC-32, not a zip at all)."""


def check_stored(data: Any, names: Iterable[str], what: str, *, label: str = "") -> None:
    """Refuse an opened ``.npz`` (named ``label`` in the message) that lacks one of ``names``: it
    is not ``what`` (``"a stored run"``), and reading it would raise a KeyError deep inside."""
    missing = [name for name in names if name not in data]
    if missing:
        held = ", ".join(data.files) or "nothing"
        where = f"{label}: " if label else ""
        raise ValueError(f"{where}not {what}: it lacks {', '.join(missing)} (it holds {held})")


def array_header(data: Any, name: str, label: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of array ``name`` of an opened ``.npz`` (named ``label``), from its
    ``.npy`` header alone: nothing of the array is read into an array or allocated.

    Raises:
        ValueError: the member is damaged or its header is not a ``.npy`` header.
    """
    try:
        with data.zip.open(f"{name}.npy") as member:
            version = np.lib.format.read_magic(member)
            read = {(1, 0): np.lib.format.read_array_header_1_0}.get(
                version, np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read(member)
    except READ_ERRORS as error:
        raise ValueError(f"{label}: {name} is damaged: {error}") from error
    return tuple(shape), dtype


@contextmanager
def open_stored(
    file: str | os.PathLike[str] | IO[bytes], names: Iterable[str], what: str
) -> Iterator[tuple[Any, str]]:
    """The opened ``.npz`` ``file`` (a path, by :func:`npz_name`'s rule, or an open binary
    file) and its name for messages, refused as a ValueError naming it unless it is a ``.npz``
    archive holding ``names``. Arrays are read only when the caller indexes the archive; wrap
    those reads in ``except READ_ERRORS``, as a member may be damaged.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a ``.npz`` (``path`` exists, ``path.npz`` does not), is
            empty, is not a ``.npz`` archive (cut short, a ``.npy``, other bytes), or lacks one
            of ``names``.
    """
    source: Path | IO[bytes]
    if isinstance(file, (str, os.PathLike)):
        given, source = Path(file), npz_name(file)
        label = str(source)
        if not source.exists() and given.is_file():
            raise ValueError(
                f"{given}: not {what}: not a .npz file (a path without .npz is read as {source}, "
                "the file a save to it writes)"
            )
    else:
        source, label = file, str(getattr(file, "name", "the file"))
    try:
        data = np.load(source, allow_pickle=False)
    except FileNotFoundError:
        raise
    except EOFError as error:
        raise ValueError(f"{label}: not {what}: it is empty") from error
    except READ_ERRORS as error:
        raise ValueError(f"{label}: not {what}: {error}") from error
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"{label}: not {what}: it holds one array (a .npy file), not a .npz")
    with data:
        check_stored(data, names, what, label=label)
        yield data, label


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
