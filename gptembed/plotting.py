"""The book's data figures: training runs, what a position table holds, and how heads read it.

One idiom for every figure module (this one, :mod:`~gptembed.cost_figures`,
:mod:`~gptembed.layer_diagrams` and :mod:`~gptembed.scheme_diagrams`): every ``plot_*`` function
takes a keyword-only ``ax=None`` (or ``axes=None``) and returns the
:class:`~matplotlib.figure.Figure` it drew on, so a chapter shows a figure by making the call the
last expression of its cell. Each figure has a fixed size (:data:`gptembed._figures.FIGSIZE`, or
a ``_*_FIGSIZE`` or ``_*_PANEL_SIZE`` of its module); the figures are made without pyplot, on an
opaque white background, in the Okabe-Ito colour-blind-safe palette (:mod:`gptembed._figures`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

try:
    from matplotlib.axes import Axes
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patheffects import withStroke
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"{__name__} draws with matplotlib, which is not installed: install the plot extra with "
        'pip install "gptembed[plot]"'
    ) from err

from ._checks import check_float, check_int
from ._figures import (
    DIVERGING_CMAP,
    FIGSIZE,
    GREY,
    PALETTE,
    centred_limit,
    figure_and_axes,
    figure_and_panels,
    mark_verticals,
)
from .attention_terms import mean_by_lag
from .probes import PrincipalComponents, cosine_similarity_matrix

_SIMILARITY_PANEL_SIZE = (3.0, 3.1)
"""Width and height in inches of one panel of :func:`plot_position_similarity`."""

_COLORBAR_WIDTH = 1.0
"""Inches added to a figure's width for its colour bar."""

_LINE_COLOURS = tuple(
    PALETTE[name] for name in ("blue", "vermillion", "green", "orange", "purple", "sky", "black")
)
"""The colours of a line figure's series, in order (the palette without its yellow, too pale on
white). A figure with more series than colours starts again at the first colour, each time with
the next line style, so no two series look alike (:func:`_series_styles`)."""

_LINE_DASHES: tuple[Any, ...] = ("-", "-.", ":", (0, (6, 2, 1, 2)))
"""Dash patterns that tell the runs of :func:`plot_loss_curves` apart: solid, dash-dot, dotted,
long dash-dot. Plain dashes are left for the floors."""

_LINE_MARKERS = ("o", "s", "^", "D", "v")
"""Markers that tell the lines of :func:`plot_similarity_by_lag` and :func:`plot_loss_by` apart."""

_BOUNDARY_STYLE: dict[str, Any] = {
    "color": "#333333",
    "lw": 0.8,
    "path_effects": [withStroke(linewidth=2.0, foreground="white")],
}
"""Record boundaries on a :data:`DIVERGING_CMAP` heatmap: a thin dark-grey line in a white halo,
so it stands out on white (zero), deep red and deep blue alike."""


def _series_styles(n_series: int, styles: Sequence[Any]) -> list[tuple[str, Any]]:
    """A ``(colour, style)`` pair for each of ``n_series`` lines, no two pairs alike.

    Series ``i`` gets colour ``i mod 7`` of :data:`_LINE_COLOURS` and style ``i mod len(styles)``
    (a dash pattern or a marker), so the first series keep their colours and the pairs repeat
    only after ``lcm(7, len(styles))`` series.

    Raises:
        ValueError: no series, or more than ``lcm(7, len(styles))``: so many lines cannot be
            told apart.
    """
    n_series = check_int("n_series", n_series)
    n_distinct = math.lcm(len(_LINE_COLOURS), len(styles))
    if n_series > n_distinct:
        raise ValueError(
            f"a figure can tell at most {n_distinct} lines apart ({len(_LINE_COLOURS)} colours "
            f"by {len(styles)} line styles), got {n_series}: draw fewer on one axes"
        )
    return [
        (_LINE_COLOURS[i % len(_LINE_COLOURS)], styles[i % len(styles)]) for i in range(n_series)
    ]


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

    Runs are told apart by colour and dash pattern (:func:`_series_styles` with
    :data:`_LINE_DASHES`), and every run is drawn.

    Args:
        curves: label -> ``(steps,)`` losses in nats.
        floors: label -> the lowest loss that run's model can reach (same labels as ``curves``).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no curves, or more than :func:`_series_styles` can tell apart.
    """
    _check_series("curves", curves)
    styles = _series_styles(len(curves), _LINE_DASHES)
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
            record) and a line in :data:`_BOUNDARY_STYLE` marks each record boundary.
        axes: one axes per table to draw on; by default a new figure of one
            :data:`_SIMILARITY_PANEL_SIZE` panel per table, in rows as :func:`panel_grid`
            lays them out, plus :data:`_COLORBAR_WIDTH`.

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
        len(tables), _SIMILARITY_PANEL_SIZE, axes=axes, extra_width=_COLORBAR_WIDTH
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
                    draw_line(edge - 0.5, **_BOUNDARY_STYLE)
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
    limit = centred_limit([array[~hidden[title]] for title, array in arrays.items()])
    norm = Normalize(-limit, limit)
    for ax, (title, array) in zip(panels, arrays.items(), strict=True):
        ax.set_facecolor(GREY)  # shows through the hidden (future or -inf) keys
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
    styles = _series_styles(len(profiles), _LINE_MARKERS)
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

    Lines are told apart by colour and marker (:func:`_series_styles` with
    :data:`_LINE_MARKERS`), and every line is drawn.

    Args:
        profiles: label -> ``(L - 1,)`` similarities at lags ``1 .. L-1``
            (:func:`~gptembed.probes.similarity_by_lag`).
        marks: lags to mark with a dotted vertical line (for example a task's offset).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no profiles, or more than :func:`_series_styles` can tell apart.
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
        ValueError: no terms, more than :func:`_series_styles` can tell apart, or as
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

    Lines are told apart by colour and marker (:func:`_series_styles` with
    :data:`_LINE_MARKERS`), and every line is drawn.

    Args:
        x: ``(n,)`` the settings (a start position, a generation step, ...).
        curves: label -> ``(n,)`` losses.
        xlabel: what ``x`` is.
        marks: label -> an ``x`` to mark with a dashed vertical line (for example the window).
        ylabel: what the losses are (for example an excess over the best possible).
        ax: axes to draw on; by default a new :data:`FIGSIZE` figure.

    Raises:
        ValueError: no curves, or more than :func:`_series_styles` can tell apart.
    """
    _check_series("curves", curves)
    styles = _series_styles(len(curves), _LINE_MARKERS)
    fig, ax = figure_and_axes(ax=ax)
    xs = np.asarray(x, dtype=float)
    for (label, losses), (colour, marker) in zip(curves.items(), styles, strict=True):
        values = np.asarray(losses, dtype=float)
        ax.plot(xs, values, marker=marker, ms=4, color=colour, lw=1.5, label=label)
    mark_verticals(ax, marks or {})
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return fig


_EXTRAPOLATION_PANEL_SIZE = (7.0, 3.4)
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
            panel, no two labels alike (:func:`_series_styles`).
        train_len: ``T``, the length the models were trained at.
        floor: the smallest loss drawn.
        axes: one axes per panel to draw on; by default a new figure of
            :data:`_EXTRAPOLATION_PANEL_SIZE` panels, one under another.

    Raises:
        TypeError, ValueError: ``floor`` not a finite number > 0 (the y axis is logarithmic;
            an infinite floor drew an empty plot).
        ValueError: no panels, a panel with no curves, ``axes`` of the wrong number, or more
            labels than :func:`_series_styles` can tell apart.
    """
    train_len = check_int("train_len", train_len)
    if not panels:
        raise ValueError("panels must hold at least one task")
    for title, curves in panels.items():
        _check_series(f"panels[{title!r}]", curves)
    floor = check_float("floor", floor, above=0)
    fig, grid = figure_and_panels(len(panels), _EXTRAPOLATION_PANEL_SIZE, axes=axes)
    labels = list(dict.fromkeys(label for curves in panels.values() for label in curves))
    style = dict(zip(labels, _series_styles(len(labels), _LINE_MARKERS), strict=True))
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


_PCA_PANEL_SIZE = (3.5, 3.4)
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
        axes: two axes to draw on; by default a new figure of two :data:`_PCA_PANEL_SIZE`
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
    fig, (left, right) = figure_and_panels(2, _PCA_PANEL_SIZE, axes=axes)
    positions = np.arange(len(scores))
    for k, (colour, dashes) in enumerate(_series_styles(n_components, _LINE_DASHES)):
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


_RAMP_PANEL_SIZE = (3.5, 3.2)
"""Width and height in inches of each of :func:`plot_ramp_to_recency`'s two panels."""


def plot_ramp_to_recency(
    scores: ArrayLike,
    weights: ArrayLike,
    *,
    max_distance: int | None = None,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """One query's scores against key position (left) and its weights against distance (right).

    How softmax turns a score that rises with the key's position ``j`` (a ramp) into weights that
    fall with the distance ``i - j``: the query is ``i = len(scores) - 1``, and it sees the keys
    ``j = 0 .. i``.

    Args:
        scores: ``(i + 1,)`` the query's scores of keys ``0 .. i`` (or one term of them).
        weights: ``(i + 1,)`` the weights the query gives those keys (the softmax of ``scores``),
            key ``j`` at index ``j``.
        max_distance: the largest distance the right panel shows; by default ``i``, every key.
        axes: two axes to draw on; by default a new figure of two :data:`_RAMP_PANEL_SIZE` panels
            side by side.

    Raises:
        ValueError: ``scores`` and ``weights`` are not 1-D of one length >= 1, hold a NaN or inf,
            ``max_distance`` is not in ``[1, i]``, or ``axes`` does not hold 2 axes.
        TypeError: ``max_distance`` is not an integer.
    """
    row = np.asarray(scores, dtype=float)
    shares = np.asarray(weights, dtype=float)
    if row.ndim != 1 or row.shape != shares.shape or len(row) < 2:
        raise ValueError(
            "scores and weights must be (i + 1,) arrays of one length >= 2 (a query and at least "
            f"two keys), got shapes {row.shape} and {shares.shape}"
        )
    for name, values in (("scores", row), ("weights", shares)):
        if not np.isfinite(values).all():
            first = int(np.argmin(np.isfinite(values)))
            raise ValueError(
                f"{name} must be finite to draw, got {values[first]} at key {first}: a key a "
                "query may not see has no score here, leave it out"
            )
    query = len(row) - 1
    shown = query if max_distance is None else check_int("max_distance", max_distance)
    if shown > query:
        raise ValueError(f"max_distance must be in [1, {query}] (the query's keys), got {shown}")
    fig, (left, right) = figure_and_panels(2, _RAMP_PANEL_SIZE, axes=axes)
    left.plot(np.arange(query + 1), row, color=PALETTE["blue"], lw=1.8)
    left.set_xlabel(f"key position j (query i = {query})")
    left.set_ylabel("score")
    distances = np.arange(shown + 1)
    right.plot(distances, shares[::-1][: shown + 1], color=PALETTE["vermillion"], marker="o", ms=4)
    right.set_ylim(bottom=0.0)
    right.set_xlabel("distance i - j: how far back the key is")
    right.set_ylabel("softmax weight")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
    return fig
