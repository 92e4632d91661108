"""The attention chapters' figures: what they draw, and the inputs they refuse."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed.plotting import plot_loss_by, plot_score_terms, plot_similarity_by_lag


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
