"""Every figure of the book, drawn with matplotlib (the only module that imports it).

One idiom: every ``plot_*`` function takes ``ax=None`` (or ``axes=None``) and returns the
:class:`~matplotlib.figure.Figure` it drew on, so a chapter shows a figure by making the call the
last expression of its cell. Figures are made with ``Figure(...)`` and ``fig.subplots(...)``, not
pyplot: pyplot's inline backend would show every figure it made at the end of the cell too, so a
returned figure would appear twice. Sizes are the ``*_FIGSIZE`` constants below; backgrounds are
opaque white (legible in the book's dark theme too); colours are the Okabe-Ito colour-blind-safe
palette; nothing here calls ``show()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

try:
    from matplotlib.axes import Axes
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    from matplotlib.patheffects import withStroke
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "gptembed.plotting draws with matplotlib, which is not installed: install the plot "
        'extra with pip install "gptembed[plot]"'
    ) from err

from ._checks import check_int
from .attention_cost import attention_scores_bytes
from .models import (
    MODELS,
    ModelConfig,
    config_embedding_counts,
    model_label,
    transformer_parameter_count,
)
from .probes import PrincipalComponents, cosine_similarity_matrix

FIGSIZE = (7.0, 4.0)
"""Width and height in inches of a one-panel figure (:func:`plot_loss_curves`)."""

ADDITION_FIGSIZE = (9.0, 3.4)
"""Width and height in inches of :func:`plot_embedding_addition`'s three panels."""

ASYMMETRY_FIGSIZE = (7.0, 5.5)
"""Width and height in inches of :func:`plot_parameter_asymmetry` (a bar group per model)."""

MEMORY_FIGSIZE = (7.0, 4.5)
"""Width and height in inches of :func:`plot_attention_memory`."""

SIMILARITY_PANEL_SIZE = (4.0, 4.2)
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

DIVERGING_CMAP = "RdBu_r"
"""Colour map for signed values (embeddings): blue negative, red positive, white zero."""

BOUNDARY_STYLE: dict[str, Any] = {
    "color": "#333333",
    "lw": 0.8,
    "path_effects": [withStroke(linewidth=2.0, foreground="white")],
}
"""Record boundaries on a :data:`DIVERGING_CMAP` heatmap: a thin dark-grey line in a white halo,
so it stands out on white (zero), deep red and deep blue alike."""


def _show_returned_figures_in_ipython() -> None:
    """Let IPython (Jupyter) show a :class:`Figure` that is a cell's value, as a PNG.

    pyplot's inline backend registers this display when pyplot makes its first figure; figures
    here never go through pyplot, so without it a cell would show ``<Figure size ...>`` only.
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"}, bbox_inches="tight")


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


def root_figure(ax: Axes) -> Figure:
    """The top-level figure ``ax`` is drawn on (through any subfigure)."""
    return cast(Figure, ax.figure.figure)  # a SubFigure's .figure is its root; a Figure's, itself


def figure_and_axes(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a new one-panel :func:`new_figure` of ``figsize``."""
    if ax is None:
        fig, new_ax = new_figure(figsize)
        return fig, cast(Axes, new_ax)
    return root_figure(ax), ax


def figure_and_panels(
    axes: Sequence[Axes] | None, n_panels: int, figsize: tuple[float, float]
) -> tuple[Figure, list[Axes]]:
    """``axes`` (exactly ``n_panels`` of them) and their figure, or a new one-row figure.

    Raises:
        ValueError: ``axes`` does not hold ``n_panels`` axes.
    """
    if axes is None:
        fig, grid = new_figure(figsize, ncols=n_panels)
        return fig, list(np.atleast_1d(grid))
    panels = list(axes)
    if len(panels) != n_panels:
        raise ValueError(f"axes must hold {n_panels} axes, got {len(panels)}")
    return root_figure(panels[0]), panels


def plot_embedding_addition(
    token_rows: ArrayLike,
    position_rows: ArrayLike,
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
        axes: three axes to draw on; by default a new :data:`ADDITION_FIGSIZE` figure.

    Returns:
        The figure. The colour scale is :data:`DIVERGING_CMAP`, centred on 0 and shared by the
        three panels (one colour bar).

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
    fig, panels = figure_and_panels(axes, 3, ADDITION_FIGSIZE)
    total = tok + pos
    limit = float(max(np.abs(tok).max(), np.abs(pos).max(), np.abs(total).max())) or 1.0
    norm = Normalize(vmin=-limit, vmax=limit)
    titles = ("token rows $W_{tok}[id_t]$", "+ position rows $W_{pos}[t]$", "= sum $x_t$")
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
    models: Mapping[str, ModelConfig] = MODELS, ax: Axes | None = None
) -> Figure:
    """Horizontal bars, log scale: whole model, token table and position table of each model.

    The first model is drawn at the top. Next to each position bar, its share of the whole model
    (:func:`~gptembed.models.transformer_parameter_count`).

    Args:
        models: name -> :class:`~gptembed.models.ModelConfig`, in the order to draw.
        ax: axes to draw on; by default a new :data:`ASYMMETRY_FIGSIZE` figure.

    Raises:
        ValueError: ``models`` is empty.
    """
    if not models:
        raise ValueError("models must name at least one model, got none")
    fig, ax = figure_and_axes(ax, ASYMMETRY_FIGSIZE)
    names = list(models)
    rows = np.arange(len(names))[::-1]  # first model at the top
    height = 0.27
    whole = [transformer_parameter_count(models[n]) for n in names]
    counts = [config_embedding_counts(models[n]) for n in names]
    bars = [
        ("whole model", whole, PALETTE["sky"], height),
        ("token table (vocab x d)", [c.token for c in counts], PALETTE["blue"], 0.0),
        (
            "position table (n_ctx x d)",
            [c.position for c in counts],
            PALETTE["vermillion"],
            -height,
        ),
    ]
    for label, values, colour, offset in bars:
        ax.barh(rows + offset, values, height=height, color=colour, label=label)
    for row, c, total in zip(rows, counts, whole, strict=True):
        ax.text(
            c.position * 1.25,
            row - height,
            f"{c.position / total:.3%} of model",
            va="center",
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_xlim(1e5, 1e12)
    ax.set_yticks(rows, [model_label(n) for n in names])
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("parameters (log scale)")
    ax.set_title("Token table, position table and whole model")
    ax.grid(axis="x", which="major", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper right", fontsize=8)
    return fig


_LENGTH_TICKS = {2**k: (f"{2 ** (k - 10)}K" if k >= 10 else str(2**k)) for k in range(4, 21)}


def plot_attention_memory(
    seq_lens: Sequence[int],
    n_heads: int,
    n_layers: int,
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
    fig, ax = figure_and_axes(ax, MEMORY_FIGSIZE)
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
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [n for n in _LENGTH_TICKS if lengths[0] <= n <= lengths[-1]]
    ax.set_xticks(ticks, [_LENGTH_TICKS[n] for n in ticks])
    ax.minorticks_off()
    ax.set_xlabel("sequence length n (tokens, log scale)")
    ax.set_ylabel("score memory (GiB, log scale)")
    precision = {4: "fp32", 2: "fp16"}.get(bytes_per_element, f"{bytes_per_element}-byte")
    ax.set_title(f"Attention scores grow as n\u00b2: \u00d74 per doubling of n ({precision})")
    ax.grid(which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def plot_loss_curves(
    curves: Mapping[str, ArrayLike],
    floors: Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Training loss against step, one line per run, with each run's floor as a dashed line.

    Args:
        curves: label -> ``(steps,)`` losses in nats.
        floors: label -> the lowest loss that run's model can reach (same labels as ``curves``).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.
    """
    fig, ax = figure_and_axes(ax, FIGSIZE)
    colours = [PALETTE["blue"], PALETTE["vermillion"], PALETTE["green"], PALETTE["orange"]]
    styles = ["-", "-.", ":", (0, (6, 2, 1, 2))]  # told apart by dash as well as colour
    for (label, losses), colour, style in zip(curves.items(), colours, styles, strict=False):
        values = np.asarray(losses, dtype=float)
        steps = np.arange(1, len(values) + 1)
        ax.plot(steps, values, linestyle=style, color=colour, lw=2, label=label)
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
    return fig


def plot_position_similarity(
    tables: Mapping[str, ArrayLike],
    period: int | None = None,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """One heatmap per table of the cosine similarity between every pair of its rows.

    Args:
        tables: title -> ``(L, D)`` position table; one panel each, left to right.
        period: if given, the ticks sit at multiples of ``period`` (the first position of each
            record) and a line in :data:`BOUNDARY_STYLE` marks each record boundary.
        axes: one axes per table to draw on; by default a new figure of one
            :data:`SIMILARITY_PANEL_SIZE` panel per table plus :data:`COLORBAR_WIDTH`.

    Returns:
        The figure, with a shared colour bar from -1 to 1.

    Raises:
        ValueError: no tables, or ``axes`` does not hold one axes per table.
    """
    if not tables:
        raise ValueError("tables must hold at least one table, got none")
    if period is not None:
        period = check_int("period", period)
    width, height = SIMILARITY_PANEL_SIZE
    figsize = (width * len(tables) + COLORBAR_WIDTH, height)
    fig, panels = figure_and_panels(axes, len(tables), figsize)
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


def plot_score_terms(terms: Mapping[str, ArrayLike], axes: Sequence[Axes] | None = None) -> Figure:
    """One ``T x T`` heatmap per score term (query ``i`` down, key ``j`` across), one scale.

    Args:
        terms: title -> ``(T, T)`` scores of one sequence, such as the four of
            :func:`~gptembed.attention_model.score_terms`. Keys a query may not see (``j > i``)
            are drawn grey.
        axes: one axes per term to draw on; by default a new figure, left to right.

    Returns:
        The figure, with one colour bar centred on 0 shared by every panel.

    Raises:
        ValueError: a term is not square, the terms differ in shape, or ``axes`` does not hold
            one axes per term.
    """
    arrays = {title: np.asarray(term, dtype=float) for title, term in terms.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or any(len(s) != 2 or s[0] != s[1] for s in shapes):
        raise ValueError(f"terms must be (T, T) arrays of one shape, got shapes {sorted(shapes)}")
    (length, _) = shapes.pop()
    fig, panels = figure_and_panels(axes, len(arrays), (2.6 * len(arrays) + 1.2, 3.2))
    future = np.triu(np.ones((length, length), dtype=bool), k=1)
    limit = max(float(np.abs(a[~future]).max()) for a in arrays.values()) or 1.0
    norm = Normalize(-limit, limit)
    for ax, (title, array) in zip(panels, arrays.items(), strict=True):
        ax.set_facecolor("#d9d9d9")  # shows through the masked (future) keys
        masked = np.ma.masked_where(future, array)
        ax.imshow(masked, cmap=DIVERGING_CMAP, norm=norm, interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key position j")
    panels[0].set_ylabel("query position i")
    fig.colorbar(ScalarMappable(norm, DIVERGING_CMAP), ax=panels, shrink=0.85, label="score")
    return fig


def plot_similarity_by_lag(
    profiles: Mapping[str, ArrayLike], marks: Sequence[int] = (), ax: Axes | None = None
) -> Figure:
    """Mean cosine similarity of rows ``lag`` apart against the lag, one line per table.

    Args:
        profiles: label -> ``(L - 1,)`` similarities at lags ``1 .. L-1``
            (:func:`~gptembed.probes.similarity_by_lag`).
        marks: lags to mark with a dotted vertical line (for example a task's offset).
        ax: axes to draw on; by default a new fixed-size figure.
    """
    fig, ax = figure_and_axes(ax)
    colours = [PALETTE[c] for c in ("blue", "vermillion", "green", "orange", "purple")]
    markers = ["o", "s", "^", "D", "v"]  # told apart by marker as well as colour
    for (label, profile), colour, marker in zip(profiles.items(), colours, markers, strict=False):
        values = np.asarray(profile, dtype=float)
        lags = np.arange(1, len(values) + 1)
        ax.plot(lags, values, marker=marker, ms=4, color=colour, lw=1.5, label=label)
    for lag in marks:
        ax.axvline(lag, color=PALETTE["black"], ls=":", lw=1.0)
    ax.axhline(0.0, color=PALETTE["black"], lw=0.6)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("lag: distance between the two rows (positions)")
    ax.set_ylabel("mean cosine similarity")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def plot_loss_by(
    x: ArrayLike,
    curves: Mapping[str, ArrayLike],
    xlabel: str,
    marks: Mapping[str, float] | None = None,
    ylabel: str = "cross-entropy (nats)",
    ax: Axes | None = None,
) -> Figure:
    """Measured loss (nats) against a setting ``x``, one line with markers per model.

    Args:
        x: ``(n,)`` the settings (a start position, a generation step, ...).
        curves: label -> ``(n,)`` losses.
        xlabel: what ``x`` is.
        ylabel: what the losses are (for example an excess over the best possible).
        marks: label -> an ``x`` to mark with a dashed vertical line (for example the window).
        ax: axes to draw on; by default a new fixed-size figure.
    """
    fig, ax = figure_and_axes(ax)
    xs = np.asarray(x, dtype=float)
    colours = [PALETTE[c] for c in ("blue", "vermillion", "green", "orange")]
    styles = ["-o", "-s", "-^", "-D"]
    for (label, losses), colour, style in zip(curves.items(), colours, styles, strict=False):
        ax.plot(xs, np.asarray(losses, dtype=float), style, ms=4, color=colour, lw=1.5, label=label)
    for label, where in (marks or {}).items():
        ax.axvline(where, color=PALETTE["black"], ls="--", lw=1.0)
        ax.annotate(
            label,
            xy=(where, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -12),
            textcoords="offset points",
            fontsize=8,
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return fig


def plot_training_curve(
    losses: ArrayLike,
    held_out_steps: ArrayLike,
    held_out_losses: ArrayLike,
    baselines: Mapping[str, float] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """A training run: the loss of every step's batch, the held-out loss now and then, and the
    losses of simpler models as dashed lines.

    Args:
        losses: ``(steps,)`` training losses (nats), step 1 first.
        held_out_steps, held_out_losses: ``(n,)`` held-out losses after those numbers of steps.
        baselines: label -> the held-out loss of a simpler model (a unigram model, say).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: ``held_out_steps`` and ``held_out_losses`` differ in length.
    """
    steps_done = np.asarray(held_out_steps, dtype=float)
    held = np.asarray(held_out_losses, dtype=float)
    if steps_done.shape != held.shape:
        raise ValueError(
            f"held_out_steps and held_out_losses must have one shape, got {steps_done.shape} "
            f"and {held.shape}"
        )
    fig, ax = figure_and_axes(ax, FIGSIZE)
    train = np.asarray(losses, dtype=float)
    ax.plot(
        np.arange(1, len(train) + 1), train, color=PALETTE["sky"], lw=0.8, label="training batch"
    )
    ax.plot(steps_done, held, "o-", color=PALETTE["blue"], ms=4, lw=1.5, label="held-out text")
    for (label, value), colour in zip(
        (baselines or {}).items(), (PALETTE["vermillion"], PALETTE["orange"]), strict=False
    ):
        ax.axhline(value, color=colour, ls="--", lw=1.2)
        ax.annotate(
            f"{label} {value:.2f}",
            xy=(1.0, value),
            xycoords=("axes fraction", "data"),
            xytext=(-4, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
            color=colour,
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center", frameon=True)
    return fig


PCA_FIGSIZE = (9.0, 3.8)
"""Width and height in inches of :func:`plot_principal_components` (two panels)."""


def plot_principal_components(
    components: PrincipalComponents, n_components: int = 3, axes: Sequence[Axes] | None = None
) -> Figure:
    """A table's top principal components against position (left), and its rows in the plane
    of the first two (right), coloured by position.

    Args:
        components: a :class:`~gptembed.probes.PrincipalComponents` of an ``(L, D)`` table.
        n_components: how many components to draw on the left (each labelled with its share
            of the variance).
        axes: two axes to draw on; by default a new :data:`PCA_FIGSIZE` figure.

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
    fig, (left, right) = figure_and_panels(axes, 2, PCA_FIGSIZE)
    positions = np.arange(len(scores))
    colours = [PALETTE[c] for c in ("blue", "vermillion", "green", "orange", "purple")]
    styles = ["-", "--", "-.", ":", (0, (6, 2, 1, 2))]
    for k in range(n_components):
        left.plot(
            positions,
            scores[:, k],
            linestyle=styles[k % len(styles)],
            color=colours[k % len(colours)],
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


def plot_attention_by_lag(weights: Mapping[str, ArrayLike], ax: Axes | None = None) -> Figure:
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
    fig, ax = figure_and_axes(ax, (FIGSIZE[0], 1.2 + 0.35 * len(rows)))
    image = ax.imshow(grid, cmap="viridis", vmin=0.0, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), list(rows))
    ax.set_xticks(range(0, grid.shape[1], 2))
    ax.set_xlabel("lag: how many places back the key is (0: the query's own position)")
    fig.colorbar(image, ax=ax, label="mean attention weight")
    return fig
