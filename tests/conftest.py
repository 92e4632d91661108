"""Shared by the figure tests: no figure the package draws is one of pyplot's."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture
def no_pyplot_figures() -> Iterator[None]:
    """No plot may be one of pyplot's figures: pyplot would show it again at the end of a cell.

    (pyplot is not imported by the package; if something else imported it, it must hold no
    figure.) The figure tests use it on every test: ``pytest.mark.usefixtures``."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    assert pyplot is None or pyplot.get_fignums() == [], "a plotting function made a pyplot figure"
