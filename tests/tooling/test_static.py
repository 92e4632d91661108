"""The package's version is the one pyproject.toml sets (ruff and mypy run in `./dev lint`,
which `./dev test` runs before pytest)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_one_pyproject_sets() -> None:
    import gptembed

    declared = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared, "no version in pyproject.toml's [project] table"
    assert gptembed.__version__ == declared[1]
