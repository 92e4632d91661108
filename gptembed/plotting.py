"""Figures for the chapters. Matplotlib only here: the math modules never import this one.

Every function takes ``ax=None`` (or ``axes=None``), draws on a fixed-size figure with an opaque
white background (legible in the book's dark theme too), uses the Okabe-Ito colour-blind-safe
palette, returns what it drew on, and never calls ``show()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from numpy.typing import ArrayLike

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


ADDITION_FIGSIZE = (9.0, 3.4)
"""Width and height in inches of :func:`plot_embedding_addition`'s three panels."""


def plot_embedding_addition(
    token_rows: ArrayLike,
    position_rows: ArrayLike,
    row_labels: Sequence[str] | None = None,
    highlight_rows: Sequence[int] = (),
    axes: Sequence[Axes] | None = None,
) -> tuple[Figure, list[Axes]]:
    """Token rows, position rows and their sum as three heatmaps on one colour scale.

    Args:
        token_rows: ``(T, D)``, the token table's rows for a sequence, ``W_tok[ids]``.
        position_rows: ``(T, D)``, the position table's rows ``W_pos[0:T]``.
        row_labels: ``T`` labels for the rows (for example ``"0 the"``); default ``"0"..``.
        highlight_rows: rows to outline in every panel (for example a token that repeats).
        axes: three axes to draw on; by default a new :data:`ADDITION_FIGSIZE` figure.

    Returns:
        The figure and its three axes. The colour scale is :data:`DIVERGING_CMAP`, centred on 0
        and shared by the three panels (one colour bar).

    Raises:
        ValueError: the two arrays are not 2-D of one shape, a label list has the wrong length, a
            highlighted row is out of range, or ``axes`` does not hold three axes.
    """
    tok = np.asarray(token_rows, dtype=float)
    pos = np.asarray(position_rows, dtype=float)
    if tok.ndim != 2 or tok.shape != pos.shape:
        raise ValueError(
            f"token_rows and position_rows must be 2-D arrays of one shape (T, D), got "
            f"{tok.shape} and {pos.shape}"
        )
    n_rows = tok.shape[0]
    labels = [str(t) for t in range(n_rows)] if row_labels is None else list(row_labels)
    if len(labels) != n_rows:
        raise ValueError(f"row_labels must have {n_rows} entries, got {len(labels)}")
    for row in highlight_rows:
        if not 0 <= row < n_rows:
            raise ValueError(f"highlight row {row} is out of range: rows are 0..{n_rows - 1}")
    if axes is None:
        fig, new_axes = new_figure(ADDITION_FIGSIZE, ncols=3)
        panels = list(new_axes)
    else:
        panels = list(axes)
        if len(panels) != 3:
            raise ValueError(f"axes must hold 3 axes, got {len(panels)}")
        fig = panels[0].figure
    total = tok + pos
    limit = float(max(np.abs(tok).max(), np.abs(pos).max(), np.abs(total).max())) or 1.0
    norm = Normalize(vmin=-limit, vmax=limit)
    titles = ("token rows $W_{tok}[id_t]$", "+ position rows $W_{pos}[t]$", "= sum $x_t$")
    image = None
    for ax, data, title in zip(panels, (tok, pos, total), titles, strict=True):
        image = ax.imshow(data, cmap=DIVERGING_CMAP, norm=norm, aspect="auto")
        ax.set_title(title)
        ax.set_xlabel("dimension")
        ax.set_xticks(range(tok.shape[1]))
        ax.set_yticks(range(n_rows), labels)
        for row in highlight_rows:
            ax.add_patch(
                Rectangle(
                    (-0.5, row - 0.5),
                    tok.shape[1],
                    1,
                    fill=False,
                    edgecolor=PALETTE["black"],
                    linewidth=2.5,
                )
            )
    panels[0].set_ylabel("position t and token")
    fig.colorbar(image, ax=panels, label="value", shrink=0.9)
    return fig, panels
