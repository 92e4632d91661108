"""The extrapolation figure: one panel per task, one line per model, the trained length marked."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed.plotting import EXTRAPOLATION_FIGSIZE, new_figure, plot_loss_by_position


def test_one_panel_per_task_and_one_line_per_model_on_a_log_scale() -> None:
    curves = {"a": [np.nan, 0.5, 1e-6, 2.0, 4.0, 8.0, 9.0, 9.0], "b": np.full(8, 0.1)}
    fig = plot_loss_by_position({"task one": curves, "task two": curves}, train_len=2)
    assert isinstance(fig, Figure)
    assert tuple(fig.get_size_inches()) == EXTRAPOLATION_FIGSIZE
    assert [ax.get_title() for ax in fig.axes] == ["task one", "task two"]
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    lines = [line for line in ax.get_lines() if line.get_label() in curves]
    assert [line.get_label() for line in lines] == ["a", "b"]
    drawn = lines[0].get_ydata()
    assert np.isnan(drawn[0]) and drawn[2] == 1e-3  # nan stays a gap; tiny losses at the floor
    np.testing.assert_array_equal(lines[0].get_xdata(), np.arange(8))
    dashed = [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"]
    dotted = [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert dashed == [1.5] and dotted == [3.5, 5.5]  # T, then 2T and 3T
    assert lines[0].get_color() == fig.axes[1].get_lines()[0].get_color()  # one colour per model


def test_draws_on_given_axes_and_refuses_bad_input() -> None:
    fig, axes = new_figure(ncols=2)
    assert plot_loss_by_position({"x": {"m": [1.0]}, "y": {"m": [1.0]}}, 1, axes=axes) is fig
    with pytest.raises(ValueError, match="axes must hold 2 axes, got 1"):
        plot_loss_by_position({"x": {"m": [1.0]}, "y": {"m": [1.0]}}, 1, axes=axes[:1])
    with pytest.raises(ValueError, match="panels must hold at least one task"):
        plot_loss_by_position({}, 1)
    with pytest.raises(ValueError, match="floor must be > 0"):
        plot_loss_by_position({"x": {"m": [1.0]}}, 1, floor=0.0)
    with pytest.raises(ValueError, match="train_len must be an integer >= 1, got 0"):
        plot_loss_by_position({"x": {"m": [1.0]}}, 0)


def test_every_model_gets_its_own_style_in_every_panel() -> None:
    """Seven models: each drawn with a colour and marker of its own (six were styled before, the
    seventh fell back to the sixth's black), the same in both panels."""
    curves = {f"model {i}": np.full(8, 1.0 + i) for i in range(7)}
    fig = plot_loss_by_position({"a": curves, "b": dict(reversed(curves.items()))}, 4)
    styles = [
        {line.get_label(): (line.get_color(), line.get_marker()) for line in ax.get_lines()
         if line.get_label() in curves}
        for ax in fig.axes
    ]  # fmt: skip
    assert len(set(styles[0].values())) == 7
    assert styles[0] == styles[1]
