"""The attention chapters' figures: what they draw, and the inputs they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed.attention_model import mean_by_lag
from gptembed.plotting import (
    FIGSIZE,
    MEMORY_FIGSIZE,
    plot_context_costs,
    plot_loss_by,
    plot_score_terms,
    plot_score_terms_by_lag,
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


def test_score_terms_scale_ignores_minus_inf_and_greys_it_out() -> None:
    """A -inf score (a key given no weight) is hidden like a future key; it sets no scale."""
    term = np.arange(16.0).reshape(4, 4)
    term[3, 0] = -np.inf
    (image,) = plot_score_terms({"a": term}).axes[0].get_images()
    assert image.get_clim() == (-15.0, 15.0)
    assert image.get_array().mask[3, 0] and not image.get_array().mask[3, 1]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_score_terms_refuse_nan_and_plus_inf_where_a_query_looks(bad: float) -> None:
    term = np.zeros((4, 4))
    term[0, 2] = bad  # a future key: hidden, so allowed
    assert isinstance(plot_score_terms({"a": term}), Figure)
    term[2, 1] = bad
    with pytest.raises(
        ValueError,
        match=rf"term 'a' holds 1 score\(s\) that are NaN or \+inf where a query may look, "
        rf"the first {bad} at query 2, key 1: only -inf",
    ):
        plot_score_terms({"a": term})


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


def test_line_figures_draw_every_line_and_tell_them_apart() -> None:
    """Seven lines each: every one drawn (five and four were, before), no two alike."""
    profiles = {f"table {i}": np.linspace(-1, 1, 5) * i / 7 for i in range(7)}
    for fig in (
        plot_similarity_by_lag(profiles),
        plot_loss_by(np.arange(5), profiles, "x"),
        plot_score_terms_by_lag({name: np.full((3, 3), i) for i, name in enumerate(profiles)}),
    ):
        lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
        assert [line.get_label() for line in lines] == list(profiles)
        assert len({(line.get_color(), line.get_marker()) for line in lines}) == 7
        assert len(fig.axes[0].get_legend().get_texts()) == 7


def test_line_figures_refuse_nothing_to_draw() -> None:
    with pytest.raises(ValueError, match="profiles must hold at least one line, got none"):
        plot_similarity_by_lag({})
    with pytest.raises(ValueError, match="curves must hold at least one line, got none"):
        plot_loss_by([0], {}, "x")
    with pytest.raises(ValueError, match="terms must hold at least one line, got none"):
        plot_score_terms_by_lag({})
    with pytest.raises(ValueError, match="at most 35 lines apart"):
        plot_similarity_by_lag({str(i): [0.0] for i in range(36)})


def test_score_terms_by_lag_draw_each_terms_mean_at_lags_from_zero() -> None:
    rng = np.random.default_rng(0)
    terms = {"a": rng.standard_normal((2, 5, 5)), "b": np.tril(np.ones((5, 5)))}
    fig = plot_score_terms_by_lag(terms, marks=[3])
    (ax,) = fig.axes
    np.testing.assert_allclose(fig.get_size_inches(), FIGSIZE)
    a, b = ax.get_lines()[:2]
    np.testing.assert_array_equal(a.get_xdata(), np.arange(5))
    np.testing.assert_allclose(a.get_ydata(), mean_by_lag(terms["a"]))
    np.testing.assert_allclose(b.get_ydata(), np.ones(5))
    assert [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":"] == [3]
    assert ax.get_ylabel() == "mean score" and ax.get_xlabel().startswith("lag i - j")
    with pytest.raises(ValueError, match="scores must have shape"):
        plot_score_terms_by_lag({"a": np.zeros((2, 3))})


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
            for line in plot_context_costs("gpt2-small", [256, 512], bytes_per_element=s)
            .axes[0]
            .get_lines()
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
