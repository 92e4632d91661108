"""How the book draws a figure: page sizes, colours, panels, legible text and a blank canvas.

What the figure modules share (:mod:`~gptembed.plotting`, :mod:`~gptembed.cost_figures`,
:mod:`~gptembed.layer_diagrams`, :mod:`~gptembed.scheme_diagrams`; each says what to install where
matplotlib is missing). Figures are made with ``Figure(...)`` and ``fig.subplots(...)``, not
pyplot: pyplot's inline backend would show every figure it made at the end of the cell too, so a
returned figure would appear twice; importing this module lets IPython show a returned figure
once. Backgrounds are opaque white (legible in the book's dark theme too); colours are the
Okabe-Ito colour-blind-safe palette; nothing here calls ``show()``. :func:`smallest_text_px`
measures a figure's text as the book shows it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np
from matplotlib import rcParams
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from numpy.typing import NDArray

FIGSIZE = (7.0, 4.0)
"""Width and height in inches of a one-panel figure (the page's width)."""

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


PAGE_WIDTH_PX = 672
"""Width in CSS pixels of the book's text column at a 1280-pixel window; a wider figure is shown
shrunk to it."""

DISPLAY_DPI = 100
"""CSS pixels per inch of a figure as the book shows it: matplotlib's default dpi (a
:data:`FIGSIZE` figure is shown 711 pixels wide with its tight bounding box). The chapters' PNGs
are drawn at twice that, and their metadata gives the displayed size."""

MIN_TEXT_PX = 9.0
"""The smallest text a figure may show, in CSS pixels as displayed (:func:`smallest_text_px`)."""


def _show_returned_figures_in_ipython() -> None:
    """Let IPython (Jupyter) show a :class:`Figure` that is a cell's value, as a PNG drawn at
    twice the pixels it is shown at (as IPython's "retina" format does: sharp on a high-density
    screen), its displayed width, :data:`DISPLAY_DPI` pixels an inch, in the output's metadata.

    pyplot's inline backend registers this display when pyplot makes its first figure; figures
    here never go through pyplot, so without it a cell would show ``<Figure size ...>`` only.
    Only that one display is added, and only where the reader has none for figures: a format the
    reader chose (``%config InlineBackend.figure_formats = ["svg"]``) is left as it is.
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import print_figure
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatters = shell.display_formatter.formatters
    if any(Figure in formatter.type_printers for formatter in formatters.values()):
        return

    def png_at_twice_its_size(figure: Figure) -> tuple[bytes, dict[str, int]]:
        png = print_figure(figure, "png", bbox_inches="tight", dpi=2 * DISPLAY_DPI)
        # The PNG's IHDR chunk holds its width, big-endian, at bytes 16 to 20. The width alone:
        # a page that narrows the image keeps its proportions (a fixed height would squash it).
        return png, {"width": int.from_bytes(png[16:20], "big") // 2}

    formatters["image/png"].for_type(Figure, png_at_twice_its_size)


_show_returned_figures_in_ipython()


def new_figure(
    figsize: tuple[float, float] = FIGSIZE,
    ncols: int = 1,
    nrows: int = 1,
    *,
    width_ratios: Sequence[float] | None = None,
) -> tuple[Figure, Any]:
    """A figure with an opaque white background and ``nrows x ncols`` axes (constrained layout),
    the columns' widths in ``width_ratios`` (equal by default).

    Returns:
        ``(fig, axes)``: one :class:`~matplotlib.axes.Axes`, or an array of them, as
        ``Figure.subplots`` gives.
    """
    fig = Figure(figsize=figsize, layout="constrained", facecolor="white")
    fig.patch.set_alpha(1.0)
    return fig, fig.subplots(nrows, ncols, width_ratios=width_ratios)


def _root_figure(ax: Axes) -> Figure:
    """The top-level figure ``ax`` is drawn on (through any subfigure)."""
    return cast(Figure, ax.figure.figure)  # a SubFigure's .figure is its root; a Figure's, itself


def figure_and_axes(
    figsize: tuple[float, float] = FIGSIZE, *, ax: Axes | None
) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a new one-panel :func:`new_figure` of ``figsize``."""
    if ax is None:
        fig, new_ax = new_figure(figsize)
        return fig, cast(Axes, new_ax)
    return _root_figure(ax), ax


def panel_grid(n_panels: int, panel_width: float, extra_width: float = 0.0) -> tuple[int, int]:
    """``(rows, columns)`` for ``n_panels`` panels ``panel_width`` inches wide: as many to a row
    as fit in :data:`FIGSIZE`'s width (the page's, less ``extra_width`` for a colour bar), at
    least one, and as many rows as that needs. A figure wider than the page would be shown
    shrunk, its labels with it: 5 px tall, on two of the book's heat maps, before this.

    >>> panel_grid(4, 3.0, extra_width=1.0), panel_grid(3, 2.0, extra_width=0.9)
    ((2, 2), (1, 3))
    """
    fit = int((FIGSIZE[0] - extra_width + 1e-9) // panel_width)
    columns = max(1, min(n_panels, fit))
    return -(-n_panels // columns), columns


def figure_and_panels(
    n_panels: int,
    panel_size: tuple[float, float],
    *,
    axes: Sequence[Axes] | None,
    extra_width: float = 0.0,
) -> tuple[Figure, list[Axes]]:
    """``axes`` (exactly ``n_panels`` of them) and their figure, or a new figure of panels
    ``panel_size`` inches each, laid out by :func:`panel_grid` (plus ``extra_width`` inches for
    a colour bar), left to right and then down; a last row that is not full is left short.

    Raises:
        ValueError: ``axes`` does not hold ``n_panels`` axes.
    """
    if axes is None:
        rows, columns = panel_grid(n_panels, panel_size[0], extra_width)
        size = (panel_size[0] * columns + extra_width, panel_size[1] * rows)
        fig, grid = new_figure(size, ncols=columns, nrows=rows)
        panels = list(np.ravel(grid))
        for unused in panels[n_panels:]:
            unused.remove()
        return fig, panels[:n_panels]
    panels = list(axes)
    if len(panels) != n_panels:
        raise ValueError(f"axes must hold {n_panels} axes, got {len(panels)}")
    return _root_figure(panels[0]), panels


def mark_verticals(ax: Axes, marks: Mapping[str, float], *, linestyle: str = "--") -> None:
    """Draw each of ``marks`` (label -> x) as a thin black vertical line, labelled at the top."""
    for label, where in marks.items():
        ax.axvline(where, color=PALETTE["black"], ls=linestyle, lw=1.0)
        ax.annotate(
            label,
            xy=(where, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -12),
            textcoords="offset points",
            fontsize=8,
        )


def centred_limit(values: Sequence[NDArray[np.float64]]) -> float:
    """The largest ``|value|`` of finite arrays, for a colour scale centred on 0 (1 if all 0)."""
    return max(float(np.abs(v).max(initial=0.0)) for v in values) or 1.0


def _drawn_texts(artist: Artist) -> Iterator[Text]:
    """Every non-empty text ``artist`` draws: visible, under visible parents, not on the axis of
    axes drawn without one (``set_axis_off``)."""
    if not artist.get_visible():
        return
    if isinstance(artist, Text) and artist.get_text().strip():
        yield artist
    for child in artist.get_children():
        if isinstance(child, Axis) and child.axes is not None and not child.axes.axison:
            continue
        yield from _drawn_texts(child)


def smallest_text_px(fig: Figure) -> float:
    """The font size of the figure's smallest text, in CSS pixels as the book shows it.

    A chapter stores a figure as a PNG of its tight bounding box (padded by
    ``savefig.pad_inches``) at :data:`DISPLAY_DPI` and the page shows it at that size, shrunk to
    :data:`PAGE_WIDTH_PX` if wider; a font of ``s`` points is ``s / 72`` inches of that. Only
    text that is drawn counts. A figure with a layout engine is drawn once first (its layout,
    not pixels), as saving it would.

    Raises:
        ValueError: the figure draws no text.
    """
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()  # runs the layout engine, as saving does
    width = fig.get_tightbbox().width + 2 * float(rcParams["savefig.pad_inches"])  # inches
    px_per_inch = min(DISPLAY_DPI, PAGE_WIDTH_PX / width)
    sizes = [float(text.get_fontsize()) for text in _drawn_texts(fig)]
    if not sizes:
        raise ValueError("the figure draws no text to measure")
    return min(sizes) * px_per_inch / 72.0


# A concept diagram's canvas: cells and labels placed by hand, in inches, at a legible size.

DIAGRAM_WIDTH = 7.0
"""Width in inches of a concept diagram, at most: :data:`FIGSIZE`'s, shown at page width nearly
1:1 (a wider figure is shrunk, and its text with it)."""

DIAGRAM_FONTSIZE = 9.0
"""Font size in points of a diagram's labels: 11.8 CSS pixels at page width, above
:data:`MIN_TEXT_PX`."""

DIAGRAM_MAX_ROWS = 16
"""The most rows (tokens, positions, steps) a diagram draws: past that, its cells and labels
would be too small to read."""

DIAGRAM_MAX_COLUMNS = 12
"""The most columns (table dimensions, batch slots) a diagram draws, for the same reason."""

GREY = "#d9d9d9"  # hidden or padded cells, and a future key in a heat map of scores
FRAME = "#333333"
MINUS = "\u2212"  # the minus sign, for labels


def canvas(size: tuple[float, float], ax: Axes | None) -> tuple[Figure, Axes]:
    """A blank canvas ``size`` inches large whose data units are inches, y pointing down: a
    diagram places every cell and label by hand. By default a new figure of that size that the
    canvas fills (no layout engine: the diagram's own layout leaves room for every label), else
    ``ax``, the canvas scaled to fit it."""
    if ax is None:
        fig, ax = figure_and_axes(size, ax=None)
        fig.set_layout_engine("none")
        ax.set_position((0.0, 0.0, 1.0, 1.0))
    else:
        fig = _root_figure(ax)
    ax.set_xlim(0.0, size[0])
    ax.set_ylim(size[1], 0.0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return fig, ax


def cells(
    ax: Axes,
    values: NDArray[Any],
    left: float,
    top: float,
    cell: tuple[float, float],
    *,
    cmap: Any,
    norm: Normalize,
    label: str,
) -> AxesImage:
    """``values`` ``(rows, cols)`` drawn as cells of ``cell`` (width, height) inches from
    ``(left, top)``, white lines between them and a dark frame; the image carries ``label``."""
    rows, cols = values.shape
    width, height = cols * cell[0], rows * cell[1]
    image = ax.imshow(
        values,
        cmap=cmap,
        norm=norm,
        extent=(left, left + width, top + height, top),
        interpolation="nearest",
        label=label,
    )
    ax.hlines(top + cell[1] * np.arange(1, rows), left, left + width, colors="white", lw=1.0)
    ax.vlines(left + cell[0] * np.arange(1, cols), top, top + height, colors="white", lw=1.0)
    ax.add_patch(Rectangle((left, top), width, height, fill=False, edgecolor=FRAME, lw=0.8))
    return image


def put_text(ax: Axes, x: float, y: float, text: str, **kwargs: Any) -> Text:
    """A diagram's label at ``(x, y)`` inches, :data:`DIAGRAM_FONTSIZE` unless told."""
    kwargs.setdefault("fontsize", DIAGRAM_FONTSIZE)
    return ax.text(x, y, text, **kwargs)


def word_list(numbers: Sequence[object], last: str = "and") -> str:
    """``1, 2 and 3``."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"
