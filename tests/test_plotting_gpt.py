"""Chapter 9's figures and analysis helpers: principal components, attention by lag, the
training curve: what they compute and draw, and the inputs they refuse."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed.gpt import attention_by_lag
from gptembed.plotting import (
    PCA_FIGSIZE,
    plot_attention_by_lag,
    plot_principal_components,
    plot_training_curve,
)
from gptembed.positions import sinusoidal_table
from gptembed.probes import principal_components


def test_principal_components_of_a_line_and_a_circle() -> None:
    t = np.arange(20.0)
    direction = np.array([3.0, 0.0, 4.0]) / 5.0
    line = 7.0 + np.outer(t, direction)  # rows on a line, rising with t
    pc = principal_components(line)
    assert pc.variance_share[0] == pytest.approx(1.0)
    np.testing.assert_allclose(pc.directions[0], direction, atol=1e-12)  # sign: rises with t
    np.testing.assert_allclose(pc.scores[:, 0], t - t.mean(), atol=1e-9)
    np.testing.assert_allclose(pc.mean, line.mean(axis=0))
    falling = principal_components(line[::-1])
    np.testing.assert_allclose(falling.scores[:, 0], t - t.mean(), atol=1e-9)
    angle = 2 * np.pi * t / 20
    circle = np.stack([np.cos(angle), np.sin(angle), np.zeros(20)], axis=1)
    np.testing.assert_allclose(principal_components(circle).variance_share[:2], 0.5)


def test_principal_components_refuse_degenerate_tables() -> None:
    with pytest.raises(ValueError, match="at least 2 rows"):
        principal_components(np.ones((1, 3)))
    with pytest.raises(ValueError, match="every row of the table is the same"):
        principal_components(np.ones((4, 3)))
    with pytest.raises(ValueError, match="2-D"):
        principal_components(np.ones(4))


def test_attention_by_lag_reads_the_diagonals() -> None:
    probs = np.zeros((2, 4, 4))
    probs[0] = np.eye(4)  # every query on itself
    probs[1, np.arange(1, 4), np.arange(3)] = 1.0  # every query but the first one back
    probs[1, 0, 0] = 1.0
    by_lag = attention_by_lag(probs, 2)
    np.testing.assert_allclose(by_lag, [[1.0, 0.0, 0.0], [0.25, 1.0, 0.0]])
    with pytest.raises(ValueError, match=r"max_lag must be in \[0, 3\], got 4"):
        attention_by_lag(probs, 4)
    with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
        attention_by_lag(np.zeros((3, 4)), 1)


def test_training_curve_draws_the_run_the_held_out_points_and_the_baselines() -> None:
    fig = plot_training_curve([3.0, 2.0, 1.5, 1.2], [2, 4], [2.1, 1.4], baselines={"unigram": 3.2})
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    lines = ax.get_lines()
    np.testing.assert_array_equal(lines[0].get_xdata(), [1, 2, 3, 4])
    np.testing.assert_array_equal(lines[1].get_ydata(), [2.1, 1.4])
    np.testing.assert_array_equal(lines[2].get_ydata(), [3.2, 3.2])  # the baseline
    assert "unigram 3.20" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="one shape"):
        plot_training_curve([1.0], [1, 2], [1.0])


def test_principal_components_figure() -> None:
    pc = principal_components(sinusoidal_table(32, 8))
    fig = plot_principal_components(pc, n_components=2)
    assert tuple(fig.get_size_inches()) == PCA_FIGSIZE
    left, right = fig.axes[:2]
    assert len(left.get_lines()) == 3  # two components and the zero line
    assert "of the variance" in left.get_lines()[0].get_label()
    np.testing.assert_allclose(right.collections[0].get_offsets()[:, 0], pc.scores[:, 0])
    with pytest.raises(ValueError, match=r"n_components must be in \[1, 8\]"):
        plot_principal_components(pc, n_components=9)


def test_attention_by_lag_figure_has_one_row_per_head() -> None:
    fig = plot_attention_by_lag({"head 1": [0.5, 0.3, 0.2], "head 2": [0.1, 0.8, 0.1]})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["head 1", "head 2"]
    assert ax.get_images()[0].get_array().shape == (2, 3)
    with pytest.raises(ValueError, match="rows of one length"):
        plot_attention_by_lag({"a": [0.5, 0.5], "b": [1.0]})
    with pytest.raises(ValueError, match="rows of one length"):
        plot_attention_by_lag({})


def test_training_curve_refuses_baselines_it_cannot_tell_apart() -> None:
    """A third baseline was silently left undrawn (two colours); it is refused, saying why."""
    three = {"unigram": 3.2, "bigram": 2.5, "trigram": 2.0}
    with pytest.raises(ValueError, match=r"at most 2 baselines can be told apart .*, got 3"):
        plot_training_curve([3.0, 2.0], [1], [2.1], baselines=three)


def test_principal_components_draw_each_component_in_its_own_style() -> None:
    """Six components: six different (colour, dashes) pairs (the sixth repeated the first)."""
    table = np.random.default_rng(0).normal(size=(32, 8))
    fig = plot_principal_components(principal_components(table), n_components=6)
    lines = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("component")]
    assert len({(line.get_color(), str(line.get_linestyle())) for line in lines}) == 6
