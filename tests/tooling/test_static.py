"""The repository stays lint-clean (ruff) and type-checked (mypy), its locked toolchain stays
quick to import, and the package's version is the one pyproject.toml sets."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_check_and_format_are_clean() -> None:
    for command in (("check", "."), ("format", "--check", ".")):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"


def test_mypy_finds_no_type_error() -> None:
    """In the files pyproject.toml's [tool.mypy] names: the package, _ext/ and tools/."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, f"mypy:\n{result.stdout}{result.stderr}"


def test_version_is_the_one_pyproject_sets() -> None:
    import gptembed

    declared = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared, "no version in pyproject.toml's [project] table"
    assert gptembed.__version__ == declared[1]


def test_nbformat_does_not_build_a_grammar_at_import() -> None:
    """Every chapter's kernel imports nbformat (through myst-nb's glue), as do each test worker
    and the build. jsonschema from 4.24 makes that import build rfc3987-syntax's Lark grammar
    (1.2 s a process); pyproject.toml keeps the lock's jsonschema below 4.24."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, nbformat; print(' '.join(m for m in sys.modules "
            "if m.split('.')[0] in ('rfc3987_syntax', 'lark')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not loaded, f"importing nbformat loaded {loaded}: is jsonschema newer than 4.23.0?"
