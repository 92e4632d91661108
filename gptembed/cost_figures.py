"""Figures of what positions cost: the models' parameters, attention's memory, a context's bytes.

Drawn with matplotlib in the idiom of :mod:`gptembed.plotting`: every ``plot_*`` takes a
keyword-only ``ax=None`` and returns the :class:`~matplotlib.figure.Figure` it drew on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

try:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"{__name__} draws with matplotlib, which is not installed: install the plot extra with "
        'pip install "gptembed[plot]"'
    ) from err

from ._checks import check_int
from ._figures import PALETTE, figure_and_axes, mark_verticals
from .attention_cost import attention_scores_bytes, kv_cache_bytes
from .measure import format_bytes
from .models import (
    MODELS,
    ModelConfig,
    config_embedding_counts,
    model_label,
    transformer_parameter_count,
)

_ASYMMETRY_FIGSIZE = (7.0, 5.5)
"""Width and height in inches of :func:`plot_parameter_asymmetry` (a bar per model)."""

_MEMORY_FIGSIZE = (7.0, 4.5)
"""Width and height in inches of :func:`plot_attention_memory`."""


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
        ax: axes to draw on; by default a new :data:`_ASYMMETRY_FIGSIZE` figure.

    Raises:
        ValueError: ``models`` is empty.
    """
    if not models:
        raise ValueError("models must name at least one model, got none")
    fig, ax = figure_and_axes(_ASYMMETRY_FIGSIZE, ax=ax)
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
        ax: axes to draw on; by default a new :data:`_MEMORY_FIGSIZE` figure.

    Raises:
        ValueError: fewer than two sequence lengths.
    """
    lengths = np.array(sorted(seq_lens))
    if lengths.size < 2:
        raise ValueError(f"seq_lens must hold at least two lengths, got {lengths.size}")
    fig, ax = figure_and_axes(_MEMORY_FIGSIZE, ax=ax)
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
        ax: axes to draw on; by default a new :data:`_MEMORY_FIGSIZE` figure.

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
    fig, ax = figure_and_axes(_MEMORY_FIGSIZE, ax=ax)
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
    mark_verticals(ax, marks or {}, linestyle=":")
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
