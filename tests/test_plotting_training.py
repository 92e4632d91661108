"""The training figures: they draw what they are given, on a fixed-size opaque figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from gptembed.plotting import (
    FIGSIZE,
    new_figure,
    plot_loss_curves,
    plot_position_similarity,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_loss_curves_draw_one_line_per_run_and_the_floors() -> None:
    curves = {"with": np.linspace(3.0, 1.9, 50), "without": np.linspace(3.0, 2.3, 50)}
    ax = plot_loss_curves(curves, floors={"with": 1.85, "without": 2.3})
    lines = ax.get_lines()
    assert [line.get_label() for line in lines if not line.get_label().startswith("_")] == [
        "with",
        "without",
    ]
    np.testing.assert_allclose(lines[0].get_ydata(), curves["with"])
    assert len(lines) == 4  # two curves, two floors
    assert lines[0].get_color() != lines[2].get_color()
    fig = ax.figure
    assert tuple(fig.get_size_inches()) == FIGSIZE
    assert fig.patch.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert "floor 1.850" in [text.get_text() for text in ax.texts]


def test_loss_curves_use_given_axes() -> None:
    _, ax = new_figure()
    assert plot_loss_curves({"run": [2.0, 1.0]}, ax=ax) is ax
    assert len(ax.get_lines()) == 1


def test_position_similarity_draws_one_heatmap_per_table() -> None:
    rng = np.random.default_rng(0)
    tables = {"before": rng.standard_normal((12, 4)), "after": rng.standard_normal((12, 4))}
    fig = plot_position_similarity(tables, period=3)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in heatmaps] == ["before", "after"]
    data = heatmaps[0].images[0].get_array()
    assert data.shape == (12, 12)
    np.testing.assert_allclose(np.diag(data), 1.0)
    assert heatmaps[0].images[0].get_clim() == (-1.0, 1.0)
    assert len(heatmaps[0].get_lines()) == 2 * 3  # boundaries at 3, 6, 9 on both axes
    assert fig.patch.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert len(fig.axes) == 3  # two heatmaps and the colour bar


def test_position_similarity_checks_the_axes() -> None:
    _, ax = new_figure()
    with pytest.raises(ValueError, match=r"need one axes per table: 2 tables, got 1 axes"):
        plot_position_similarity({"a": np.eye(3), "b": np.eye(3)}, axes=[ax])
