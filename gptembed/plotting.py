"""Figures for the chapters. Matplotlib only here: the math modules never import this one.

Every function takes ``ax=None`` (or ``axes=None``), draws on a fixed-size figure with an opaque
white background (legible in the book's dark theme too), uses the Okabe-Ito colour-blind-safe
palette, returns what it drew on, and never calls ``show()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .training import cosine_similarity_matrix

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


def plot_loss_curves(
    curves: Mapping[str, ArrayLike],
    floors: Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Training loss against step, one line per run, with each run's floor as a dashed line.

    Args:
        curves: label -> ``(steps,)`` losses in nats.
        floors: label -> the lowest loss that run's model can reach (same labels as ``curves``).
        ax: axes to draw on; a new fixed-size figure if None.
    """
    ax = axes_or_new(ax)
    colours = [PALETTE["blue"], PALETTE["vermillion"], PALETTE["green"], PALETTE["orange"]]
    styles = ["-", "-.", ":", (0, (6, 2, 1, 2))]  # told apart by dash as well as colour
    for (label, losses), colour, style in zip(curves.items(), colours, styles, strict=False):
        values = np.asarray(losses, dtype=float)
        ax.plot(np.arange(1, len(values) + 1), values, style, color=colour, lw=2, label=label)
        if floors is not None and label in floors:
            ax.axhline(floors[label], color=colour, ls="--", lw=1.2)
            ax.annotate(
                f"floor {floors[label]:.3f}",
                xy=(1.0, floors[label]),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 4),
                textcoords="offset points",
                ha="right",
                va="bottom",
                color=colour,
            )
    ax.set_xscale("log")
    ax.set_xlabel("training step (log scale)")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", frameon=True)
    return ax


def plot_position_similarity(
    tables: Mapping[str, ArrayLike],
    period: int | None = None,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """One heatmap per table of the cosine similarity between every pair of its rows.

    Args:
        tables: title -> ``(L, D)`` position table; one panel each, left to right.
        period: if given, thin lines mark every ``period``-th position (record boundaries).
        axes: one axes per table to draw on; a new fixed-size figure if None.

    Returns:
        The figure, with a shared colour bar from -1 to 1.

    Raises:
        ValueError: ``axes`` does not hold one axes per table.
    """
    if axes is None:
        _, grid = new_figure((4.0 * len(tables) + 1.0, 4.2), ncols=len(tables))
        axes = list(np.atleast_1d(grid))
    if len(axes) != len(tables):
        raise ValueError(f"need one axes per table: {len(tables)} tables, got {len(axes)} axes")
    image = None
    for ax, (title, table) in zip(axes, tables.items(), strict=True):
        sims = cosine_similarity_matrix(table)
        length = len(sims)
        image = ax.imshow(
            sims,
            cmap=DIVERGING_CMAP,
            vmin=-1.0,
            vmax=1.0,
            extent=(-0.5, length - 0.5, length - 0.5, -0.5),
            interpolation="nearest",
        )
        if period is not None:
            for edge in range(period, length, period):
                ax.axhline(edge - 0.5, color=PALETTE["black"], lw=0.4, alpha=0.5)
                ax.axvline(edge - 0.5, color=PALETTE["black"], lw=0.4, alpha=0.5)
        ax.set_title(title)
        ax.set_xlabel("position")
        ax.set_ylabel("position")
    fig = axes[0].figure
    fig.colorbar(image, ax=list(axes), shrink=0.85, label="cosine similarity")
    return fig
