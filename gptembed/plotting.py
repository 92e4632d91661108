"""Figures for the chapters. Matplotlib only here: the math modules never import this one.

Every function takes ``ax=None`` (or ``axes=None``), draws on a fixed-size figure with an opaque
white background (legible in the book's dark theme too), uses the Okabe-Ito colour-blind-safe
palette, returns what it drew on, and never calls ``show()``.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

FIGSIZE = (7.0, 4.0)
"""Width and height in inches of a one-panel figure."""

PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
"""Okabe & Ito's colour-blind-safe palette."""

DIVERGING_CMAP = "RdBu_r"
"""Colour map for signed values (embeddings): blue negative, red positive, white zero."""


def new_figure(
    figsize: tuple[float, float] = FIGSIZE, ncols: int = 1, nrows: int = 1
) -> tuple[Figure, Any]:
    """A figure with an opaque white background and ``nrows x ncols`` axes (constrained layout)."""
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, layout="constrained")
    fig.patch.set_facecolor("white")
    fig.patch.set_alpha(1.0)
    return fig, axes


def axes_or_new(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> Axes:
    """``ax`` itself, or the single axes of a :func:`new_figure`."""
    if ax is not None:
        return ax
    _, ax = new_figure(figsize)
    return ax
