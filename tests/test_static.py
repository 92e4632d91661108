"""The repository stays lint-clean (ruff); `./dev test` type-checks the package with mypy."""

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
