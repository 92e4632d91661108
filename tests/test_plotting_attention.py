"""The attention chapters' figures: what they draw, and the inputs they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed.plotting import (
    MEMORY_FIGSIZE,
    plot_context_costs,
    plot_loss_by,
    plot_score_terms,
    plot_similarity_by_lag,
)


def test_score_terms_share_one_scale_and_grey_out_the_future() -> None:
    first = np.arange(16.0).reshape(4, 4)
    first[0, 3] = 100.0  # a future key: hidden, so it must not set the scale
    terms = {"a": first, "b": -np.ones((4, 4))}
    fig = plot_score_terms(terms)
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    images = [ax.get_images()[0] for ax in panels]
    limits = {image.get_clim() for image in images}
    assert limits == {(-15.0, 15.0)}  # the largest visible |value|: 15 at (3, 3)
    assert images[0].get_array().mask[0, 1] and not images[0].get_array().mask[1, 0]


def test_score_terms_refuse_mismatched_shapes_and_axes() -> None:
    with pytest.raises(ValueError, match=r"\(T, T\) arrays of one shape"):
        plot_score_terms({"a": np.zeros((3, 3)), "b": np.zeros((4, 4))})
    with pytest.raises(ValueError, match="axes must hold 1 axes, got 0"):
        plot_score_terms({"a": np.zeros((3, 3))}, axes=[])


def test_line_figures_draw_one_line_per_entry() -> None:
    fig = plot_similarity_by_lag({"x": [0.5, -0.2, 0.1], "y": [0.0, 0.0, 0.0]}, marks=[2])
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.get_lines()][:2] == ["x", "y"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [1, 2, 3])
    fig = plot_loss_by([0, 1, 2], {"m": [1.0, 2.0, 3.0]}, "start", marks={"window": 1.0})
    (ax,) = fig.axes
    assert ax.get_xlabel() == "start" and ax.get_ylabel() == "cross-entropy (nats)"
    assert plot_loss_by([0], {"m": [1.0]}, "x", ylabel="excess").axes[0].get_ylabel() == "excess"
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [1.0, 2.0, 3.0])


def test_context_costs_draw_four_costs_with_their_growth() -> None:
    """Scores quadratic, KV cache and position table linear, weights flat; the marks drawn."""
    lengths = [256, 1024, 4096]
    fig = plot_context_costs("gpt2-small", lengths, marks={"here": 930})
    (ax,) = fig.axes
    lines = [line for line in ax.get_lines() if line.get_label() != "_nolegend_"]
    drawn = {line.get_label(): np.asarray(line.get_ydata(), dtype=float) for line in lines[:4]}
    assert list(drawn) == [
        "attention scores, all 12 layers (eager)",
        "KV cache",
        "model weights (124,439,808 parameters)",
        "position table (n rows)",
    ]
    slopes = {label: np.polyfit(np.log2(lengths), np.log2(y), 1)[0] for label, y in drawn.items()}
    assert [round(s, 9) for s in slopes.values()] == [2.0, 1.0, 0.0, 1.0]
    assert drawn["attention scores, all 12 layers (eager)"][1] == 576 * 2**20
    assert drawn["position table (n rows)"][0] == 256 * 768 * 4
    assert [line.get_xdata()[0] for line in ax.get_lines()[4:]] == [930]  # the mark
    assert [t.get_text() for t in ax.texts] == ["here"]
    assert tuple(fig.get_size_inches()) == MEMORY_FIGSIZE
    assert fig.get_facecolor()[3] == 1.0


def test_context_costs_in_fp16_halve_every_line() -> None:
    full, half = (
        [
            line.get_ydata()[0]
            for line in plot_context_costs("gpt2-small", [256, 512], s).axes[0].get_lines()
        ]
        for s in (4, 2)
    )
    assert [f / h for f, h in zip(full, half, strict=True)] == [2.0] * 4


def test_context_costs_refuse_bad_input() -> None:
    with pytest.raises(KeyError, match=r"no model 'gpt4': MODELS has gpt2-small, gpt2-medium"):
        plot_context_costs("gpt4", [256, 512])
    with pytest.raises(ValueError, match=r"seq_lens must hold at least two lengths, got 1"):
        plot_context_costs("gpt2-small", [256])
    with pytest.raises(ValueError, match=r"seq_lens must be an integer >= 1, got 0"):
        plot_context_costs("gpt2-small", [0, 256])
    with pytest.raises(ValueError, match=r"bytes_per_element must be an integer >= 1, got 0"):
        plot_context_costs("gpt2-small", [256, 512], bytes_per_element=0)
