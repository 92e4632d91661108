"""Every figure of the book, drawn with matplotlib (the only module that imports it).

One idiom: every ``plot_*`` function takes a keyword-only ``ax=None`` (or ``axes=None``) and
returns the :class:`~matplotlib.figure.Figure` it drew on, so a chapter shows a figure by making
the call the last expression of its cell. Figures are made with ``Figure(...)`` and
``fig.subplots(...)``, not pyplot: pyplot's inline backend would show every figure it made at the
end of the cell too, so a returned figure would appear twice. Sizes are the ``*_FIGSIZE``
constants below; backgrounds are opaque white (legible in the book's dark theme too); colours are
the Okabe-Ito colour-blind-safe palette; nothing here calls ``show()``.

Besides the data plots, five concept diagrams draw the book's ideas from the package's own
arithmetic (:func:`plot_embedding_sum`, :func:`plot_rotary_rotation`, :func:`plot_alibi_bias`,
:func:`plot_kv_cache`, :func:`plot_padded_batch`); each has a ``describe_*`` twin that says the
same in one paragraph, for the figure's alt text. :func:`smallest_text_px` measures a figure's
text as the book shows it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

try:
    from matplotlib import rcParams
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage
    from matplotlib.patches import Arc, Circle, Patch, Rectangle
    from matplotlib.patheffects import withStroke
    from matplotlib.text import Text
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "gptembed.plotting draws with matplotlib, which is not installed: install the plot "
        'extra with pip install "gptembed[plot]"'
    ) from err

from ._checks import (
    check_float,
    check_int,
    check_int_in_range,
    check_integer_array,
    check_real_array,
)
from .attention_cost import attention_scores_bytes, kv_cache_bytes
from .attention_terms import mean_by_lag
from .embedding import GPTStyleEmbedding
from .measure import format_bytes
from .models import (
    MODELS,
    ModelConfig,
    config_embedding_counts,
    model_label,
    transformer_parameter_count,
)
from .positions import PAD_POSITION, alibi_slopes, linear_bias, position_ids_from_mask, rotate
from .probes import PrincipalComponents, cosine_similarity_matrix

FIGSIZE = (7.0, 4.0)
"""Width and height in inches of a one-panel figure (:func:`plot_loss_curves`)."""

ADDITION_PANEL_SIZE = (2.0, 3.2)
"""Width and height in inches of each of :func:`plot_embedding_addition`'s three panels, which
sit in one row with their colour bar (:data:`ADDITION_COLORBAR_WIDTH`)."""

ADDITION_COLORBAR_WIDTH = 0.9
"""Inches added to :func:`plot_embedding_addition`'s row for its colour bar."""

ASYMMETRY_FIGSIZE = (7.0, 5.5)
"""Width and height in inches of :func:`plot_parameter_asymmetry` (a bar per model)."""

MEMORY_FIGSIZE = (7.0, 4.5)
"""Width and height in inches of :func:`plot_attention_memory`."""

SIMILARITY_PANEL_SIZE = (3.0, 3.1)
"""Width and height in inches of one panel of :func:`plot_position_similarity`."""

COLORBAR_WIDTH = 1.0
"""Inches added to a figure's width for its colour bar."""

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

LINE_COLOURS = tuple(
    PALETTE[name] for name in ("blue", "vermillion", "green", "orange", "purple", "sky", "black")
)
"""The colours of a line figure's series, in order (the palette without its yellow, too pale on
white). A figure with more series than colours starts again at the first colour, each time with
the next line style, so no two series look alike (:func:`series_styles`)."""

LINE_DASHES: tuple[Any, ...] = ("-", "-.", ":", (0, (6, 2, 1, 2)))
"""Dash patterns that tell the runs of :func:`plot_loss_curves` apart: solid, dash-dot, dotted,
long dash-dot. Plain dashes are left for the floors."""

LINE_MARKERS = ("o", "s", "^", "D", "v")
"""Markers that tell the lines of :func:`plot_similarity_by_lag` and :func:`plot_loss_by` apart."""

DIVERGING_CMAP = "RdBu_r"
"""Colour map for signed values (embeddings): blue negative, red positive, white zero."""

BOUNDARY_STYLE: dict[str, Any] = {
    "color": "#333333",
    "lw": 0.8,
    "path_effects": [withStroke(linewidth=2.0, foreground="white")],
}
"""Record boundaries on a :data:`DIVERGING_CMAP` heatmap: a thin dark-grey line in a white halo,
so it stands out on white (zero), deep red and deep blue alike."""


def _show_returned_figures_in_ipython(shell: Any = None) -> None:
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
    shell = shell if shell is not None else get_ipython()
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
    figsize: tuple[float, float] = FIGSIZE, ncols: int = 1, nrows: int = 1
) -> tuple[Figure, Any]:
    """A figure with an opaque white background and ``nrows x ncols`` axes (constrained layout).

    Returns:
        ``(fig, axes)``: one :class:`~matplotlib.axes.Axes`, or an array of them, as
        ``Figure.subplots`` gives.
    """
    fig = Figure(figsize=figsize, layout="constrained", facecolor="white")
    fig.patch.set_alpha(1.0)
    return fig, fig.subplots(nrows, ncols)


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


def series_styles(n_series: int, styles: Sequence[Any]) -> list[tuple[str, Any]]:
    """A ``(colour, style)`` pair for each of ``n_series`` lines, no two pairs alike.

    Series ``i`` gets colour ``i mod 7`` of :data:`LINE_COLOURS` and style ``i mod len(styles)``
    (a dash pattern or a marker), so the first series keep their colours and the pairs repeat
    only after ``lcm(7, len(styles))`` series.

    Raises:
        ValueError: no series, or more than ``lcm(7, len(styles))``: so many lines cannot be
            told apart.
    """
    n_series = check_int("n_series", n_series)
    n_distinct = math.lcm(len(LINE_COLOURS), len(styles))
    if n_series > n_distinct:
        raise ValueError(
            f"a figure can tell at most {n_distinct} lines apart ({len(LINE_COLOURS)} colours "
            f"by {len(styles)} line styles), got {n_series}: draw fewer on one axes"
        )
    return [(LINE_COLOURS[i % len(LINE_COLOURS)], styles[i % len(styles)]) for i in range(n_series)]


def _labelled_level(ax: Axes, level: float, text: str, colour: str) -> None:
    """A dashed horizontal line at ``level`` (a loss floor, a baseline), labelled at its right end
    in its colour."""
    ax.axhline(level, color=colour, ls="--", lw=1.2)
    ax.annotate(
        text,
        xy=(1.0, level),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color=colour,
    )


def _mark_verticals(ax: Axes, marks: Mapping[str, float], *, linestyle: str = "--") -> None:
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


def _check_finite(name: str, array: NDArray[np.float64]) -> None:
    """Refuse an array with a NaN or inf: it has no colour, and it would wreck a colour scale.

    Raises:
        ValueError: naming how many values are not finite, and the first one and its index.
    """
    bad = ~np.isfinite(array)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} holds {int(bad.sum())} value(s) that are NaN or inf, the first "
            f"{array[first]} at index {first}: a colour scale needs finite values"
        )


def _centred_limit(values: Sequence[NDArray[np.float64]]) -> float:
    """The largest ``|value|`` of finite arrays, for a colour scale centred on 0 (1 if all 0)."""
    return max(float(np.abs(v).max(initial=0.0)) for v in values) or 1.0


def plot_embedding_addition(
    token_rows: ArrayLike,
    position_rows: ArrayLike,
    *,
    row_labels: Sequence[str] | None = None,
    highlight_rows: Sequence[int] = (),
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """Token rows, position rows and their sum as three heatmaps on one colour scale.

    Args:
        token_rows: ``(T, D)``, the token table's rows for a sequence, ``W_tok[ids]``.
        position_rows: ``(T, D)``, the position table's rows ``W_pos[0:T]``.
        row_labels: ``T`` labels for the rows (for example ``"0 the"``); default ``"0"..``.
        highlight_rows: rows to outline in every panel (for example a token that repeats).
        axes: three axes to draw on; by default a new figure of three
            :data:`ADDITION_PANEL_SIZE` panels in a row.

    Returns:
        The figure. The colour scale is :data:`DIVERGING_CMAP`, centred on 0 and shared by the
        three panels (one colour bar).

    Raises:
        ValueError: the two arrays are not 2-D of one shape, either holds a NaN or inf (which no
            colour shows; the message names the first), a label list has the wrong length, a
            highlighted row is out of range, or ``axes`` does not hold three axes.
    """
    tok = np.asarray(token_rows, dtype=float)
    pos = np.asarray(position_rows, dtype=float)
    if tok.ndim != 2 or tok.shape != pos.shape:
        raise ValueError(
            f"token_rows and position_rows must be 2-D arrays of one shape (T, D), got "
            f"{tok.shape} and {pos.shape}"
        )
    total = tok + pos
    for name, rows in (("token_rows", tok), ("position_rows", pos), ("their sum", total)):
        _check_finite(name, rows)
    n_rows = tok.shape[0]
    labels = [str(t) for t in range(n_rows)] if row_labels is None else list(row_labels)
    if len(labels) != n_rows:
        raise ValueError(f"row_labels must have {n_rows} entries, got {len(labels)}")
    for row in highlight_rows:
        if not 0 <= row < n_rows:
            raise ValueError(f"highlight row {row} is out of range: rows are 0..{n_rows - 1}")
    fig, panels = figure_and_panels(
        3, ADDITION_PANEL_SIZE, axes=axes, extra_width=ADDITION_COLORBAR_WIDTH
    )
    limit = _centred_limit((tok, pos, total))
    norm = Normalize(vmin=-limit, vmax=limit)
    titles = ("token rows\n$W_{tok}[id_t]$", "+ position rows\n$W_{pos}[t]$", "= sum\n$x_t$")
    for ax, data, title in zip(panels, (tok, pos, total), titles, strict=True):
        ax.imshow(data, cmap=DIVERGING_CMAP, norm=norm, aspect="auto")
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
    fig.colorbar(ScalarMappable(norm, DIVERGING_CMAP), ax=panels, label="value", shrink=0.9)
    return fig


def plot_parameter_asymmetry(
    models: Mapping[str, ModelConfig] = MODELS, *, ax: Axes | None = None
) -> Figure:
    """One bar per model, its parameters as shares: position table, token table, the rest.

    The axis is linear, 0 to 100% of each whole model
    (:func:`~gptembed.models.transformer_parameter_count`), so a segment's length is its share and
    models of any size fit: the position table is a sliver of every bar. The text on each bar
    gives that sliver in numbers.
    The first model is drawn at the top.

    Args:
        models: name -> :class:`~gptembed.models.ModelConfig`, in the order to draw.
        ax: axes to draw on; by default a new :data:`ASYMMETRY_FIGSIZE` figure.

    Raises:
        ValueError: ``models`` is empty.
    """
    if not models:
        raise ValueError("models must name at least one model, got none")
    fig, ax = figure_and_axes(ASYMMETRY_FIGSIZE, ax=ax)
    names = list(models)
    rows = np.arange(len(names))[::-1]  # first model at the top
    whole = np.array([transformer_parameter_count(models[n]) for n in names], dtype=float)
    counts = [config_embedding_counts(models[n]) for n in names]
    position = 100 * np.array([c.position for c in counts]) / whole  # (models,) percent
    token = 100 * np.array([c.token for c in counts]) / whole
    segments = [
        ("position table (n_ctx x d)", position, PALETTE["vermillion"]),
        ("token table (vocab x d)", token, PALETTE["blue"]),
        ("the rest: blocks and final layer norm", 100 - position - token, PALETTE["sky"]),
    ]
    left = np.zeros(len(names))
    for label, share, colour in segments:
        ax.barh(rows, share, left=left, height=0.6, color=colour, label=label)
        left = left + share
    for row, share in zip(rows, position, strict=True):
        ax.text(99, row, f"positions {share:.3f}%", ha="right", va="center", fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_yticks(rows, [model_label(n) for n in names])
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("share of the model's parameters (%)")
    ax.set_title("Where each model's parameters are")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=3, fontsize=8, frameon=False)
    return fig


_LENGTH_TICKS = {2**k: (f"{2 ** (k - 10)}K" if k >= 10 else str(2**k)) for k in range(4, 21)}


def _log_length_axis(ax: Axes, lengths: Sequence[int] | NDArray[np.integer]) -> None:
    """A log-2 x axis of sorted lengths, its powers of two in ``[lengths[0], lengths[-1]]``
    labelled (256, 1K, ...)."""
    ax.set_xscale("log", base=2)
    ticks = [n for n in _LENGTH_TICKS if lengths[0] <= n <= lengths[-1]]
    ax.set_xticks(ticks, [_LENGTH_TICKS[n] for n in ticks])


def _finish_cost_axes(ax: Axes, xlabel: str, ylabel: str, title: str) -> None:
    """How the log-log cost figures end: no minor ticks, labels and title, a grid on the major
    ticks and the legend at the lower right."""
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)


def _precision(bytes_per_element: int) -> str:
    """How a figure's title names a number format of that many bytes."""
    return {4: "fp32", 2: "fp16"}.get(bytes_per_element, f"{bytes_per_element}-byte")


def plot_attention_memory(
    seq_lens: Sequence[int],
    n_heads: int,
    n_layers: int,
    *,
    measured: Mapping[int, int] | None = None,
    measured_naive: Mapping[int, int] | None = None,
    memory_lines: Mapping[str, int] | None = None,
    bytes_per_element: int = 4,
    ax: Axes | None = None,
) -> Figure:
    """Log-log attention score memory against sequence length: formula lines, measured points.

    Three formula lines (:func:`~gptembed.attention_cost.attention_scores_bytes`): one head, one
    layer of ``n_heads`` and all ``n_layers``. Measured peaks of one head sit on the one-head line.

    Args:
        seq_lens: sequence lengths the lines span (at least two).
        n_heads, n_layers: the model's heads per layer and layers.
        measured: sequence length -> measured peak bytes of one head (in-place softmax).
        measured_naive: the same for the naive softmax.
        memory_lines: label -> bytes, drawn as dotted horizontal lines (accelerator memory),
            each labelled at its own height.
        bytes_per_element: 4 for fp32, 2 for fp16.
        ax: axes to draw on; by default a new :data:`MEMORY_FIGSIZE` figure.

    Raises:
        ValueError: fewer than two sequence lengths.
    """
    lengths = np.array(sorted(seq_lens))
    if lengths.size < 2:
        raise ValueError(f"seq_lens must hold at least two lengths, got {lengths.size}")
    fig, ax = figure_and_axes(MEMORY_FIGSIZE, ax=ax)
    gib = 2**30
    lines = [
        (f"all {n_layers} layers ({n_heads} heads each)", n_heads, n_layers, PALETTE["vermillion"]),
        (f"one layer ({n_heads} heads)", n_heads, 1, PALETTE["orange"]),
        ("one head", 1, 1, PALETTE["blue"]),
    ]
    for label, heads, layers, colour in lines:
        memory = [
            attention_scores_bytes(int(n), heads, layers, bytes_per_element=bytes_per_element)
            for n in lengths
        ]
        ax.plot(lengths, np.array(memory) / gib, color=colour, label=f"formula: {label}")
    for points, marker, colour, face, label in (
        (measured, "o", PALETTE["blue"], PALETTE["blue"], "measured: one head, in-place softmax"),
        (measured_naive, "s", PALETTE["green"], "none", "measured: one head, naive softmax"),
    ):
        if points:
            n, b = zip(*sorted(points.items()), strict=True)
            ax.plot(
                np.array(n),
                np.array(b) / gib,
                marker,
                color=colour,
                markersize=6,
                markerfacecolor=face,
                label=label,
            )
    if memory_lines:
        for i, size in enumerate(memory_lines.values()):
            ax.axhline(
                size / gib,
                color=PALETTE["black"],
                linestyle=":",
                linewidth=1,
                label="accelerator memory" if i == 0 else None,
            )
        # Each name sits on its own line, in a white box that interrupts it. Lines a small
        # factor apart are too close for two labels one above the other, so neighbours (by
        # size) alternate between two columns near the left edge, where the formula lines
        # run far below any accelerator's memory.
        by_size = sorted(memory_lines.items(), key=lambda item: item[1])
        for i, (name, size) in enumerate(by_size):
            ax.text(
                0.02 + 0.2 * (i % 2),
                size / gib,
                name,
                transform=ax.get_yaxis_transform(),  # x in axes fraction, y in data
                va="center",
                fontsize=8,
                bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"},
            )
    _log_length_axis(ax, lengths)
    ax.set_yscale("log")
    _finish_cost_axes(
        ax,
        "sequence length n (tokens, log scale)",
        "score memory (GiB, log scale)",
        "Attention scores grow as n\u00b2: \u00d74 per doubling of n "
        f"({_precision(bytes_per_element)})",
    )
    return fig


def _check_series(name: str, series: Mapping[str, ArrayLike]) -> None:
    """Refuse a line figure with nothing to draw (its legend would be empty)."""
    if not series:
        raise ValueError(f"{name} must hold at least one line, got none")


def plot_loss_curves(
    curves: Mapping[str, ArrayLike],
    *,
    floors: Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Training loss against step, one line per run, with each run's floor as a dashed line.

    Runs are told apart by colour and dash pattern (:func:`series_styles` with
    :data:`LINE_DASHES`), and every run is drawn.

    Args:
        curves: label -> ``(steps,)`` losses in nats.
        floors: label -> the lowest loss that run's model can reach (same labels as ``curves``).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no curves, or more than :func:`series_styles` can tell apart.
    """
    _check_series("curves", curves)
    styles = series_styles(len(curves), LINE_DASHES)
    fig, ax = figure_and_axes(FIGSIZE, ax=ax)
    for (label, losses), (colour, style) in zip(curves.items(), styles, strict=True):
        values = np.asarray(losses, dtype=float)
        steps = np.arange(1, len(values) + 1)
        ax.plot(steps, values, linestyle=style, color=colour, lw=2, label=label)
        if floors is not None and label in floors:
            _labelled_level(ax, floors[label], f"floor {floors[label]:.3f}", colour)
    ax.set_xscale("log")
    ax.set_xlabel("training step (log scale)")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", frameon=True)
    return fig


def plot_position_similarity(
    tables: Mapping[str, ArrayLike],
    *,
    period: int | None = None,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """One heatmap per table of the cosine similarity between every pair of its rows.

    Args:
        tables: title -> ``(L, D)`` position table; one panel each, left to right.
        period: if given, the ticks sit at multiples of ``period`` (the first position of each
            record) and a line in :data:`BOUNDARY_STYLE` marks each record boundary.
        axes: one axes per table to draw on; by default a new figure of one
            :data:`SIMILARITY_PANEL_SIZE` panel per table, in rows as :func:`panel_grid`
            lays them out, plus :data:`COLORBAR_WIDTH`.

    Returns:
        The figure, with a shared colour bar from -1 to 1.

    Raises:
        ValueError: no tables, or ``axes`` does not hold one axes per table.
    """
    if not tables:
        raise ValueError("tables must hold at least one table, got none")
    if period is not None:
        period = check_int("period", period)
    fig, panels = figure_and_panels(
        len(tables), SIMILARITY_PANEL_SIZE, axes=axes, extra_width=COLORBAR_WIDTH
    )
    for ax, (title, table) in zip(panels, tables.items(), strict=True):
        sims = cosine_similarity_matrix(table)
        length = len(sims)
        ax.imshow(
            sims,
            cmap=DIVERGING_CMAP,
            vmin=-1.0,
            vmax=1.0,
            extent=(-0.5, length - 0.5, length - 0.5, -0.5),
            interpolation="nearest",
        )
        if period is not None:
            starts = range(0, length, period)
            ax.set_xticks(starts)
            ax.set_yticks(starts)
            for edge in starts[1:]:
                for draw_line in (ax.axhline, ax.axvline):
                    draw_line(edge - 0.5, **BOUNDARY_STYLE)
        ax.set_title(title)
        ax.set_xlabel("position")
        ax.set_ylabel("position")
    scale = ScalarMappable(Normalize(-1.0, 1.0), DIVERGING_CMAP)
    fig.colorbar(scale, ax=panels, shrink=0.85, label="cosine similarity")
    return fig


def plot_score_terms(
    terms: Mapping[str, ArrayLike], *, axes: Sequence[Axes] | None = None
) -> Figure:
    """One ``T x T`` heatmap per score term (query ``i`` down, key ``j`` across), one scale.

    Args:
        terms: title -> ``(T, T)`` scores of one sequence, such as the four of
            :func:`~gptembed.attention_model.score_terms`. Keys a query may not see (``j > i``)
            are drawn grey, and so is a score of ``-inf`` (a key given no weight, as a mask does).
        axes: one axes per term to draw on; by default a new figure, left to right.

    Returns:
        The figure, with one colour bar centred on 0 shared by every panel, as wide as the
        largest finite score a query may see.

    Raises:
        ValueError: a term is not square, the terms differ in shape, a score a query may see is
            NaN or ``+inf`` (the message names the first), or ``axes`` does not hold one axes
            per term.
    """
    arrays = {title: np.asarray(term, dtype=float) for title, term in terms.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or any(len(s) != 2 or s[0] != s[1] for s in shapes):
        raise ValueError(f"terms must be (T, T) arrays of one shape, got shapes {sorted(shapes)}")
    (length, _) = shapes.pop()
    future = np.triu(np.ones((length, length), dtype=bool), k=1)
    for title, array in arrays.items():
        bad = (np.isnan(array) | (array == np.inf)) & ~future
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise ValueError(
                f"term {title!r} holds {int(bad.sum())} score(s) that are NaN or +inf where a "
                f"query may look, the first {array[i, j]} at query {i}, key {j}: only -inf (a "
                "key given no weight) has a meaning there"
            )
    hidden = {title: future | np.isneginf(array) for title, array in arrays.items()}
    fig, panels = figure_and_panels(len(arrays), (2.6, 3.2), axes=axes, extra_width=1.2)
    limit = _centred_limit([array[~hidden[title]] for title, array in arrays.items()])
    norm = Normalize(-limit, limit)
    for ax, (title, array) in zip(panels, arrays.items(), strict=True):
        ax.set_facecolor("#d9d9d9")  # shows through the hidden (future or -inf) keys
        masked = np.ma.masked_where(hidden[title], array)
        ax.imshow(masked, cmap=DIVERGING_CMAP, norm=norm, interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key position j")
    panels[0].set_ylabel("query position i")
    fig.colorbar(ScalarMappable(norm, DIVERGING_CMAP), ax=panels, shrink=0.85, label="score")
    return fig


def _lines_by_lag(
    ax: Axes,
    profiles: Mapping[str, NDArray[np.float64]],
    first_lag: int,
    marks: Sequence[int],
    xlabel: str,
) -> None:
    """Draw one line with markers per profile, ``profile[k]`` at lag ``first_lag + k``."""
    styles = series_styles(len(profiles), LINE_MARKERS)
    for (label, values), (colour, marker) in zip(profiles.items(), styles, strict=True):
        lags = np.arange(first_lag, first_lag + len(values))
        ax.plot(lags, values, marker=marker, ms=4, color=colour, lw=1.5, label=label)
    for lag in marks:
        ax.axvline(lag, color=PALETTE["black"], ls=":", lw=1.0)
    ax.axhline(0.0, color=PALETTE["black"], lw=0.6)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)


def plot_similarity_by_lag(
    profiles: Mapping[str, ArrayLike], *, marks: Sequence[int] = (), ax: Axes | None = None
) -> Figure:
    """Mean cosine similarity of rows ``lag`` apart against the lag, one line per table.

    Lines are told apart by colour and marker (:func:`series_styles` with
    :data:`LINE_MARKERS`), and every line is drawn.

    Args:
        profiles: label -> ``(L - 1,)`` similarities at lags ``1 .. L-1``
            (:func:`~gptembed.probes.similarity_by_lag`).
        marks: lags to mark with a dotted vertical line (for example a task's offset).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no profiles, or more than :func:`series_styles` can tell apart.
    """
    _check_series("profiles", profiles)
    fig, ax = figure_and_axes(ax=ax)
    values = {label: np.asarray(profile, dtype=float) for label, profile in profiles.items()}
    _lines_by_lag(ax, values, 1, marks, "lag: distance between the two rows (positions)")
    ax.set_ylim(-1.05, 1.05)
    ax.set_ylabel("mean cosine similarity")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def plot_score_terms_by_lag(
    terms: Mapping[str, ArrayLike], *, marks: Sequence[int] = (), ax: Axes | None = None
) -> Figure:
    """Each score term's mean against the lag ``i - j`` of the key behind the query, one line each.

    What a heatmap of the terms shows only faintly, drawn as lines: the mean of each term along
    each lag ``0 .. T-1`` (:func:`~gptembed.attention_terms.mean_by_lag`, over the queries
    ``i >= lag`` and the sequences of a batch).

    Args:
        terms: title -> ``(..., T, T)`` scores, such as the four of
            :func:`~gptembed.attention_model.score_terms`.
        marks: lags to mark with a dotted vertical line (for example a task's offset).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no terms, more than :func:`series_styles` can tell apart, or as
            :func:`~gptembed.attention_terms.mean_by_lag`.
    """
    _check_series("terms", terms)
    profiles = {title: mean_by_lag(term) for title, term in terms.items()}
    fig, ax = figure_and_axes(ax=ax)
    _lines_by_lag(ax, profiles, 0, marks, "lag i - j: how far back the key sits (positions)")
    ax.set_ylabel("mean score")
    ax.legend(loc="best", fontsize=8)
    return fig


def plot_loss_by(
    x: ArrayLike,
    curves: Mapping[str, ArrayLike],
    xlabel: str,
    *,
    marks: Mapping[str, float] | None = None,
    ylabel: str = "cross-entropy (nats)",
    ax: Axes | None = None,
) -> Figure:
    """Measured loss (nats) against a setting ``x``, one line with markers per model.

    Lines are told apart by colour and marker (:func:`series_styles` with
    :data:`LINE_MARKERS`), and every line is drawn.

    Args:
        x: ``(n,)`` the settings (a start position, a generation step, ...).
        curves: label -> ``(n,)`` losses.
        xlabel: what ``x`` is.
        marks: label -> an ``x`` to mark with a dashed vertical line (for example the window).
        ylabel: what the losses are (for example an excess over the best possible).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no curves, or more than :func:`series_styles` can tell apart.
    """
    _check_series("curves", curves)
    styles = series_styles(len(curves), LINE_MARKERS)
    fig, ax = figure_and_axes(ax=ax)
    xs = np.asarray(x, dtype=float)
    for (label, losses), (colour, marker) in zip(curves.items(), styles, strict=True):
        values = np.asarray(losses, dtype=float)
        ax.plot(xs, values, marker=marker, ms=4, color=colour, lw=1.5, label=label)
    _mark_verticals(ax, marks or {})
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return fig


EXTRAPOLATION_PANEL_SIZE = (7.0, 3.4)
"""Width and height in inches of each panel of :func:`plot_loss_by_position` (one per task, one
under another)."""


def plot_loss_by_position(
    panels: Mapping[str, Mapping[str, ArrayLike]],
    train_len: int,
    *,
    floor: float = 1e-3,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """Loss (nats) against position, one panel per task and one line per model, past training.

    The y axis is logarithmic, so a loss near zero and one of many nats both show; losses below
    ``floor`` are drawn at ``floor``. A dashed line marks the training length, dotted lines its
    multiples, and the region past it is shaded.

    Args:
        panels: task title -> (model label -> ``(n,)`` loss at positions ``0 .. n-1``; ``nan``
            where a position has no target). A label has one colour and marker in every
            panel, no two labels alike (:func:`series_styles`).
        train_len: ``T``, the length the models were trained at.
        floor: the smallest loss drawn.
        axes: one axes per panel to draw on; by default a new figure of
            :data:`EXTRAPOLATION_PANEL_SIZE` panels, one under another.

    Raises:
        TypeError, ValueError: ``floor`` not a finite number > 0 (the y axis is logarithmic;
            an infinite floor drew an empty plot).
        ValueError: no panels, a panel with no curves, ``axes`` of the wrong number, or more
            labels than :func:`series_styles` can tell apart.
    """
    train_len = check_int("train_len", train_len)
    if not panels:
        raise ValueError("panels must hold at least one task")
    for title, curves in panels.items():
        _check_series(f"panels[{title!r}]", curves)
    floor = check_float("floor", floor, above=0)
    fig, grid = figure_and_panels(len(panels), EXTRAPOLATION_PANEL_SIZE, axes=axes)
    labels = list(dict.fromkeys(label for curves in panels.values() for label in curves))
    style = dict(zip(labels, series_styles(len(labels), LINE_MARKERS), strict=True))
    for ax, (title, curves) in zip(grid, panels.items(), strict=True):
        length = 0
        for label, losses in curves.items():
            values = np.maximum(np.asarray(losses, dtype=float), floor)  # nan stays nan
            length = max(length, len(values))
            colour, marker = style[label]
            ax.plot(
                np.arange(len(values)), values, marker=marker, ms=3, markevery=4,
                color=colour, lw=1.4, label=label,
            )  # fmt: skip
        ax.axvspan(train_len - 0.5, max(length, train_len) - 0.5, color="#eeeeee", zorder=0)
        ax.axvline(train_len - 0.5, color=PALETTE["black"], ls="--", lw=1.0)
        for multiple in range(2 * train_len, length, train_len):
            ax.axvline(multiple - 0.5, color=PALETTE["black"], ls=":", lw=0.8)
        ax.annotate(
            f"trained length T = {train_len}",
            xy=(train_len - 0.5, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -12),
            textcoords="offset points",
            fontsize=8,
        )
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("position in the sequence")
        ax.grid(True, alpha=0.3)
    grid[0].set_ylabel("cross-entropy at that position (nats, log scale)")
    grid[0].legend(loc="lower right", fontsize=8, framealpha=0.9)
    return fig


def plot_context_costs(
    name: str,
    seq_lens: Sequence[int],
    *,
    bytes_per_element: int = 4,
    marks: Mapping[str, int] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Bytes against context length for the costs a longer context brings, side by side.

    Four lines on log-log axes, one sequence, in ``bytes_per_element`` per number: the position
    table for a context of ``n`` (``n * d`` numbers: linear, and small), the KV cache
    (:func:`~gptembed.attention_cost.kv_cache_bytes`: linear), eager attention's scores of every
    layer (:func:`~gptembed.attention_cost.attention_scores_bytes`: quadratic), and the model's
    weights as published (:func:`~gptembed.models.transformer_parameter_count`: flat).

    Args:
        name: the model's key in :data:`~gptembed.models.MODELS` (``"gpt2-small"``).
        seq_lens: context lengths the lines span (at least two).
        bytes_per_element: 4 for fp32, 2 for fp16.
        marks: label -> a context length to mark with a dotted vertical line, labelled at the
            top (for example where two lines cross).
        ax: axes to draw on; by default a new :data:`MEMORY_FIGSIZE` figure.

    Raises:
        KeyError: ``name`` is not a key of ``MODELS``.
        TypeError, ValueError: fewer than two context lengths, or a length or
            ``bytes_per_element`` that is not a positive integer.
    """
    if name not in MODELS:
        raise KeyError(f"no model {name!r}: MODELS has {', '.join(MODELS)}")
    config = MODELS[name]
    size = check_int("bytes_per_element", bytes_per_element)
    lengths = sorted(check_int("seq_lens", n) for n in seq_lens)
    if len(lengths) < 2:
        raise ValueError(f"seq_lens must hold at least two lengths, got {len(lengths)}")
    fig, ax = figure_and_axes(MEMORY_FIGSIZE, ax=ax)
    heads, layers, width = config.n_heads, config.n_layers, config.embed_dim
    weights = transformer_parameter_count(config) * size
    lines = [  # in the order they end at the right, top first, as the legend lists them
        (
            f"attention scores, all {layers} layers (eager)",
            [attention_scores_bytes(n, heads, layers, bytes_per_element=size) for n in lengths],
            PALETTE["vermillion"],
            "-",
        ),
        (
            "KV cache",
            [kv_cache_bytes(n, layers, width, bytes_per_element=size) for n in lengths],
            PALETTE["blue"],
            "-",
        ),
        (
            f"model weights ({transformer_parameter_count(config):,} parameters)",
            [weights] * len(lengths),
            PALETTE["black"],
            "--",
        ),
        ("position table (n rows)", [n * width * size for n in lengths], PALETTE["green"], "-"),
    ]
    for label, sizes, colour, style in lines:
        ax.plot(lengths, np.array(sizes, dtype=float), style, color=colour, lw=2, label=label)
    _mark_verticals(ax, marks or {}, linestyle=":")
    _log_length_axis(ax, lengths)
    ax.set_yscale("log", base=2)
    low, high = ax.get_ylim()
    byte_ticks = [2**p for p in range(0, 61, 5) if low <= 2**p <= high]  # 1 B, 32 B, ... 1 EiB
    ax.set_yticks(byte_ticks, [format_bytes(b) for b in byte_ticks])
    _finish_cost_axes(
        ax,
        "context length n (tokens, log scale)",
        "memory (log scale)",
        f"{model_label(name)}: what a longer context costs ({_precision(size)}, one sequence)",
    )
    return fig


def plot_training_curve(
    losses: ArrayLike,
    held_out_steps: ArrayLike,
    held_out_losses: ArrayLike,
    *,
    baselines: Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """A training run: the loss of every step's batch, the held-out loss now and then, and the
    losses of simpler models as dashed lines.

    Args:
        losses: ``(steps,)`` training losses (nats), step 1 first.
        held_out_steps, held_out_losses: ``(n,)`` held-out losses after those numbers of steps.
        baselines: label -> the held-out loss of a simpler model (a unigram model, say); at
            most two, each in a colour of its own.
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: ``held_out_steps`` and ``held_out_losses`` differ in length, or more than
            two baselines.
    """
    baseline_colours = (PALETTE["vermillion"], PALETTE["orange"])
    if len(baselines or {}) > len(baseline_colours):
        raise ValueError(
            f"at most {len(baseline_colours)} baselines can be told apart from the runs' lines, "
            f"got {len(baselines or {})}"
        )
    steps_done = np.asarray(held_out_steps, dtype=float)
    held = np.asarray(held_out_losses, dtype=float)
    if steps_done.shape != held.shape:
        raise ValueError(
            f"held_out_steps and held_out_losses must have one shape, got {steps_done.shape} "
            f"and {held.shape}"
        )
    fig, ax = figure_and_axes(FIGSIZE, ax=ax)
    train = np.asarray(losses, dtype=float)
    ax.plot(
        np.arange(1, len(train) + 1), train, color=PALETTE["sky"], lw=0.8, label="training batch"
    )
    ax.plot(steps_done, held, "o-", color=PALETTE["blue"], ms=4, lw=1.5, label="held-out text")
    for (label, value), colour in zip((baselines or {}).items(), baseline_colours, strict=False):
        _labelled_level(ax, value, f"{label} {value:.2f}", colour)
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center", frameon=True)
    return fig


PCA_PANEL_SIZE = (3.5, 3.4)
"""Width and height in inches of each of :func:`plot_principal_components`'s two panels."""


def plot_principal_components(
    components: PrincipalComponents, *, n_components: int = 3, axes: Sequence[Axes] | None = None
) -> Figure:
    """A table's top principal components against position (left), and its rows in the plane
    of the first two (right), coloured by position.

    Args:
        components: a :class:`~gptembed.probes.PrincipalComponents` of an ``(L, D)`` table.
        n_components: how many components to draw on the left (each labelled with its share
            of the variance).
        axes: two axes to draw on; by default a new figure of two :data:`PCA_PANEL_SIZE`
            panels side by side.

    Raises:
        ValueError: ``n_components`` is not in ``[1, K]`` (``K`` the components there are),
            fewer than 2 components for the right panel, or ``axes`` does not hold 2 axes.
    """
    scores = np.asarray(components.scores, dtype=float)  # (L, K)
    shares = np.asarray(components.variance_share, dtype=float)
    n_components = check_int("n_components", n_components)
    if n_components > scores.shape[1] or scores.shape[1] < 2:
        raise ValueError(
            f"n_components must be in [1, {scores.shape[1]}] and the table needs at least 2 "
            f"components, got n_components {n_components} of {scores.shape[1]}"
        )
    fig, (left, right) = figure_and_panels(2, PCA_PANEL_SIZE, axes=axes)
    positions = np.arange(len(scores))
    for k, (colour, dashes) in enumerate(series_styles(n_components, LINE_DASHES)):
        left.plot(
            positions,
            scores[:, k],
            linestyle=dashes,
            color=colour,
            lw=1.8,
            label=f"component {k + 1} ({shares[k]:.0%} of the variance)",
        )
    left.axhline(0.0, color=PALETTE["black"], lw=0.6)
    left.set_xlabel("position")
    left.set_ylabel("coordinate along the component")
    left.grid(True, alpha=0.3)
    left.legend(loc="best", fontsize=8)
    right.plot(scores[:, 0], scores[:, 1], color="#999999", lw=0.8, zorder=1)
    dots = right.scatter(scores[:, 0], scores[:, 1], c=positions, cmap="viridis", s=14, zorder=2)
    right.annotate(
        "position 0",
        xy=(scores[0, 0], scores[0, 1]),
        xytext=(6, 6),
        textcoords="offset points",
        fontsize=8,
    )
    right.set_xlabel("component 1")
    right.set_ylabel("component 2")
    right.grid(True, alpha=0.3)
    fig.colorbar(dots, ax=right, label="position")
    return fig


def plot_attention_by_lag(weights: Mapping[str, ArrayLike], *, ax: Axes | None = None) -> Figure:
    """A heatmap of each head's mean attention weight on the key ``lag`` places back.

    Args:
        weights: head label -> ``(n_lags,)`` mean weights at lags ``0 .. n_lags-1`` (lag 0 is
            the query's own position); one row per head, top to bottom.
        ax: axes to draw on; by default a new figure sized to the rows.

    Raises:
        ValueError: no heads, or rows of different lengths.
    """
    rows = {label: np.asarray(w, dtype=float) for label, w in weights.items()}
    shapes = {r.shape for r in rows.values()}
    if not rows or len(shapes) != 1 or any(r.ndim != 1 for r in rows.values()):
        raise ValueError(f"weights must hold (n_lags,) rows of one length, got {sorted(shapes)}")
    grid = np.stack(list(rows.values()))  # (heads, n_lags)
    fig, ax = figure_and_axes((FIGSIZE[0], 1.2 + 0.35 * len(rows)), ax=ax)
    image = ax.imshow(grid, cmap="viridis", vmin=0.0, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), list(rows))
    ax.set_xticks(range(0, grid.shape[1], 2))
    ax.set_xlabel("lag: how many places back the key is (0: the query's own position)")
    fig.colorbar(image, ax=ax, label="mean attention weight")
    return fig


# Concept diagrams: pictures of the ideas, drawn from the package's own arithmetic. Each
# ``plot_<idea>`` has a ``describe_<idea>`` taking the same data: the same picture in words, one
# paragraph for a figure's alt text (``mystnb.image.alt``), its numbers computed as the picture's.

PAGE_WIDTH_PX = 672
"""Width in CSS pixels of the book's text column at a 1280-pixel window; a wider figure is shown
shrunk to it."""

DISPLAY_DPI = 100
"""CSS pixels per inch of a figure as the book shows it: matplotlib's default dpi (a
:data:`FIGSIZE` figure is shown 711 pixels wide with its tight bounding box). The chapters' PNGs
are drawn at twice that, and their metadata gives the displayed size."""

MIN_TEXT_PX = 9.0
"""The smallest text a figure may show, in CSS pixels as displayed (:func:`smallest_text_px`)."""

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

_GREY = "#d9d9d9"  # hidden or padded cells, as plot_score_terms greys a future key
_DARK_GREY = "#595959"  # text on _GREY (contrast 4.9:1)
_FRAME = "#333333"
_MINUS, _TIMES = "\u2212", "\u00d7"  # the minus and times signs, for labels
_RED_TEXT = "#a64500"  # the vermillion darkened for text: 6:1 on white (the vermillion is 3.9:1)


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


def _canvas(size: tuple[float, float], ax: Axes | None) -> tuple[Figure, Axes]:
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


def _cells(
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
    ax.add_patch(Rectangle((left, top), width, height, fill=False, edgecolor=_FRAME, lw=0.8))
    return image


def _text(ax: Axes, x: float, y: float, text: str, **kwargs: Any) -> Text:
    """A diagram's label at ``(x, y)`` inches, :data:`DIAGRAM_FONTSIZE` unless told."""
    kwargs.setdefault("fontsize", DIAGRAM_FONTSIZE)
    return ax.text(x, y, text, **kwargs)


def _text_width(text: str, fontsize: float = DIAGRAM_FONTSIZE) -> float:
    """About how many inches ``text`` takes in DejaVu Sans: 0.6 em a character, on the wide side
    (digits are 0.64 em, most lower-case letters less)."""
    return 0.6 * fontsize / 72.0 * len(text)


def _token_label(token: object) -> str:
    """A token as a label: as it is, or quoted if blank or unprintable (a space, ``\\n``)."""
    text = str(token)
    return text if text.strip() and text.isprintable() else repr(text)


def _check_diagram_size(name: str, shape: tuple[int, ...], hint: str) -> None:
    """Refuse what a diagram cannot draw legibly: more than :data:`DIAGRAM_MAX_ROWS` rows or
    :data:`DIAGRAM_MAX_COLUMNS` columns."""
    rows, cols = shape
    if rows > DIAGRAM_MAX_ROWS or cols > DIAGRAM_MAX_COLUMNS:
        raise ValueError(
            f"{name} has shape {shape}: a diagram draws at most {DIAGRAM_MAX_ROWS} rows of "
            f"{DIAGRAM_MAX_COLUMNS} columns, so that every label stays legible; {hint}"
        )


def _rows_from_0(count: int) -> str:
    """``row 0``, ``rows 0 and 1``, ``rows 0 to 4``."""
    return {1: "row 0", 2: "rows 0 and 1"}.get(count, f"rows 0 to {count - 1}")


def _list(numbers: Sequence[object], last: str = "and") -> str:
    """``1, 2 and 3``."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


# 1. The input layer: two tables, the rows a sequence picks, and their sum.


@dataclass(frozen=True)
class _EmbeddingSum:
    """:func:`plot_embedding_sum`'s inputs, checked, and the sum the layer computes."""

    wte: NDArray[np.float64]  # (V, D)
    wpe: NDArray[np.float64]  # (L, D)
    ids: NDArray[np.intp]  # (T,)
    total: NDArray[np.float64]  # (T, D)
    tokens: list[str]  # V token names, as given

    @property
    def names(self) -> list[str]:
        """The tokens as labels (:func:`_token_label`: a blank one quoted)."""
        return [_token_label(token) for token in self.tokens]

    @property
    def token_rows(self) -> NDArray[np.float64]:
        """``(T, D)``: ``wte[ids]``."""
        return self.wte[self.ids]

    @property
    def position_rows(self) -> NDArray[np.float64]:
        """``(T, D)``: ``wpe[0:T]``."""
        return self.wpe[: self.ids.size]

    def picks(self, row: int) -> list[int]:
        """The positions whose token is row ``row`` of the token table."""
        return [int(t) for t in np.flatnonzero(self.ids == row)]


def _embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    tokens: Sequence[object] | None,
) -> _EmbeddingSum:
    """The inputs of :func:`plot_embedding_sum`, checked; the sum is
    :meth:`~gptembed.embedding.GPTStyleEmbedding.forward` of a layer with those tables."""
    wte = check_real_array("token_table", token_table)
    wpe = check_real_array("position_table", position_table)
    if wte.ndim != 2 or wpe.ndim != 2 or wte.shape[1] != wpe.shape[1] or 0 in wte.shape + wpe.shape:
        raise ValueError(
            "token_table and position_table must be non-empty 2-D arrays (V, D) and (L, D) of "
            f"one width D, got shapes {wte.shape} and {wpe.shape}"
        )
    hint = "draw a small layer's tables (plot_embedding_addition draws a sequence's rows only)"
    _check_diagram_size("token_table", wte.shape, hint)
    _check_diagram_size("position_table", wpe.shape, hint)
    ids = check_integer_array("token_ids", token_ids, wte.shape[0])
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"token_ids must have shape (T,) with T >= 1, got shape {ids.shape}")
    # the layer's own forward: it refuses an id outside [0, V) and a sequence longer than L
    total = GPTStyleEmbedding.from_tables(wte, wpe).forward(ids)
    names = [f"id {v}" for v in range(wte.shape[0])] if tokens is None else list(tokens)
    if len(names) != wte.shape[0]:
        raise ValueError(
            f"tokens must name each of the token table's {wte.shape[0]} rows, got {len(names)}"
        )
    named = [str(name) for name in names]
    return _EmbeddingSum(wte, wpe, ids.astype(np.intp), np.asarray(total, np.float64), named)


def plot_embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    *,
    tokens: Sequence[object] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """The input layer as matrices: both tables, the rows a sequence picks, and their sum.

    Top: the token table ``wte`` ``(V, D)`` and the position table ``wpe`` ``(L, D)``, the rows
    the sequence picks outlined (a token's row noted with the positions that pick it) and the
    rows it does not pick faded. Below: ``wte[ids] + wpe[0:T] = x``, three ``(T, D)`` matrices,
    each row labelled with its position and token. One colour scale, :data:`DIVERGING_CMAP`
    centred on 0, for all five; the sum is the layer's own
    :meth:`~gptembed.embedding.GPTStyleEmbedding.forward`.
    :func:`describe_embedding_sum` says the same in words.

    >>> from gptembed import GPTStyleEmbedding
    >>> layer = GPTStyleEmbedding(vocab_size=6, max_seq_len=5, embed_dim=4, seed=10)
    >>> words = ["the", "cat", "sat", "on", "mat", "."]
    >>> fig = plot_embedding_sum(
    ...     layer.token_embeddings, layer.position_embeddings, [0, 1, 2, 3, 0], tokens=words
    ... )
    >>> fig.axes[0].get_images()[-1].get_array().shape  # the sum x: (T, D)
    (5, 4)

    Args:
        token_table: ``(V, D)``, a token table (``layer.token_embeddings``), at most
            :data:`DIAGRAM_MAX_ROWS` by :data:`DIAGRAM_MAX_COLUMNS`.
        position_table: ``(L, D)``, a position table of the same width.
        token_ids: ``(T,)`` ids in ``[0, V)``, ``T <= L``: the sequence.
        tokens: ``V`` names of the token table's rows (the vocabulary); by default the ids.
        ax: axes to draw on (a blank canvas); by default a new figure at most
            :data:`DIAGRAM_WIDTH` wide, as tall as the tables need.

    Returns:
        The figure. Its five images carry the labels ``"token table"``, ``"position table"``,
        ``"token rows"``, ``"position rows"`` and ``"sum"``.

    Raises:
        TypeError: a table that is not real numbers, or ids that are not integers.
        ValueError: tables that are not 2-D of one width, hold a NaN or inf, or are larger than a
            diagram draws; ids that are not ``(T,)``, lie outside ``[0, V)`` or are more than
            ``L``; ``tokens`` of the wrong length.
    """
    parts = _embedding_sum(token_table, position_table, token_ids, tokens)
    (vocab, dim), n_pos, seq_len = parts.wte.shape, parts.wpe.shape[0], parts.ids.size
    row_labels = [f"{t} {parts.names[i]}" for t, i in enumerate(parts.ids)]
    label_w = 0.12 + max(_text_width(s) for s in [*row_labels, *parts.names])
    plus_gap, equals_gap, margin, overhang = 1.05, 0.6, 0.15, 0.3  # overhang: x's wide title
    room = DIAGRAM_WIDTH - label_w - plus_gap - equals_gap - 2 * margin - overhang
    cell = min(0.3, room / (3 * dim))
    width = dim * cell
    x_tok = margin + label_w
    x_pos = x_tok + width + plus_gap
    x_sum = x_pos + width + equals_gap
    y_tables = 0.55
    y_arrows = y_tables + max(vocab, n_pos) * cell + 0.08
    y_rows = y_arrows + 0.95
    size = (x_sum + width + margin + overhang, y_rows + seq_len * cell + margin)
    fig, ax = _canvas(size, ax)
    limit = _centred_limit((parts.wte, parts.wpe, parts.total))
    norm = Normalize(-limit, limit)
    square = (cell, cell)

    def matrix(values: NDArray[np.float64], left: float, top: float, label: str) -> None:
        _cells(ax, values, left, top, square, cmap=DIVERGING_CMAP, norm=norm, label=label)

    def title(x: float, y: float, first: str, second: str) -> None:
        _text(ax, x + width / 2, y - 0.06, first, ha="center", va="bottom", fontsize=10)
        _text(ax, x + width / 2, y - 0.06, second, ha="center", va="top", color=_DARK_GREY)

    def veil(left: float, top: float, rows: int) -> None:  # fades rows the sequence skips
        ax.add_patch(Rectangle((left, top), width, rows * cell, color="white", alpha=0.7, lw=0))

    def outline(left: float, top: float, rows: int) -> None:
        box = Rectangle((left, top), width, rows * cell, fill=False, edgecolor="black", lw=2.0)
        ax.add_patch(box)

    # the two tables, the picked rows outlined, the others faded
    matrix(parts.wte, x_tok, y_tables, "token table")
    title(x_tok, y_tables - 0.22, "token table wte", f"{vocab} {_TIMES} {dim}, a row per token")
    for row, name in enumerate(parts.names):
        y = y_tables + (row + 0.5) * cell
        _text(ax, x_tok - 0.06, y, name, ha="right", va="center")
        picks = parts.picks(row)
        if not picks:
            veil(x_tok, y_tables + row * cell, 1)
            continue
        outline(x_tok, y_tables + row * cell, 1)
        shown = ", ".join(str(t) for t in picks[:3]) + (", …" if len(picks) > 3 else "")
        _text(ax, x_tok + width + 0.06, y, f"t = {shown}", va="center")
    matrix(parts.wpe, x_pos, y_tables, "position table")
    position_title = f"{n_pos} {_TIMES} {dim}, a row per position"
    title(x_pos, y_tables - 0.22, "position table wpe", position_title)
    for row in range(n_pos):
        _text(ax, x_pos + width + 0.06, y_tables + (row + 0.5) * cell, str(row), va="center")
    outline(x_pos, y_tables, seq_len)
    if n_pos > seq_len:
        veil(x_pos, y_tables + seq_len * cell, n_pos - seq_len)

    # the picked rows, added
    for x, text in ((x_tok, "pick rows ids"), (x_pos, f"pick {_rows_from_0(seq_len)}")):
        middle = x + width / 2
        ax.annotate(
            "",
            xy=(middle, y_rows - 0.45),
            xytext=(middle, y_arrows),
            arrowprops={"arrowstyle": "-|>", "color": _FRAME, "lw": 1.2},
        )
        _text(ax, middle + 0.08, y_arrows + 0.22, text, va="center", color=_DARK_GREY)
    matrix(parts.token_rows, x_tok, y_rows, "token rows")
    matrix(parts.position_rows, x_pos, y_rows, "position rows")
    matrix(parts.total, x_sum, y_rows, "sum")
    title(x_tok, y_rows - 0.22, "wte[ids]", "the tokens' rows")
    title(x_pos, y_rows - 0.22, f"wpe[0:{seq_len}]", "the positions' rows")
    title(x_sum, y_rows - 0.22, "x, the sum", f"{seq_len} {_TIMES} {dim}, the layer's output")
    for t, text in enumerate(row_labels):
        _text(ax, x_tok - 0.06, y_rows + (t + 0.5) * cell, text, ha="right", va="center")
    middle_y = y_rows + seq_len * cell / 2
    for x, sign in ((x_tok + width + plus_gap / 2, "+"), (x_pos + width + equals_gap / 2, "=")):
        _text(ax, x, middle_y, sign, ha="center", va="center", fontsize=18)

    # the colour scale, in the empty corner above the sum
    bar = ax.inset_axes(
        (x_sum / size[0], 1 - (y_tables + 0.55) / size[1], width / size[0], 0.12 / size[1])
    )
    colorbar = fig.colorbar(ScalarMappable(norm, DIVERGING_CMAP), cax=bar, orientation="horizontal")
    colorbar.set_label("value", fontsize=DIAGRAM_FONTSIZE)
    bar.xaxis.set_label_position("top")
    bar.tick_params(labelsize=DIAGRAM_FONTSIZE)
    bar.set_xticks([-limit, 0.0, limit], [f"{_MINUS}{limit:.2g}", "0", f"{limit:.2g}"])
    return fig


def describe_embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    *,
    tokens: Sequence[object] | None = None,
) -> str:
    """:func:`plot_embedding_sum` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_embedding_sum(np.ones((3, 2)), np.ones((4, 2)), [2, 0], tokens="abc"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Two grids of coloured cells (blue negative, red positive, white zero): the token table wte,
    3 rows (one per token: 'a', 'b' and 'c') by 2 columns, and the position table wpe, 4 rows by
    2 columns. The sequence 'c' 'a' (ids 2 and 0) picks its tokens' rows from the token table and
    rows 0 and 1 from the position table, outlined; the rows it skips are faded. Below, the 2
    picked token rows plus the 2 position rows equal x, 2 rows by 2 columns: each position's
    token row plus its position row.

    Raises:
        TypeError, ValueError: as :func:`plot_embedding_sum`.
    """
    parts = _embedding_sum(token_table, position_table, token_ids, tokens)
    (vocab, dim), n_pos, seq_len = parts.wte.shape, parts.wpe.shape[0], parts.ids.size
    quoted = [repr(token) for token in parts.tokens]  # 'the', and a blank token visible: ' '
    words = " ".join(quoted[i] for i in parts.ids)
    repeated = [(quoted[row], parts.picks(row)) for row in np.unique(parts.ids)]
    repeated = [(name, picks) for name, picks in repeated if len(picks) > 1]
    unpicked = n_pos > seq_len or len(np.unique(parts.ids)) < vocab
    text = (
        "Two grids of coloured cells (blue negative, red positive, white zero): the token table "
        f"wte, {vocab} rows (one per token: {_list(quoted)}) by {dim} columns, and the "
        f"position table wpe, {n_pos} rows by {dim} columns. The sequence {words} "
        f"(ids {_list(parts.ids.tolist())}) picks its tokens' rows from the token table and "
        f"{_rows_from_0(seq_len)} from the position table, outlined; "
        + ("the rows it skips are faded. " if unpicked else "it skips no row. ")
        + f"Below, the {seq_len} picked token rows plus the {seq_len} position rows equal x, "
        f"{seq_len} rows by {dim} columns: each position's token row plus its position row."
    )
    for name, picks in repeated:
        text += (
            f" The token {name} sits at positions {_list(picks)}: the same token row each time, "
            "but different rows of x."
        )
    return text


# 2. Rotary positions: a pair of coordinates turned by an angle that grows with position.

ROTARY_FIGSIZE = (7.0, 3.3)
"""Width and height in inches of :func:`plot_rotary_rotation`: its panels side by side."""


@dataclass(frozen=True)
class _RotaryRotation:
    """:func:`plot_rotary_rotation`'s inputs, checked, and the vectors
    :func:`~gptembed.positions.rotate` turns them to (the drawn pair's two coordinates)."""

    pair: int
    head_dim: int
    theta: float  # radians per position
    positions: list[int]
    turned: NDArray[np.float64]  # (n, 2): the query's pair at each position
    query: NDArray[np.float64]  # (2,): the query's pair, unturned
    key: NDArray[np.float64]  # (2,)
    distance_pairs: list[tuple[int, int]]
    queries: NDArray[np.float64]  # (m, 2): the query's pair turned to i
    keys: NDArray[np.float64]  # (m, 2): the key's pair turned to j

    def angles(self) -> NDArray[np.float64]:
        """``(m,)`` degrees from each turned key to its turned query, in ``(-180, 180]``."""
        turn = np.degrees(
            np.arctan2(self.queries[:, 1], self.queries[:, 0])
            - np.arctan2(self.keys[:, 1], self.keys[:, 0])
        )
        return 180.0 - (180.0 - turn) % 360.0

    def dots(self) -> NDArray[np.float64]:
        """``(m,)`` the pair's share of each score ``q_i . k_j``."""
        return np.einsum("md,md->m", self.queries, self.keys)

    @property
    def product(self) -> str:
        """What :meth:`dots` are, in words: the whole product when the head is one pair."""
        return "q·k" if self.head_dim == 2 else "the pair's q·k"


def _rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    base: float,
    pair: int,
    positions: Sequence[int],
    distance_pairs: Sequence[tuple[int, int]],
) -> _RotaryRotation:
    """The inputs of :func:`plot_rotary_rotation`, checked, and their rotations."""
    q = check_real_array("query", query)
    k = check_real_array("key", key)
    if q.ndim != 1 or q.shape != k.shape or q.size == 0 or q.size % 2:
        raise ValueError(
            f"query and key must be vectors (H,) of one even length H >= 2, got shapes "
            f"{q.shape} and {k.shape}"
        )
    head_dim = q.size
    pair = check_int_in_range("pair", pair, 0, head_dim // 2 - 1, f" for H = {head_dim}")
    dims = slice(2 * pair, 2 * pair + 2)
    for name, vector in (("query", q), ("key", k)):
        if not vector[dims].any():
            raise ValueError(
                f"{name}'s pair {pair} (dimensions {2 * pair} and {2 * pair + 1}) is zero: a "
                "zero vector has no direction to turn"
            )
    base = check_float("base", base, above=1)
    at = check_integer_array("positions", positions, None)
    if at.ndim != 1 or not 1 <= at.size <= 8 or at.min() < 0:
        raise ValueError(f"positions must be 1 to 8 integers >= 0, got {at.tolist()}")
    try:
        pairs = [tuple(p) for p in distance_pairs]
    except TypeError as err:
        raise TypeError(f"distance_pairs must hold pairs (i, j), got {distance_pairs!r}") from err
    if not 1 <= len(pairs) <= 3 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"distance_pairs must hold 1 to 3 pairs (i, j), got {pairs}")
    ij = [(check_int("i", i, minimum=0), check_int("j", j, minimum=0)) for i, j in pairs]
    # the package's rotation, of whole vectors: the drawn pair is two of their coordinates
    turned = rotate(np.tile(q, (at.size, 1)), base, positions=at)[:, dims]
    queries = rotate(np.tile(q, (len(ij), 1)), base, positions=[i for i, _ in ij])[:, dims]
    keys = rotate(np.tile(k, (len(ij), 1)), base, positions=[j for _, j in ij])[:, dims]
    theta = base ** (-2.0 * pair / head_dim)
    return _RotaryRotation(
        pair, head_dim, theta, at.tolist(), turned, q[dims], k[dims], ij, queries, keys
    )


def _arrow(ax: Axes, tip: NDArray[np.float64], colour: str, label: str, style: str = "-") -> None:
    """An arrow from the origin to ``tip``: an :class:`~matplotlib.text.Annotation` whose ``xy``
    is ``tip``, labelled ``label``."""
    ax.annotate(
        "",
        xy=(float(tip[0]), float(tip[1])),
        xytext=(0.0, 0.0),
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "lw": 2.0,
            "linestyle": style,
            "shrinkA": 0,
            "shrinkB": 0,
            "mutation_scale": 14,
        },
        label=label,
    )


def _plane(ax: Axes, reach: float) -> None:
    """A pair's plane: its two axes through the origin, the view ``reach`` each way."""
    ax.axhline(0.0, color="#bbbbbb", lw=0.8, zorder=0)
    ax.axvline(0.0, color="#bbbbbb", lw=0.8, zorder=0)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_color("#bbbbbb")


def _angle_arc(
    ax: Axes, start: float, end: float, radius: float, text: str, at: float | None = None
) -> None:
    """An arc from ``start`` to ``end`` degrees (either way round) at ``radius``, ``text`` just
    outside it at ``at`` degrees (its middle by default)."""
    low, high = sorted((start, end))
    ax.add_patch(
        Arc((0.0, 0.0), 2 * radius, 2 * radius, theta1=low, theta2=high, color=_FRAME, lw=1.2)
    )
    where = np.radians((low + high) / 2 if at is None else at)
    offset = radius + 0.09 * ax.get_xlim()[1]
    _text(ax, offset * np.cos(where), offset * np.sin(where), text, ha="center", va="center")


def _degrees(vector: NDArray[np.float64]) -> float:
    """The direction of a 2-D vector, in degrees."""
    return float(np.degrees(np.arctan2(vector[1], vector[0])))


def _tip_label(ax: Axes, tip: NDArray[np.float64], text: str, colour: str) -> None:
    """``text`` just past an arrow's tip, along the arrow."""
    where = tip * (1 + 0.13 * ax.get_xlim()[1] / np.linalg.norm(tip))
    _text(ax, where[0], where[1], text, ha="center", va="center", color=colour)


def _spread_out(positions: Sequence[int], theta: float, apart: float = 20.0) -> list[int]:
    """The positions to label, in order: each at least ``apart`` degrees of turn past the one
    before (arrows closer than that would overlap their labels), the last always."""
    kept: list[int] = []
    for t in sorted(set(positions)):
        if kept and np.degrees((t - kept[-1]) * theta) < apart:
            if t == max(positions):
                kept[-1] = t
            continue
        kept.append(t)
    return kept


def plot_rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    *,
    base: float = 10000.0,
    pair: int = 0,
    positions: Sequence[int] = (0, 1, 2, 3),
    distance_pairs: Sequence[tuple[int, int]] = ((2, 0), (7, 5)),
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """Rotary positions (RoPE) as a pair of coordinates turned by an angle that grows with position.

    First panel: one pair ``(2 pair, 2 pair + 1)`` of ``query`` at each of ``positions``:
    position ``t`` turns it by ``t theta`` (``theta = base**(-2 pair / H)`` radians), the angles
    drawn as arcs (for a slow pair, only positions 20 degrees apart are labelled). Then a panel
    per ``(i, j)`` of ``distance_pairs``: the query turned to ``i``, the key turned to ``j`` and
    the angle between them, which is the same for the same ``i - j``: both are turned, so the
    pair's share of the score ``q . k`` depends only on the distance. Every turned vector is
    :func:`~gptembed.positions.rotate`'s.
    :func:`describe_rotary_rotation` says the same in words.

    >>> fig = plot_rotary_rotation([1.0, 0.0], [0.5, 0.5])
    >>> [ax.get_title().replace("\\n", ": ") for ax in fig.axes[1:]]
    ['i = 2, j = 0: i \u2212 j = 2: angle 70°', 'i = 7, j = 5: i \u2212 j = 2: angle 70°']

    Args:
        query, key: ``(H,)`` a query and a key of one head, ``H`` even (``H = 2``: one pair).
        base: the wavelength scale of :func:`~gptembed.positions.rotate` (10,000 in RoPE).
        pair: which pair of dimensions to draw, ``0 .. H/2 - 1`` (pair 0 turns fastest, one
            radian per position).
        positions: 1 to 8 positions ``>= 0`` for the first panel.
        distance_pairs: 1 to 3 ``(i, j)``: a query at ``i`` and a key at ``j``, a panel each.
        axes: ``1 + len(distance_pairs)`` axes to draw on; by default a new
            :data:`ROTARY_FIGSIZE` figure.

    Returns:
        The figure. Each arrow is an :class:`~matplotlib.text.Annotation` whose ``xy`` is the
        turned vector's tip, labelled ``"query at t"`` (``"query unturned"`` for a reference
        drawn when ``positions`` leaves out 0) or ``"key at j"``.

    Raises:
        TypeError: vectors that are not real numbers, or positions that are not integers.
        TypeError, ValueError: ``base`` not a finite number > 1, ``pair`` not in
            ``[0, H/2 - 1]``, an ``i`` or ``j`` not an integer ``>= 0``.
        ValueError: vectors that are not ``(H,)`` of one even length, hold a NaN or inf, or are
            zero on the pair; positions not 1 to 8 integers ``>= 0``; ``distance_pairs`` not 1
            to 3 pairs; ``axes`` of the wrong number.
    """
    parts = _rotary_rotation(query, key, base, pair, positions, distance_pairs)
    n_pairs = len(parts.distance_pairs)
    width, height = ROTARY_FIGSIZE
    fig, panels = figure_and_panels(1 + n_pairs, (width / (1 + n_pairs), height), axes=axes)
    q_norm, k_norm = float(np.linalg.norm(parts.query)), float(np.linalg.norm(parts.key))
    reach = 1.65 * max(q_norm, k_norm)
    blue, red = PALETTE["blue"], PALETTE["vermillion"]

    turning = panels[0]
    _plane(turning, reach)
    turning.add_patch(Circle((0.0, 0.0), q_norm, fill=False, color="#bbbbbb", lw=0.8, ls="--"))
    if 0 not in parts.positions:  # the unturned query, for the angles to start from
        _arrow(turning, parts.query, "#999999", "query unturned", ":")
    labelled = _spread_out(parts.positions, parts.theta)
    for t, tip in zip(parts.positions, parts.turned, strict=True):
        _arrow(turning, tip, blue, f"query at {t}")
        if t in labelled:
            _tip_label(turning, tip, f"t = {t}", blue)
    start = _degrees(parts.query)
    turns = [t for t in labelled if t > 0]
    for rank, t in enumerate(turns):
        radius = q_norm * (0.25 + 0.45 * rank / max(len(turns) - 1, 1))
        end = start + np.degrees(t * parts.theta)
        # the label sits past the arrow before it, where no arrow is
        label_at = start + np.degrees((t - 0.5) * parts.theta)
        _angle_arc(turning, start, end, radius, "θ" if t == 1 else f"{t}θ", at=label_at)
    turning.set_title(
        f"query turned by t·θ\nθ = {np.degrees(parts.theta):.3g}° a position",
        fontsize=DIAGRAM_FONTSIZE,
    )
    turning.set_xlabel(f"dimension {2 * parts.pair}", fontsize=DIAGRAM_FONTSIZE)
    turning.set_ylabel(f"dimension {2 * parts.pair + 1}", fontsize=DIAGRAM_FONTSIZE)

    angles, dots = parts.angles(), parts.dots()
    for n, (ax, (i, j)) in enumerate(zip(panels[1:], parts.distance_pairs, strict=True)):
        q_turned, k_turned = parts.queries[n], parts.keys[n]
        _plane(ax, reach)
        _arrow(ax, k_turned, red, f"key at {j}")
        _arrow(ax, q_turned, blue, f"query at {i}")
        _tip_label(ax, k_turned, f"k at {j}", _RED_TEXT)
        _tip_label(ax, q_turned, f"q at {i}", blue)
        k_dir = _degrees(k_turned)
        _angle_arc(ax, k_dir, k_dir + angles[n], 0.4 * min(q_norm, k_norm), "")
        distance = f"i {_MINUS} j = {i - j}: angle {abs(angles[n]):.0f}°"
        ax.set_title(f"i = {i}, j = {j}\n{distance}", fontsize=DIAGRAM_FONTSIZE)
        ax.set_xlabel(f"{parts.product} = {dots[n]:.2f}", fontsize=DIAGRAM_FONTSIZE)
    return fig


def describe_rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    *,
    base: float = 10000.0,
    pair: int = 0,
    positions: Sequence[int] = (0, 1, 2, 3),
    distance_pairs: Sequence[tuple[int, int]] = ((2, 0), (7, 5)),
) -> str:
    """:func:`plot_rotary_rotation` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_rotary_rotation`.
    """
    parts = _rotary_rotation(query, key, base, pair, positions, distance_pairs)
    angles, dots = np.abs(parts.angles()), parts.dots()
    scenes = [
        f"at (i, j) = ({i}, {j}), distance {i - j}, the angle is {a:.0f}° and {parts.product} "
        f"is {d:.2f}"
        for (i, j), a, d in zip(parts.distance_pairs, angles, dots, strict=True)
    ]
    text = (
        f"Arrows in the plane of one pair of coordinates (dimensions {2 * parts.pair} and "
        f"{2 * parts.pair + 1}) of a head of width {parts.head_dim}. First panel: the query's "
        f"pair at positions {_list(parts.positions)}; each position turns it by θ = "
        f"{parts.theta:.3g} rad ({np.degrees(parts.theta):.3g}°) more, so at position t it "
        "has turned t·θ, drawn as arcs. Then a panel for each query turned to its position i "
        "(blue) and key turned to its position j (red), the angle between them marked: "
        f"{'; '.join(scenes)}."
    )
    if len({i - j for i, j in parts.distance_pairs}) < len(parts.distance_pairs):
        text += (
            " The same distance gives the same angle and the same product wherever the pair "
            f"sits: query and key are turned together, so only i {_MINUS} j counts."
        )
    return text


# 3. ALiBi: a bias on the scores that falls with distance, at a slope per head.

BIAS_CMAP = "Blues_r"
"""Colour map of a bias that is never positive: white at 0, darker blue the more negative (the
negative half of :data:`DIVERGING_CMAP`, spread over the whole scale)."""


def _alibi_bias(n_heads: int, seq_len: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(slopes (n_heads,), biases (n_heads, T, T))`` of :func:`plot_alibi_bias`, checked."""
    n_heads = check_int("n_heads", n_heads)
    seq_len = check_int("seq_len", seq_len)
    if n_heads > 8 or seq_len > DIAGRAM_MAX_ROWS:
        raise ValueError(
            f"a diagram draws at most 8 heads of {DIAGRAM_MAX_ROWS} positions, so that every "
            f"label stays legible, got n_heads {n_heads} and seq_len {seq_len}"
        )
    slopes = alibi_slopes(n_heads)
    return slopes, np.stack([linear_bias(seq_len, float(m)) for m in slopes])


def _slope_label(slope: float) -> str:
    """``1/4`` for a power of two's reciprocal (ALiBi's slopes mostly are), else 3 digits."""
    power = -math.log2(slope)
    return f"1/{2 ** round(power)}" if power == round(power) and power >= 0 else f"{slope:.3g}"


def plot_alibi_bias(n_heads: int = 4, seq_len: int = 8, *, ax: Axes | None = None) -> Figure:
    """ALiBi's bias ``-m_h (i - j)`` on the attention scores, a heat map per head.

    One panel per head ``h`` (four a row), query ``i`` down and key ``j`` across, of
    :func:`~gptembed.positions.linear_bias` at that head's slope ``m_h`` of
    :func:`~gptembed.positions.alibi_slopes`: 0 on the diagonal, falling by ``m_h`` per
    position back. Future keys (``j > i``) are grey, as the causal mask hides them. One colour
    scale, :data:`BIAS_CMAP` from the steepest head's lowest bias to 0, for every head.
    :func:`describe_alibi_bias` says the same in words.

    >>> fig = plot_alibi_bias(4, 6)
    >>> [image.get_label() for image in fig.axes[0].get_images()]
    ['head 1: m = 1/4', 'head 2: m = 1/16', 'head 3: m = 1/64', 'head 4: m = 1/256']

    Args:
        n_heads: heads, 1 to 8.
        seq_len: ``T``, positions, 1 to :data:`DIAGRAM_MAX_ROWS`.
        ax: axes to draw on (a blank canvas); by default a new figure at most
            :data:`DIAGRAM_WIDTH` wide, as tall as the rows of panels need.

    Returns:
        The figure. Each head's image, labelled with its title (``"head 1: m = 1/4"``), is a
        masked array whose data is ``linear_bias(seq_len, m_h)``, the future keys masked.

    Raises:
        TypeError, ValueError: ``n_heads`` or ``seq_len`` not an integer >= 1, or more than a
            diagram draws.
    """
    slopes, biases = _alibi_bias(n_heads, seq_len)
    n_heads, seq_len = biases.shape[:2]
    ncols, nrows = min(n_heads, 4), -(-n_heads // 4)
    left, gap, right, title_h, below = 0.62, 0.32, 1.05, 0.32, 0.5
    cell = min(0.3, (DIAGRAM_WIDTH - left - right - (ncols - 1) * gap) / (ncols * seq_len))
    grid = seq_len * cell
    pitch_y = title_h + grid + below
    size = (left + ncols * grid + (ncols - 1) * gap + right, nrows * pitch_y + 0.05)
    fig, ax = _canvas(size, ax)
    future = np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
    limit = float(slopes.max()) * max(seq_len - 1, 1)  # the steepest head's farthest key
    norm = Normalize(-limit, 0.0)
    step = 1 if cell >= 0.13 else 2  # a tick label per position while they fit
    ticks = range(0, seq_len, step)
    for h, (bias, slope) in enumerate(zip(biases, slopes, strict=True)):
        row, col = divmod(h, ncols)
        x, y = left + col * (grid + gap), row * pitch_y + title_h
        ax.add_patch(Rectangle((x, y), grid, grid, color=_GREY, lw=0, zorder=-1))  # the future
        title = f"head {h + 1}: m = {_slope_label(float(slope))}"
        _cells(
            ax, np.ma.masked_where(future, bias), x, y, (cell, cell), cmap=BIAS_CMAP, norm=norm,
            label=title,
        )  # fmt: skip
        _text(ax, x + grid / 2, y - 0.08, title, ha="center", va="bottom")
        for t in ticks:
            _text(ax, x + (t + 0.5) * cell, y + grid + 0.05, str(t), ha="center", va="top")
            if col == 0:
                _text(ax, x - 0.05, y + (t + 0.5) * cell, str(t), ha="right", va="center")
        _text(ax, x + grid / 2, y + grid + 0.25, "key j", ha="center", va="top")
        if col == 0:
            _text(ax, 0.22, y + grid / 2, "query i", rotation=90, ha="center", va="center")
    bar = ax.inset_axes(  # beside the first row, as tall as its panels (axes fractions)
        (1 - (right - 0.2) / size[0], 1 - (title_h + grid) / size[1], 0.15 / size[0],
         grid / size[1])
    )  # fmt: skip
    colorbar = fig.colorbar(ScalarMappable(norm, BIAS_CMAP), cax=bar)
    colorbar.set_label(f"bias {_MINUS}m (i {_MINUS} j)", fontsize=DIAGRAM_FONTSIZE)
    bar.tick_params(labelsize=DIAGRAM_FONTSIZE)
    return fig


def describe_alibi_bias(n_heads: int = 4, seq_len: int = 8) -> str:
    """:func:`plot_alibi_bias` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_alibi_bias`.
    """
    slopes, biases = _alibi_bias(n_heads, seq_len)
    n_heads, seq_len = biases.shape[:2]
    far = seq_len - 1
    heads = "one head" if n_heads == 1 else f"one per head, {n_heads} heads"
    text = (
        f"Heat maps of ALiBi's bias on the attention scores ({heads}) for {seq_len} positions: "
        "query i "
        "down, key j across, future keys (j after i) greyed out. The bias is minus the slope m "
        "times the distance i minus j: 0 on the diagonal, more negative (darker blue) the "
        f"further back the key. The slope{'s are' if n_heads > 1 else ' is'} "
        f"{_list([_slope_label(float(m)) for m in slopes])}"
    )
    if far == 0:
        return text + "; with one position there is no distance, and the bias is 0."
    steep, shallow = int(np.argmax(slopes)), int(np.argmin(slopes))
    text += f", so the farthest key, {far} back, gets {_MINUS}{slopes[steep] * far:.3g} from "
    if n_heads == 1:
        return text + "the head."
    return text + (
        f"the steepest head (head {steep + 1}) but only {_MINUS}{slopes[shallow] * far:.3g} "
        f"from the shallowest (head {shallow + 1}), which stays nearly white and can still look "
        "far back."
    )


# 4. A KV cache over decoding steps: the keys kept, and the position each new token gets.

KV_EMPTY, KV_CACHED, KV_NEW, KV_DROPPED = 0, 1, 2, 3
"""The states of a cell of :func:`plot_kv_cache` (a step, a position): no token there yet, a
key and value in the cache, the step's new token, a key the window dropped."""

_KV_COLOURS = ("#ffffff", PALETTE["sky"], PALETTE["orange"], _GREY)  # by state


@dataclass(frozen=True)
class _KVCache:
    """What :func:`plot_kv_cache` draws: a state per (step, position), and per step the
    position of its first new token and the keys the cache holds after it."""

    prompt_len: int
    window: int | None
    states: NDArray[np.intp]  # (steps + 1, prompt_len + steps)
    start_pos: list[int]
    cached: list[int]


def _kv_cache(n_steps: int, prompt_len: int, window: int | None) -> _KVCache:
    """:func:`plot_kv_cache`'s arguments, checked, and what it draws.

    Step 0 embeds the prompt at ``start_pos = 0``; step ``s`` embeds one token at ``start_pos``
    = the tokens seen (:attr:`~gptembed.attention_model.KVCache.length`). A window keeps the
    last ``window`` keys, the new one included (as :func:`gptembed.gpt.forward`'s ``window``).
    """
    n_steps = check_int("n_steps", n_steps)
    prompt_len = check_int("prompt_len", prompt_len)
    n_pos = prompt_len + n_steps
    if n_steps + 1 > DIAGRAM_MAX_ROWS or n_pos > DIAGRAM_MAX_ROWS:
        raise ValueError(
            f"a diagram draws at most {DIAGRAM_MAX_ROWS} positions, so that every label stays "
            f"legible, got prompt_len {prompt_len} + n_steps {n_steps} = {n_pos}"
        )
    if window is not None:
        window = check_int("window", window)
        if window < prompt_len:
            raise ValueError(
                f"window must hold the prompt, >= prompt_len {prompt_len}, got {window}: the "
                "diagram starts from a cache of the whole prompt"
            )
    states = np.full((n_steps + 1, n_pos), KV_EMPTY, dtype=np.intp)
    start_pos, cached = [], []
    for step in range(n_steps + 1):
        start = 0 if step == 0 else prompt_len + step - 1  # the tokens seen so far
        end = prompt_len if step == 0 else start + 1  # one past the newest position
        first_kept = 0 if window is None else max(0, end - window)
        states[step, :first_kept] = KV_DROPPED
        states[step, first_kept:start] = KV_CACHED
        states[step, start:end] = KV_NEW
        start_pos.append(start)
        cached.append(end - first_kept)
    return _KVCache(prompt_len, window, states, start_pos, cached)


def plot_kv_cache(
    n_steps: int = 5, *, prompt_len: int = 3, window: int | None = None, ax: Axes | None = None
) -> Figure:
    """A KV cache over decoding steps: a row per step, a column per position.

    Step 0 (the prompt) embeds ``prompt_len`` tokens at positions ``0 ..``; each later step
    embeds one new token at ``start_pos``, the number of tokens already seen, which is the
    cache's length (:attr:`~gptembed.attention_model.KVCache.length`), and adds its key and
    value: the cache grows by one a step. The new tokens' cells hold their position ids. With a
    ``window`` the cache keeps only the last ``window`` keys, the new one included, as
    :func:`gptembed.gpt.forward`'s ``window`` does: the oldest is dropped each step while the
    position ids go on counting. :func:`describe_kv_cache` says the same in words.

    >>> fig = plot_kv_cache(3, prompt_len=2, window=3)
    >>> fig.axes[0].get_images()[0].get_array().tolist()  # 0 empty, 1 cached, 2 new, 3 dropped
    [[2, 2, 0, 0, 0], [1, 1, 2, 0, 0], [3, 1, 1, 2, 0], [3, 3, 1, 1, 2]]

    Args:
        n_steps: decoding steps after the prompt, each one new token.
        prompt_len: tokens of the prompt, embedded at step 0; with ``n_steps`` at most
            :data:`DIAGRAM_MAX_ROWS` positions in all.
        window: if given, the most keys the cache holds (at least ``prompt_len``).
        ax: axes to draw on (a blank canvas); by default a new figure
            :data:`DIAGRAM_WIDTH` wide, as tall as the steps need.

    Returns:
        The figure. Its image (label ``"cache"``) holds a state per step and position:
        :data:`KV_EMPTY`, :data:`KV_CACHED`, :data:`KV_NEW` or :data:`KV_DROPPED`.

    Raises:
        TypeError, ValueError: a size that is not an integer >= 1, more positions than a
            diagram draws, or a window smaller than the prompt.
    """
    kv = _kv_cache(n_steps, prompt_len, window)
    n_rows, n_pos = kv.states.shape
    label_w, margin, right_w = 0.75, 0.12, 2.05
    cell = min(0.42, (DIAGRAM_WIDTH - 2 * margin - label_w - right_w) / n_pos)
    row_h = min(0.36, cell + 0.06)
    x0, y0 = margin + label_w, 0.5
    y_legend = y0 + n_rows * row_h + 0.1
    size = (x0 + n_pos * cell + right_w + margin, y_legend + 0.35)
    fig, ax = _canvas(size, ax)
    cmap = ListedColormap(list(_KV_COLOURS))
    _cells(
        ax, kv.states, x0, y0, (cell, row_h), cmap=cmap, norm=Normalize(-0.5, 3.5), label="cache"
    )
    ax.hlines(y0 + row_h * np.arange(1, n_rows), x0, x0 + n_pos * cell, colors="#bbbbbb", lw=0.6)
    _text(ax, x0 - 0.06, y0 - 0.12, "position", ha="right", va="center", color=_DARK_GREY)
    for p in range(n_pos):
        _text(ax, x0 + (p + 0.5) * cell, y0 - 0.12, str(p), ha="center", va="center")
    x_start, x_cached = x0 + n_pos * cell + 0.55, x0 + n_pos * cell + 1.5
    _text(ax, x_start, y0 - 0.12, "start_pos", ha="center", va="center", color=_DARK_GREY)
    _text(ax, x_cached, y0 - 0.12, "keys in cache", ha="center", va="center", color=_DARK_GREY)
    for step in range(n_rows):
        y = y0 + (step + 0.5) * row_h
        _text(ax, x0 - 0.06, y, "prompt" if step == 0 else f"step {step}", ha="right", va="center")
        for new in np.flatnonzero(kv.states[step] == KV_NEW):
            x = x0 + (new + 0.5) * cell
            _text(ax, x, y, str(new), ha="center", va="center", fontweight="bold")
        _text(ax, x_start, y, str(kv.start_pos[step]), ha="center", va="center")
        _text(ax, x_cached, y, str(kv.cached[step]), ha="center", va="center")
    states = [KV_CACHED, KV_NEW] + ([KV_DROPPED] if window is not None else [])
    names = {
        KV_CACHED: "key and value in the cache",
        KV_NEW: "new token, at its position id",
        KV_DROPPED: "dropped by the window",
    }
    handles = [Patch(facecolor=_KV_COLOURS[s], edgecolor=_FRAME, label=names[s]) for s in states]
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(size[0] / 2, y_legend),
        bbox_transform=ax.transData, ncols=len(handles), fontsize=DIAGRAM_FONTSIZE,
        frameon=False, handlelength=1.2, columnspacing=1.2, borderaxespad=0.0,
    )  # fmt: skip
    return fig


def describe_kv_cache(n_steps: int = 5, *, prompt_len: int = 3, window: int | None = None) -> str:
    """:func:`plot_kv_cache` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_kv_cache(2, prompt_len=3))  # doctest: +NORMALIZE_WHITESPACE
    A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the prompt's 3
    tokens at positions 0 to 2 and caches their keys and values. At each of the next 2 steps one
    new token is embedded at position start_pos, the number of tokens already seen (3 and 4),
    and its key and value join the cache, which grows by one key a step, to 5.

    Raises:
        TypeError, ValueError: as :func:`plot_kv_cache`.
    """
    kv = _kv_cache(n_steps, prompt_len, window)
    steps = kv.states.shape[0] - 1
    text = (
        "A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the "
        f"prompt's {_plural(kv.prompt_len, 'token')} at position"
        + (f"s 0 to {kv.prompt_len - 1}" if kv.prompt_len > 1 else " 0")
        + (
            " and caches its key and value. At "
            if kv.prompt_len == 1
            else " and caches their keys and values. At "
        )
        + ("the next step" if steps == 1 else f"each of the next {steps} steps")
        + " one new token is embedded at position start_pos, the number of tokens already seen "
        f"({_list(kv.start_pos[1:])}), and its key and value join the cache"
    )
    dropping = [step for step in range(1, steps + 1) if kv.states[step, 0] == KV_DROPPED]
    if not dropping:
        return text + f", which grows by one key a step, to {kv.cached[-1]}."
    return text + (
        f". A window of {kv.window} keeps only the last {kv.window} keys, the new one included: "
        f"from step {dropping[0]} on, the oldest key is dropped (grey) at each step, so the "
        f"cache stays at {kv.window} keys while start_pos goes on counting, to "
        f"{kv.start_pos[-1]}."
    )


def _plural(count: int, noun: str) -> str:
    """``1 token``, ``3 tokens``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


# 5. A padded batch: its ids, its attention mask, and the position ids the mask gives.


@dataclass(frozen=True)
class _PaddedBatch:
    """:func:`plot_padded_batch`'s inputs, checked, and
    :func:`~gptembed.positions.position_ids_from_mask` of the mask."""

    ids: NDArray[np.integer]  # (B, T)
    real: NDArray[np.bool_]  # (B, T): the mask, True for a real token
    positions: NDArray[np.intp]  # (B, T)


def _padded_batch(token_ids: ArrayLike, attention_mask: ArrayLike) -> _PaddedBatch:
    """The inputs of :func:`plot_padded_batch`, checked, and their position ids."""
    ids = check_integer_array("token_ids", token_ids, None)
    if ids.ndim != 2 or 0 in ids.shape:
        raise ValueError(f"token_ids must have shape (B, T) with B, T >= 1, got {ids.shape}")
    if ids.min() < 0:
        raise ValueError(f"token ids must be >= 0, got {ids.min()}")
    positions = position_ids_from_mask(attention_mask)  # refuses a mask that is not 0/1, 2-D
    if positions.shape != ids.shape:
        raise ValueError(
            f"attention_mask must have the ids' shape {ids.shape}, got {positions.shape}"
        )
    if ids.shape[0] > 8 or ids.shape[1] > DIAGRAM_MAX_COLUMNS:
        raise ValueError(
            f"a diagram draws at most 8 sequences of {DIAGRAM_MAX_COLUMNS} slots, so that every "
            f"number stays legible, got token_ids of shape {ids.shape}"
        )
    return _PaddedBatch(ids, np.asarray(attention_mask).astype(bool), positions)


def plot_padded_batch(
    token_ids: ArrayLike, attention_mask: ArrayLike, *, ax: Axes | None = None
) -> Figure:
    """A padded batch as three aligned grids, the numbers in their cells: ids, mask, positions.

    Top to bottom, a row per sequence and a column per slot: the token ids, padding greyed;
    the attention mask (1 a real token, 0 padding); and the position ids of
    :func:`~gptembed.positions.position_ids_from_mask`, which count from 0 at each sequence's
    first real token (so a left-padded sequence reads the rows it reads unpadded) and give
    padding :data:`~gptembed.positions.PAD_POSITION`. :func:`describe_padded_batch` says the
    same in words.

    >>> fig = plot_padded_batch([[9, 9, 5, 7], [4, 6, 5, 7]], [[0, 0, 1, 1], [1, 1, 1, 1]])
    >>> fig.axes[0].get_images()[2].get_array().data.tolist()  # the position ids
    [[0, 0, 0, 1], [0, 1, 2, 3]]

    Args:
        token_ids: ``(B, T)`` ids ``>= 0``, at most 8 sequences of
            :data:`DIAGRAM_MAX_COLUMNS` slots.
        attention_mask: ``(B, T)`` of 0/1 integers or bools, 1 for a real token.
        ax: axes to draw on (a blank canvas); by default a new figure :data:`DIAGRAM_WIDTH`
            wide at most, as tall as the batch needs.

    Returns:
        The figure. Its three images, labelled ``"token ids"``, ``"attention mask"`` and
        ``"position ids"``, are masked arrays of those numbers, padding masked.

    Raises:
        TypeError: ids that are not integers, or a mask that is not integers or bools.
        ValueError: ids that are not ``(B, T)`` or are negative, a mask that is not 0/1 or not
            of the ids' shape, or a batch larger than a diagram draws.
    """
    batch = _padded_batch(token_ids, attention_mask)
    n_seq, n_slots = batch.ids.shape
    digits = max(len(str(int(batch.ids.max()))), 2)
    label_w, margin = _text_width("sequence 0") + 0.1, 0.12
    cell_w = min(0.55, (DIAGRAM_WIDTH - 2 * margin - label_w) / n_slots)
    cell_w = max(cell_w, _text_width("0" * digits) + 0.06)
    cell_h, title_h = 0.3, 0.62
    x0 = margin + label_w
    grids = [
        ("token ids", batch.ids, "padding greyed", "#ffffff"),
        ("attention mask", batch.real.astype(np.intp), "1: a real token, 0: padding", "#d5ede4"),
        (
            "position ids",
            batch.positions,
            f"position_ids_from_mask(mask); padding at PAD_POSITION = {PAD_POSITION}",
            "#fbe6bd",
        ),
    ]
    widest = max(n_slots * cell_w, *(_text_width(note) for _, _, note, _ in grids))
    size = (x0 + widest + margin, 3 * (title_h + n_seq * cell_h) + 0.15)
    fig, ax = _canvas(size, ax)
    padding = ~batch.real
    top = 0.0
    for name, values, note, tint in grids:
        top += title_h
        _text(ax, x0, top - 0.3, name, va="bottom", fontsize=10)
        _text(ax, x0, top - 0.28, note, va="top", color=_DARK_GREY)
        width, height = n_slots * cell_w, n_seq * cell_h
        under = Rectangle((x0, top), width, height, color=_GREY, lw=0, zorder=-1)
        ax.add_patch(under)  # shows through the padding, masked in the image
        _cells(
            ax, np.ma.masked_where(padding, values), x0, top, (cell_w, cell_h),
            cmap=ListedColormap([tint]), norm=Normalize(0, 1), label=name,
        )  # fmt: skip
        for b in range(n_seq):
            y = top + (b + 0.5) * cell_h
            _text(ax, x0 - 0.06, y, f"sequence {b}", ha="right", va="center")
            for t in range(n_slots):
                _text(
                    ax, x0 + (t + 0.5) * cell_w, y, str(int(values[b, t])), ha="center",
                    va="center", color=_DARK_GREY if padding[b, t] else "black",
                )  # fmt: skip
        top += height
    return fig


def describe_padded_batch(token_ids: ArrayLike, attention_mask: ArrayLike) -> str:
    """:func:`plot_padded_batch` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_padded_batch([[9, 9, 5, 7], [4, 6, 5, 7]], [[0, 0, 1, 1], [1, 1, 1, 1]]))
    ... # doctest: +NORMALIZE_WHITESPACE
    Three aligned grids of numbers for a batch of 2 sequences of 4 slots, a row per sequence:
    the token ids, with padding greyed; the attention mask, 1 for a real token and 0 for
    padding; and the position ids from position_ids_from_mask, which count 0, 1, 2 and on from
    each sequence's first real token, so a padded sequence reads the same positions as it would
    unpadded, and give every padded slot position 0 (PAD_POSITION), which the mask hides.
    Sequence 0 is left-padded with 2 slots: its positions read 0, 0, 0, 1. Sequence 1 has no
    padding: its positions read 0, 1, 2, 3.

    Raises:
        TypeError, ValueError: as :func:`plot_padded_batch`.
    """
    batch = _padded_batch(token_ids, attention_mask)
    n_seq, n_slots = batch.ids.shape
    text = (
        f"Three aligned grids of numbers for a batch of {_plural(n_seq, 'sequence')} of "
        f"{_plural(n_slots, 'slot')}, a row per sequence: the token ids, with padding greyed; "
        "the attention mask, 1 for a real token and 0 for padding; and the position ids from "
        "position_ids_from_mask, which count 0, 1, 2 and on from each sequence's first real "
        "token, so a padded sequence reads the same positions as it would unpadded, and give "
        f"every padded slot position {PAD_POSITION} (PAD_POSITION), which the mask hides."
    )
    for b, (real, positions) in enumerate(zip(batch.real, batch.positions, strict=True)):
        reads = ", ".join(str(int(p)) for p in positions)
        pads = int((~real).sum())
        if pads == 0:
            text += f" Sequence {b} has no padding: its positions read {reads}."
            continue
        if pads == n_slots:
            text += f" Sequence {b} is all padding: its positions read {reads}."
            continue
        n_real = n_slots - pads
        side = (
            "left-padded" if real[pads:].all() else "right-padded" if real[:n_real].all()
            else "padded"
        )  # fmt: skip
        text += f" Sequence {b} is {side} with {_plural(pads, 'slot')}: its positions read {reads}."
    return text
