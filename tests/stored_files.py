"""What the tests of stored files share: a save that fails partway, and the tools as modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def savez_that_fails(error: BaseException) -> Callable[..., None]:
    """``np.savez`` that writes the start of a file where it was asked to, then fails."""

    def savez(file: Any, **arrays: object) -> None:
        with open(file, "wb") if isinstance(file, (str, Path)) else nullcontext(file) as out:
            out.write(b"PK\x03\x04 half a zip")
        raise error

    return savez


def load_tool(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``tools/NAME.py``, imported as ``tools.NAME``; the BLAS variables that importing it sets
    (``tools/_cli.py``) are put back after the test."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(var, "1")
    return importlib.import_module(f"tools.{name}")
