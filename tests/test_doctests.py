"""The examples in the package's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gptembed

MODULES = sorted(m.name for m in pkgutil.iter_modules(gptembed.__path__, "gptembed."))


def test_every_module_is_checked() -> None:
    assert "gptembed.positions" in MODULES and "gptembed.attention_cost" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), raise_on_error=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


@pytest.mark.parametrize("name", MODULES)
def test_module_opens_with_one_line_naming_its_idea(name: str) -> None:
    doc = importlib.import_module(name).__doc__ or ""
    first = doc.split("\n", 1)[0]
    assert first.endswith(".") and 20 <= len(first) <= 100, f"{name}: {first!r}"
