"""The repository stays lint-clean (ruff), and its pinned toolchain stays quick to import;
`./dev test` type-checks the package with mypy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_and_format_are_clean() -> None:
    for command in (("check", "."), ("format", "--check", ".")):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"


def test_nbformat_does_not_build_a_grammar_at_import() -> None:
    """Every chapter's kernel imports nbformat (through myst-nb's glue), as do each test worker
    and the build. jsonschema from 4.24 makes that import build rfc3987-syntax's Lark grammar
    (1.2 s a process); the constraints keep jsonschema at 4.23.0, which does not."""
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
