"""The package stays typed and the repository stays lint-clean: CI checks what README promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_check_and_format_are_clean() -> None:
    for command in (("check", "."), ("format", "--check", ".")):
        result = run(sys.executable, "-m", "ruff", *command)
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"


def test_mypy_finds_no_type_errors_in_the_package() -> None:
    result = run(sys.executable, "-m", "mypy", "gptembed", "--ignore-missing-imports")
    assert result.returncode == 0, result.stdout + result.stderr
