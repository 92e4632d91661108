"""Data figures: the right artists, labels and scales, named sizes, an opaque background.

Every ``plot_*`` returns the Figure it drew on, made without pyplot (so nothing else shows it).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from gptembed._figures import (
    FIGSIZE,
    PALETTE,
    new_figure,
)
from gptembed.attention_terms import mean_by_lag
from gptembed.plotting import (
    _BOUNDARY_STYLE,
    _COLORBAR_WIDTH,
    _EXTRAPOLATION_PANEL_SIZE,
    _LINE_COLOURS,
    _LINE_DASHES,
    _LINE_MARKERS,
    _PCA_PANEL_SIZE,
    _RAMP_PANEL_SIZE,
    _SIMILARITY_PANEL_SIZE,
    _series_styles,
    plot_attention_by_lag,
    plot_loss_by,
    plot_loss_by_position,
    plot_loss_curves,
    plot_position_similarity,
    plot_principal_components,
    plot_ramp_to_recency,
    plot_score_terms,
    plot_score_terms_by_lag,
    plot_similarity_by_lag,
    plot_training_curve,
)
from gptembed.positions import (
    sinusoidal_table,
)
from gptembed.probes import principal_components
from tests.figure_checks import (
    assert_fixed_opaque,
    assert_legible_figure,
)

pytestmark = pytest.mark.usefixtures("no_pyplot_figures")


"""Figures: the right artists, labels and scales, named sizes, an opaque background, one idiom.

Every ``plot_*`` returns the Figure it drew on, made without pyplot (so nothing else shows it).
"""


# --- chapter 6: training figures ---


def test_loss_curves_draw_one_line_per_run_and_the_floors() -> None:
    curves = {"with": np.linspace(3.0, 1.9, 50), "without": np.linspace(3.0, 2.3, 50)}
    fig = plot_loss_curves(curves, floors={"with": 1.85, "without": 2.3})
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [line.get_label() for line in lines if not line.get_label().startswith("_")] == [
        "with",
        "without",
    ]
    np.testing.assert_allclose(lines[0].get_ydata(), curves["with"])
    assert len(lines) == 4  # two curves, two floors
    assert lines[0].get_color() != lines[2].get_color()
    assert_fixed_opaque(fig, FIGSIZE)
    assert "floor 1.850" in [text.get_text() for text in ax.texts]


def test_loss_curves_tell_four_runs_apart_by_dash() -> None:
    curves = {name: np.linspace(3.0, 2.0 + i / 10, 20) for i, name in enumerate("abcd")}
    fig = plot_loss_curves(curves)
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == list("abcd")
    assert len({str(line.get_linestyle()) for line in lines}) == 4
    assert len({line.get_color() for line in lines}) == 4


def test_loss_curves_draw_every_run_and_tell_them_apart() -> None:
    """Six runs: six lines (the colours ran out after four before), no two alike."""
    curves = {f"run {i}": np.linspace(3.0, 2.0 + i / 10, 20) for i in range(6)}
    fig = plot_loss_curves(curves, floors={name: 1.0 + i for i, name in enumerate(curves)})
    ax = fig.axes[0]
    runs = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in runs] == list(curves)
    for line, values in zip(runs, curves.values(), strict=True):
        np.testing.assert_allclose(line.get_ydata(), values)
    assert len({(line.get_color(), str(line.get_linestyle())) for line in runs}) == 6
    assert len(ax.texts) == 6  # every floor labelled


def test_series_styles_keep_the_first_colours_and_never_repeat_a_pair() -> None:
    styles = _series_styles(28, _LINE_DASHES)
    assert [colour for colour, _ in styles[:7]] == list(_LINE_COLOURS)
    assert styles[0] == (PALETTE["blue"], "-") and styles[1] == (PALETTE["vermillion"], "-.")
    assert len({(colour, str(dash)) for colour, dash in styles}) == 28
    assert len(set(_series_styles(35, _LINE_MARKERS))) == 35
    assert PALETTE["yellow"] not in _LINE_COLOURS  # too pale a line on white


def test_loss_curves_refuse_nothing_and_more_runs_than_can_be_told_apart() -> None:
    with pytest.raises(ValueError, match="curves must hold at least one line, got none"):
        plot_loss_curves({})
    many = {f"run {i}": [2.0, 1.0] for i in range(29)}
    with pytest.raises(
        ValueError,
        match=r"a figure can tell at most 28 lines apart \(7 colours by 4 line styles\), got 29",
    ):
        plot_loss_curves(many)


def test_loss_curves_use_given_axes() -> None:
    fig, ax = new_figure()
    assert plot_loss_curves({"run": [2.0, 1.0]}, ax=ax) is fig
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
    boundaries = heatmaps[0].get_lines()
    assert len(boundaries) == 2 * 3  # boundaries at 3, 6, 9 on both axes
    assert sorted(line.get_ydata()[0] for line in boundaries[::2]) == [2.5, 5.5, 8.5]
    for line in boundaries:  # full opacity, dark, in a halo: visible on any colour of the map
        assert line.get_alpha() is None
        assert line.get_color() == _BOUNDARY_STYLE["color"]
        assert line.get_path_effects()
    for axis in (heatmaps[0].xaxis, heatmaps[0].yaxis):
        np.testing.assert_array_equal(axis.get_ticklocs(), [0, 3, 6, 9])
    width, height = _SIMILARITY_PANEL_SIZE
    assert_fixed_opaque(fig, (2 * width + _COLORBAR_WIDTH, height))
    assert len(fig.axes) == 3  # two heatmaps and the colour bar


def test_position_similarity_checks_the_axes() -> None:
    fig, ax = new_figure()
    with pytest.raises(ValueError, match=r"axes must hold 2 axes, got 1"):
        plot_position_similarity({"a": np.eye(3), "b": np.eye(3)}, axes=[ax])
    with pytest.raises(ValueError, match=r"tables must hold at least one table, got none"):
        plot_position_similarity({})
    assert plot_position_similarity({"a": np.eye(3)}, axes=[ax]) is fig
    with pytest.raises(ValueError, match=r"period must be .*, got 0"):
        plot_position_similarity({"a": np.eye(3)}, period=0)


# The attention chapters' figures: what they draw, and the inputs they refuse.


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


# The extrapolation figure: one panel per task, one line per model, the trained length marked.


def test_one_panel_per_task_and_one_line_per_model_on_a_log_scale() -> None:
    curves = {"a": [np.nan, 0.5, 1e-6, 2.0, 4.0, 8.0, 9.0, 9.0], "b": np.full(8, 0.1)}
    fig = plot_loss_by_position({"task one": curves, "task two": curves}, train_len=2)
    assert isinstance(fig, Figure)
    width, height = _EXTRAPOLATION_PANEL_SIZE  # one panel under the other
    np.testing.assert_allclose(fig.get_size_inches(), (width, 2 * height))
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
    for floor in (0.0, -1.0, np.inf, np.nan):  # an infinite floor drew an empty plot
        with pytest.raises(ValueError, match=f"floor must be a finite number > 0, got {floor}"):
            plot_loss_by_position({"x": {"m": [1.0]}}, 1, floor=floor)
    with pytest.raises(TypeError, match="floor must be a number > 0, got '1'"):
        plot_loss_by_position({"x": {"m": [1.0]}}, 1, floor="1")  # type: ignore[arg-type]
    # A task with no curves once named n_series, which the caller never passed.
    with pytest.raises(ValueError, match=r"panels\['y'\] must hold at least one line, got none"):
        plot_loss_by_position({"x": {"m": [1.0]}, "y": {}}, 1)
    with pytest.raises(ValueError, match=r"panels\['x'\] must hold at least one line, got none"):
        plot_loss_by_position({"x": {}}, 1)
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


# Chapter 7's figures and analysis helpers: principal components, attention by lag, the
# training curve: what they compute and draw, and the inputs they refuse.


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
    width, height = _PCA_PANEL_SIZE
    np.testing.assert_allclose(fig.get_size_inches(), (2 * width, height))
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


def test_ramp_to_recency_draws_the_scores_by_key_and_the_weights_by_distance() -> None:
    scores = np.array([0.0, 1.0, 3.0, 4.0])  # a ramp: query i = 3 sees keys 0 .. 3
    weights = _softmax(scores)
    fig = plot_ramp_to_recency(scores, weights, max_distance=2)
    assert_fixed_opaque(fig, (2 * _RAMP_PANEL_SIZE[0], _RAMP_PANEL_SIZE[1]))
    left, right = fig.axes
    (ramp,) = left.get_lines()
    np.testing.assert_array_equal(ramp.get_xdata(), [0, 1, 2, 3])
    np.testing.assert_array_equal(ramp.get_ydata(), scores)
    assert "i = 3" in left.get_xlabel()
    (by_distance,) = right.get_lines()
    np.testing.assert_array_equal(by_distance.get_xdata(), [0, 1, 2])
    np.testing.assert_allclose(by_distance.get_ydata(), weights[[3, 2, 1]])  # distance 3 - j
    assert right.get_ylim()[0] == 0.0
    given = new_figure(ncols=2)
    assert plot_ramp_to_recency(scores, weights, axes=given[1]) is given[0]
    assert len(given[1][1].get_lines()[0].get_xdata()) == 4, "every key by default"


@pytest.mark.parametrize(
    ("scores", "weights", "kwargs", "error", "message"),
    [
        ([0.0, 1.0], [0.5], {}, ValueError, "one length >= 2"),
        ([1.0], [1.0], {}, ValueError, "one length >= 2"),
        ([[0.0, 1.0]], [[0.5, 0.5]], {}, ValueError, "one length >= 2"),
        ([0.0, np.nan], [0.5, 0.5], {}, ValueError, "scores must be finite.*nan at key 1"),
        ([0.0, 1.0], [0.5, np.inf], {}, ValueError, "weights must be finite"),
        ([0.0, 1.0, 2.0], [0.2, 0.3, 0.5], {"max_distance": 3}, ValueError, r"\[1, 2\]"),
        ([0.0, 1.0, 2.0], [0.2, 0.3, 0.5], {"max_distance": 0}, ValueError, ">= 1"),
        ([0.0, 1.0, 2.0], [0.2, 0.3, 0.5], {"max_distance": 1.5}, TypeError, "integer"),
    ],
)
def test_ramp_to_recency_refuses_bad_input(
    scores: list, weights: list, kwargs: dict, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        plot_ramp_to_recency(scores, weights, **kwargs)


def _table(rows: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.02, (rows, dim))


_RAMP = np.linspace(2.0, 0.5, 64)


def _softmax(scores: np.ndarray) -> np.ndarray:
    weights = np.exp(scores - scores.max())
    return weights / weights.sum()


_DATA_FIGURES = {  # each data plot at about the size a chapter draws it
    "loss curves": lambda: plot_loss_curves({"with": _RAMP, "without": _RAMP + 0.3}),
    "position similarity, four tables": lambda: plot_position_similarity(
        {f"table {k}": _table(32, seed=k) for k in range(4)}, period=8
    ),
    "score terms, four": lambda: plot_score_terms(
        {
            name: _table(32, 32, k)
            for k, name in enumerate(("tok-tok", "tok-pos", "pos-tok", "pos-pos"))
        }
    ),
    "similarity by lag": lambda: plot_similarity_by_lag({"a": _RAMP[:16], "b": -_RAMP[:16]}),
    "score terms by lag": lambda: plot_score_terms_by_lag(
        {"a": _table(16, 16), "b": _table(16, 16, 1)}
    ),
    "loss by": lambda: plot_loss_by(np.arange(8), {"a": _RAMP[:8], "b": _RAMP[8:16]}, "start"),
    "loss by position, two tasks": lambda: plot_loss_by_position(
        {"task 1": {"a": _RAMP, "b": _RAMP / 2}, "task 2": {"a": _RAMP, "b": _RAMP * 2}}, 16
    ),
    "training curve": lambda: plot_training_curve(_RAMP, np.arange(0, 64, 8), _RAMP[::8]),
    "principal components": lambda: plot_principal_components(
        principal_components(sinusoidal_table(32, 16)), n_components=3
    ),
    "ramp to recency": lambda: plot_ramp_to_recency(_RAMP[::-1], _softmax(_RAMP[::-1])),
    "attention by lag": lambda: plot_attention_by_lag(
        {f"head {h}": np.abs(_table(1, 16, h))[0] for h in range(4)}
    ),
}


@pytest.mark.parametrize("name", list(_DATA_FIGURES))
def test_every_data_figure_is_legible_at_page_width(name: str) -> None:
    assert_legible_figure(_DATA_FIGURES[name](), name)
