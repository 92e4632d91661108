"""Figures: the right artists, labels and scales, named sizes, an opaque background, one idiom.

Every ``plot_*`` returns the Figure it drew on, made without pyplot (so nothing else shows it).
"""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Annotation

from gptembed import (
    MODELS,
    GPTStyleEmbedding,
    attention_scores_bytes,
    config_embedding_counts,
    model_label,
    transformer_parameter_count,
)
from gptembed.attention_model import AttentionConfig, cached_forward
from gptembed.attention_model import init_model as init_attention_model
from gptembed.attention_terms import mean_by_lag
from gptembed.plotting import (
    ADDITION_COLORBAR_WIDTH,
    ADDITION_PANEL_SIZE,
    ASYMMETRY_FIGSIZE,
    BOUNDARY_STYLE,
    COLORBAR_WIDTH,
    DIAGRAM_WIDTH,
    DIVERGING_CMAP,
    EXTRAPOLATION_PANEL_SIZE,
    FIGSIZE,
    KV_CACHED,
    KV_DROPPED,
    KV_EMPTY,
    KV_NEW,
    LINE_COLOURS,
    LINE_DASHES,
    LINE_MARKERS,
    MEMORY_FIGSIZE,
    MIN_TEXT_PX,
    PALETTE,
    PCA_PANEL_SIZE,
    SIMILARITY_PANEL_SIZE,
    describe_alibi_bias,
    describe_embedding_sum,
    describe_kv_cache,
    describe_padded_batch,
    describe_rotary_rotation,
    new_figure,
    panel_grid,
    plot_alibi_bias,
    plot_attention_by_lag,
    plot_attention_memory,
    plot_context_costs,
    plot_embedding_addition,
    plot_embedding_sum,
    plot_kv_cache,
    plot_loss_by,
    plot_loss_by_position,
    plot_loss_curves,
    plot_padded_batch,
    plot_parameter_asymmetry,
    plot_position_similarity,
    plot_principal_components,
    plot_rotary_rotation,
    plot_score_terms,
    plot_score_terms_by_lag,
    plot_similarity_by_lag,
    plot_training_curve,
    series_styles,
    smallest_text_px,
)
from gptembed.positions import (
    PAD_POSITION,
    alibi_slopes,
    linear_bias,
    position_ids_from_mask,
    rotate,
    sinusoidal_table,
)
from gptembed.probes import principal_components


@pytest.fixture(autouse=True)
def _no_pyplot_figures() -> Iterator[None]:
    """No plot may be one of pyplot's figures: pyplot would show it again at the end of a cell.

    (pyplot is not imported here; if something else imported it, it must hold no figure.)"""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    assert pyplot is None or pyplot.get_fignums() == [], "a plotting function made a pyplot figure"


def _assert_fixed_opaque(fig: Figure, size: tuple[float, float]) -> None:
    assert type(fig) is Figure
    np.testing.assert_allclose(fig.get_size_inches(), size)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)


def _addition_rows() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(0, 0.02, (5, 4)), rng.normal(0, 0.02, (5, 4))


def test_embedding_addition_draws_three_heatmaps_on_one_centred_scale() -> None:
    tok, pos = _addition_rows()
    fig = plot_embedding_addition(tok, pos)
    axes = fig.axes[:3]
    images = [ax.get_images() for ax in axes]
    assert all(len(found) == 1 and isinstance(found[0], AxesImage) for found in images)
    limits = {im[0].get_clim() for im in images}
    assert len(limits) == 1, "the three panels must share one colour scale"
    low, high = limits.pop()
    assert high > 0 and low == -high, "the scale must be centred on 0"
    assert high == pytest.approx(max(abs(tok).max(), abs(pos).max(), abs(tok + pos).max()))
    assert all(im[0].get_cmap().name == DIVERGING_CMAP for im in images)
    np.testing.assert_allclose(images[0][0].get_array(), tok)
    np.testing.assert_allclose(images[1][0].get_array(), pos)
    np.testing.assert_allclose(images[2][0].get_array(), tok + pos)
    assert len(fig.axes) == 4, "three panels and one shared colour bar"


def test_embedding_addition_titles_labels_and_highlights() -> None:
    tok, pos = _addition_rows()
    labels = ["0 the", "1 cat", "2 sat", "3 on", "4 the"]
    axes = plot_embedding_addition(tok, pos, row_labels=labels, highlight_rows=[0, 4]).axes[:3]
    assert [ax.get_title().split()[0] for ax in axes] == ["token", "+", "="]
    for ax in axes:
        assert [t.get_text() for t in ax.get_yticklabels()] == labels
        assert ax.get_xlabel() == "dimension"
        boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert sorted(b.get_y() + 0.5 for b in boxes) == [0, 4]
        assert all(
            b.get_edgecolor()[:3] == matplotlib.colors.to_rgb(PALETTE["black"]) for b in boxes
        )
    assert axes[0].get_ylabel()


def test_embedding_addition_fixed_size_and_opaque_background() -> None:
    tok, pos = _addition_rows()
    width, height = ADDITION_PANEL_SIZE  # three panels in one row, and the colour bar
    _assert_fixed_opaque(
        plot_embedding_addition(tok, pos), (3 * width + ADDITION_COLORBAR_WIDTH, height)
    )


def test_embedding_addition_draws_on_given_axes() -> None:
    tok, pos = _addition_rows()
    fig, given = new_figure(ncols=3)
    assert plot_embedding_addition(tok, pos, axes=given) is fig
    assert all(len(ax.images) == 1 for ax in given)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"position_rows": np.zeros((4, 4))}, r"one shape \(T, D\), got \(5, 4\) and \(4, 4\)"),
        ({"row_labels": ["a"]}, "row_labels must have 5 entries, got 1"),
        ({"highlight_rows": [5]}, r"highlight row 5 is out of range: rows are 0..4"),
    ],
)
def test_embedding_addition_refuses_bad_input(kwargs: dict, message: str) -> None:
    tok, pos = _addition_rows()
    args = {"token_rows": tok, "position_rows": pos, **kwargs}
    with pytest.raises(ValueError, match=message):
        plot_embedding_addition(**args)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_embedding_addition_refuses_a_value_no_colour_shows(bad: float) -> None:
    """One NaN or inf would leave the other values on a meaningless scale: refused, located."""
    tok, pos = _addition_rows()
    pos[3, 1] = bad
    with pytest.raises(
        ValueError,
        match=rf"position_rows holds 1 value\(s\) that are NaN or inf, the first {bad} at "
        r"index \(3, 1\): a colour scale needs finite values",
    ):
        plot_embedding_addition(tok, pos)
    tok[0, :2] = np.nan
    with pytest.raises(ValueError, match=r"token_rows holds 2 value\(s\) .* at index \(0, 0\)"):
        plot_embedding_addition(tok, tok)


def test_embedding_addition_refuses_wrong_number_of_axes() -> None:
    tok, pos = _addition_rows()
    _, two = new_figure(ncols=2)
    with pytest.raises(ValueError, match="axes must hold 3 axes, got 2"):
        plot_embedding_addition(tok, pos, axes=two)


# --- chapter 3: plot_parameter_asymmetry ---


def test_model_label() -> None:
    assert model_label("gpt2-small") == "GPT-2 small"
    assert model_label("gpt2-xl") == "GPT-2 XL"
    assert model_label("gpt3-2.7b") == "GPT-3 2.7B"


def test_parameter_asymmetry_bars_are_shares_on_a_linear_axis() -> None:
    """Each bar is one model, split into its shares: a segment's length is its share, so the
    position table of GPT-2 small takes 0.632% of its bar (a log axis of counts drew it at about
    29% of the whole model's bar), and models of any size fit (the log axis stopped at 1e12)."""
    fig = plot_parameter_asymmetry()
    _assert_fixed_opaque(fig, ASYMMETRY_FIGSIZE)
    (ax,) = fig.axes
    assert ax.get_xscale() == "linear"
    assert ax.get_xlim() == (0.0, 100.0)
    assert ax.get_xlabel() == "share of the model's parameters (%)"
    position, token, rest = ax.containers
    names = list(MODELS)
    for i, name in enumerate(names):
        counts = config_embedding_counts(MODELS[name])
        whole = transformer_parameter_count(MODELS[name])
        p, t, r = position[i], token[i], rest[i]
        assert p.get_x() == 0.0
        assert p.get_width() == pytest.approx(100 * counts.position / whole, rel=1e-12)
        assert t.get_x() == pytest.approx(p.get_width(), rel=1e-12)
        assert t.get_width() == pytest.approx(100 * counts.token / whole, rel=1e-12)
        assert r.get_x() + r.get_width() == pytest.approx(100.0, rel=1e-12)
        assert p.get_y() == t.get_y() == r.get_y()  # one bar per model
    assert position[0].get_width() == pytest.approx(0.632, abs=5e-4)  # GPT-2 small
    ticks = sorted(zip(ax.get_yticks(), ax.get_yticklabels(), strict=True))
    assert ticks[-1][1].get_text() == "GPT-2 small"  # the first model is at the top
    assert ticks[0][1].get_text() == "GPT-3 175B"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "position table (n_ctx x d)",
        "token table (vocab x d)",
        "the rest: blocks and final layer norm",
    ]
    shares = [t.get_text() for t in ax.texts]
    assert shares[0] == "positions 0.632%"  # GPT-2 small: 786,432 / 124,439,808
    assert shares[-1] == "positions 0.014%"  # GPT-3 175B
    assert len(shares) == len(MODELS)


def test_parameter_asymmetry_fits_a_model_of_any_size() -> None:
    """A tiny model and one far past 1e12 parameters both get a full bar of 100%."""
    tiny = dataclasses.replace(
        MODELS["gpt2-small"], vocab_size=10, max_seq_len=4, embed_dim=8, n_layers=1, n_heads=1
    )
    huge = dataclasses.replace(MODELS["gpt3-175b"], n_layers=9_600)
    assert transformer_parameter_count(huge) > 10**13
    fig = plot_parameter_asymmetry({"gpt2-small": tiny, "gpt3-175b": huge})
    (ax,) = fig.axes
    ends = [bar.get_x() + bar.get_width() for bar in ax.containers[-1]]
    assert ends == pytest.approx([100.0, 100.0], rel=1e-12)
    assert ax.get_xlim() == (0.0, 100.0)
    assert ax.containers[0][0].get_width() > 1  # the tiny model's positions are visible


def test_parameter_asymmetry_draws_on_given_axes_and_refuses_nothing() -> None:
    fig, ax = new_figure()
    subset = {"gpt2-small": MODELS["gpt2-small"]}
    assert plot_parameter_asymmetry(subset, ax=ax) is fig
    assert len(ax.containers[0]) == 1
    with pytest.raises(ValueError, match="models must name at least one model, got none"):
        plot_parameter_asymmetry({})


# --- chapter 4: plot_attention_memory ---


def test_attention_memory_lines_points_and_scales() -> None:
    lengths = [2**k for k in range(8, 18)]
    measured = {256: 400_000, 1024: 4_300_000}
    naive = {256: 1_600_000}
    gpus = {"small 16 GB": 16 * 2**30, "big 80 GB": 80 * 2**30}
    fig = plot_attention_memory(
        lengths, 12, 12, measured=measured, measured_naive=naive, memory_lines=gpus
    )
    _assert_fixed_opaque(fig, MEMORY_FIGSIZE)
    (ax,) = fig.axes
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert ax.get_ylabel() == "score memory (GiB, log scale)"
    assert "fp32" in ax.get_title()
    by_label = {line.get_label(): line for line in ax.get_lines()}
    all_layers = by_label["formula: all 12 layers (12 heads each)"]
    np.testing.assert_allclose(all_layers.get_xdata(), lengths)
    np.testing.assert_allclose(
        all_layers.get_ydata(), [attention_scores_bytes(n, 12, 12) / 2**30 for n in lengths]
    )
    one_head = by_label["formula: one head"]
    np.testing.assert_allclose(one_head.get_ydata()[0], 256**2 * 4 / 2**30)
    points = by_label["measured: one head, in-place softmax"]
    np.testing.assert_allclose(points.get_ydata(), np.array([400_000, 4_300_000]) / 2**30)
    assert points.get_linestyle() == "None"
    assert "measured: one head, naive softmax" in by_label
    dotted = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    np.testing.assert_allclose([line.get_ydata()[0] for line in dotted], [16, 80])
    labels = {t.get_text(): t for t in ax.texts}
    for name, size in gpus.items():  # each name on its own line, not one text for all
        assert labels[name].get_position()[1] == pytest.approx(size / 2**30)
        assert labels[name].get_transform() == ax.get_yaxis_transform()
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["256", "512", "1K"]


def test_attention_memory_fp16_without_measurements() -> None:
    fig, ax = new_figure()
    assert plot_attention_memory([1024, 2048], 12, 12, bytes_per_element=2, ax=ax) is fig
    assert len(ax.get_lines()) == 3
    assert "fp16" in ax.get_title()
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata()[0], 24 / 1024)  # 24 MiB a layer


def test_attention_memory_needs_two_lengths() -> None:
    with pytest.raises(ValueError, match="seq_lens must hold at least two lengths, got 1"):
        plot_attention_memory([1024], 12, 12)


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
    _assert_fixed_opaque(fig, FIGSIZE)
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
    styles = series_styles(28, LINE_DASHES)
    assert [colour for colour, _ in styles[:7]] == list(LINE_COLOURS)
    assert styles[0] == (PALETTE["blue"], "-") and styles[1] == (PALETTE["vermillion"], "-.")
    assert len({(colour, str(dash)) for colour, dash in styles}) == 28
    assert len(set(series_styles(35, LINE_MARKERS))) == 35
    assert PALETTE["yellow"] not in LINE_COLOURS  # too pale a line on white


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
        assert line.get_color() == BOUNDARY_STYLE["color"]
        assert line.get_path_effects()
    for axis in (heatmaps[0].xaxis, heatmaps[0].yaxis):
        np.testing.assert_array_equal(axis.get_ticklocs(), [0, 3, 6, 9])
    width, height = SIMILARITY_PANEL_SIZE
    _assert_fixed_opaque(fig, (2 * width + COLORBAR_WIDTH, height))
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


# --- the idiom: no pyplot, shown once in Jupyter, a clear error without matplotlib ---


def test_axes_on_a_subfigure_return_the_whole_figure() -> None:
    """What a notebook shows is the top-level figure, even when the axes sit in a subfigure."""
    fig = Figure()
    ax = fig.subfigures(1, 2)[1].subplots()
    assert plot_loss_curves({"run": [2.0, 1.0]}, ax=ax) is fig


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_plotting_does_not_import_pyplot() -> None:
    result = _run(
        "import sys, gptembed.plotting as p\n"
        "p.plot_loss_curves({'run': [2.0, 1.0]})\n"
        "print('matplotlib.pyplot' in sys.modules)"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


FORMATS = {None: "image/png", "svg": "image/svg+xml", "retina": "image/png"}
"""The figure format a reader may choose in IPython (None: the default), and what it shows."""


@pytest.mark.toolchain  # IPython comes with the book's tools, not with the package
def test_a_returned_figure_displays_in_ipython_in_the_format_the_reader_chose() -> None:
    """Jupyter shows a cell's value through IPython's formatters: the Figure needs one, PNG by
    default. Issue 25: the import used to reset the formats to PNG; a reader's choice is kept.
    One process imports gptembed.plotting afresh for each choice (its module code runs again,
    as in a new kernel), made before the import."""
    result = _run(
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from IPython.core.pylabtools import select_figure_formats\n"
        "shell = InteractiveShell.instance()\n"
        f"for chosen in {list(FORMATS)!r}:\n"
        "    if chosen:  # None: the first pass, nothing chosen yet\n"
        "        select_figure_formats(shell, {chosen})\n"
        "    sys.modules.pop('gptembed.plotting', None)\n"
        "    from gptembed.plotting import plot_loss_curves\n"
        "    fig = plot_loss_curves({'run': [2.0, 1.0]})\n"
        "    data, metadata = shell.display_formatter.format(fig)\n"
        "    print(chosen, sorted(data))\n"
        "    if chosen is None:  # the book's PNG: drawn at twice the size it is shown at\n"
        "        png = data['image/png']\n"
        "        drawn = int.from_bytes(png[16:20], 'big')  # the PNG's width\n"
        "        shown = metadata['image/png']\n"
        "        print(drawn // 2 == shown['width'], sorted(shown))\n"
        "        print(shown['width'], round(fig.get_size_inches()[0] * 100))"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"None {sorted(['image/png', 'text/plain'])}"
    assert lines[1] == "True ['width']"  # no height: a narrowed image keeps its proportions
    shown, figure = (int(n) for n in lines[2].split())
    assert abs(shown - figure) <= 30, (shown, figure)  # shown at 100 px an inch, tight box
    assert lines[3:] == [
        f"{chosen} {sorted([shown, 'text/plain'])}" for chosen, shown in list(FORMATS.items())[1:]
    ]


def test_without_matplotlib_the_error_says_to_install_the_plot_extra() -> None:
    result = _run(
        "import sys\n"
        "sys.modules['matplotlib'] = None  # as if it were not installed\n"
        "import gptembed\n"
        "try:\n"
        "    import gptembed.plotting\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "gptembed.plotting draws with matplotlib, which is not installed: install the plot "
        'extra with pip install "gptembed[plot]"'
    )


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


# The extrapolation figure: one panel per task, one line per model, the trained length marked.


def test_one_panel_per_task_and_one_line_per_model_on_a_log_scale() -> None:
    curves = {"a": [np.nan, 0.5, 1e-6, 2.0, 4.0, 8.0, 9.0, 9.0], "b": np.full(8, 0.1)}
    fig = plot_loss_by_position({"task one": curves, "task two": curves}, train_len=2)
    assert isinstance(fig, Figure)
    width, height = EXTRAPOLATION_PANEL_SIZE  # one panel under the other
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


# Chapter 9's figures and analysis helpers: principal components, attention by lag, the
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
    width, height = PCA_PANEL_SIZE
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


# The concept diagrams: each draws the package's own arithmetic, says the same in words, refuses
# what it cannot draw, and keeps its text legible at the book's page width.

_WORDS = ["the", "cat", "sat", "on", "mat", "."]
_IDS = [0, 1, 2, 3, 0]  # "the cat sat on the"
_BATCH_IDS = [[50256, 50256, 464, 3797, 3332], [464, 3290, 3332, 319, 262]]
_BATCH_MASK = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]


def _toy_layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(vocab_size=6, max_seq_len=5, embed_dim=4, seed=10)


def _images(fig: Figure) -> dict[str, AxesImage]:
    return {image.get_label(): image for ax in fig.axes for image in ax.get_images()}


def _texts(fig: Figure) -> list[str]:
    return [text.get_text() for ax in fig.axes for text in ax.texts]


def _arrow_tips(ax: Axes) -> dict[str, tuple[float, float]]:
    """Each labelled arrow (an annotation) of ``ax``: its label and tip."""
    return {t.get_label(): t.xy for t in ax.texts if isinstance(t, Annotation)}


_DIAGRAMS = {
    "embedding sum": lambda: plot_embedding_sum(
        _toy_layer().token_embeddings, _toy_layer().position_embeddings, _IDS, tokens=_WORDS
    ),
    "rotary": lambda: plot_rotary_rotation([1.0, 0.2], [0.6, 0.7]),
    "rotary, three pairs": lambda: plot_rotary_rotation(
        [0.3, -1.0, 0.5, 0.5],
        [1.0, 0.4, 0.2, 0.1],
        base=100.0,
        pair=1,
        positions=range(8),
        distance_pairs=[(2, 0), (7, 5), (9, 0)],
    ),
    "alibi": lambda: plot_alibi_bias(4, 8),
    "kv cache": lambda: plot_kv_cache(6, prompt_len=3, window=4),
    "padded batch": lambda: plot_padded_batch(_BATCH_IDS, _BATCH_MASK),
}


@pytest.mark.parametrize("name", list(_DIAGRAMS))
def test_every_diagram_is_legible_at_page_width_and_fits_its_figure(name: str) -> None:
    """Text at least MIN_TEXT_PX as displayed, no label outside the figure (a PNG saved with a
    tight box would grow past the page and shrink), page width at most, opaque white."""
    fig = _DIAGRAMS[name]()
    assert smallest_text_px(fig) >= MIN_TEXT_PX
    width, height = fig.get_size_inches()
    box = fig.get_tightbbox()  # inches, laid out (smallest_text_px drew it)
    assert width <= DIAGRAM_WIDTH
    assert box.x0 >= -0.01 and box.y0 >= -0.01, (name, box)
    assert box.x1 <= width + 0.01 and box.y1 <= height + 0.01, (name, box, width, height)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)


def test_smallest_text_px_counts_drawn_text_as_the_page_shows_it() -> None:
    fig, ax = new_figure((6.0, 3.0))
    fig.set_layout_engine("none")  # nothing to lay out: measured without a draw
    ax.set_title("title", fontsize=14)
    ax.tick_params(labelsize=7.2)  # 7.2 pt at 100 pixels an inch: 10 px
    assert smallest_text_px(fig) == pytest.approx(10.0)
    ax.set_axis_off()  # the tick labels are no longer drawn
    assert smallest_text_px(fig) == pytest.approx(14 * 100 / 72)
    wide, wide_ax = new_figure((13.44, 3.0))  # about twice the page: shown at half size
    wide_ax.set_axis_off()  # (laid out by constrained layout: measured after a draw)
    wide_ax.set_title("title", fontsize=14)
    assert smallest_text_px(wide) == pytest.approx(14 * 100 / 72 / 2, rel=0.05)
    wide_ax.set_title("")
    with pytest.raises(ValueError, match="draws no text"):
        smallest_text_px(wide)


def test_embedding_sum_draws_both_tables_the_picked_rows_and_the_layers_sum() -> None:
    layer = _toy_layer()
    wte, wpe = (t.astype(np.float64) for t in (layer.token_embeddings, layer.position_embeddings))
    fig = plot_embedding_sum(layer.token_embeddings, layer.position_embeddings, _IDS, tokens=_WORDS)
    images = _images(fig)
    drawn = {label: np.asarray(image.get_array()) for label, image in images.items()}
    np.testing.assert_array_equal(drawn["token table"], wte)
    np.testing.assert_array_equal(drawn["position table"], wpe)
    np.testing.assert_array_equal(drawn["token rows"], wte[_IDS])
    np.testing.assert_array_equal(drawn["position rows"], wpe[:5])
    np.testing.assert_allclose(drawn["sum"], wte[_IDS] + wpe[:5], rtol=0, atol=1e-15)
    np.testing.assert_allclose(drawn["sum"], layer.forward(_IDS), rtol=1e-6)
    limits = {image.get_clim() for image in images.values()}
    (low, high), *others = limits
    assert not others and low == -high == -np.abs(drawn["sum"]).max()  # one centred scale
    texts = _texts(fig)
    assert "t = 0, 4" in texts and "t = 1" in texts  # "the" is picked at 0 and 4
    labels = [t for t in texts if t[:1].isdigit() and t.split(" ", 1)[-1] in _WORDS]
    assert labels == ["0 the", "1 cat", "2 sat", "3 on", "4 the"]  # position and token
    assert "pick rows 0 to 4" in texts


def test_embedding_sum_fades_the_rows_a_short_sequence_skips() -> None:
    """A 2-token sequence of a 5-row position table: rows 2..4 faded, and so are 4 token rows."""
    layer = _toy_layer()
    fig = plot_embedding_sum(layer.token_embeddings, layer.position_embeddings, [4, 5])
    ax = fig.axes[0]
    veils = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_alpha() == 0.7]
    assert len(veils) == 4 + 1  # token rows 0..3 one by one, position rows 2..4 as one
    assert "pick rows 0 and 1" in _texts(fig)
    assert ["id 4", "id 5"] == [t.split(" ", 1)[1] for t in _texts(fig) if t[:2] in ("0 ", "1 ")]


def test_embedding_sum_refuses_bad_input() -> None:
    wte, wpe = np.zeros((6, 4)), np.zeros((5, 4))
    with pytest.raises(ValueError, match=r"one width D, got shapes \(6, 4\) and \(5, 3\)"):
        plot_embedding_sum(wte, np.zeros((5, 3)), [0])
    with pytest.raises(ValueError, match=r"token_table holds nan at index \(1, 2\)"):
        bad = wte.copy()
        bad[1, 2] = np.nan
        plot_embedding_sum(bad, wpe, [0])
    with pytest.raises(ValueError, match=r"token id 6 at index \(1,\) is out of range"):
        plot_embedding_sum(wte, wpe, [0, 6])
    with pytest.raises(ValueError, match="sequence length 6 at start_pos 0 exceeds max_seq_len 5"):
        plot_embedding_sum(wte, wpe, [0] * 6)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(T,\) with T >= 1"):
        plot_embedding_sum(wte, wpe, [[0, 1]])
    with pytest.raises(TypeError, match="token_ids must be integers"):
        plot_embedding_sum(wte, wpe, [0.0])
    with pytest.raises(
        ValueError, match="tokens must name each of the token table's 6 rows, got 2"
    ):
        describe_embedding_sum(wte, wpe, [0], tokens=["a", "b"])
    with pytest.raises(ValueError, match=r"shape \(50, 4\): a diagram draws at most 16 rows"):
        plot_embedding_sum(np.zeros((50, 4)), wpe, [0])


def test_embedding_sum_described_in_words() -> None:
    layer = _toy_layer()
    text = describe_embedding_sum(
        layer.token_embeddings, layer.position_embeddings, _IDS, tokens=_WORDS
    )
    assert "\n" not in text
    assert "6 rows (one per token: 'the', 'cat', 'sat', 'on', 'mat' and '.') by 4 columns" in text
    assert "The sequence 'the' 'cat' 'sat' 'on' 'the' (ids 0, 1, 2, 3 and 0)" in text
    assert text.endswith("The token 'the' sits at positions 0 and 4: the same token row each "
                         "time, but different rows of x.")  # fmt: skip
    blank = describe_embedding_sum(np.ones((2, 2)), np.ones((2, 2)), [1], tokens="a\n")
    assert "one per token: 'a' and '\\n'" in blank  # a blank token is written visibly
    fig = plot_embedding_sum(np.ones((2, 2)), np.ones((2, 2)), [1], tokens="a\n")
    assert "0 '\\n'" in _texts(fig)


def test_rotary_rotation_draws_rotates_vectors_and_the_angle_depends_on_distance_only() -> None:
    rng = np.random.default_rng(3)
    query, key = rng.normal(size=8), rng.normal(size=8)
    pairs = ((2, 0), (7, 5), (4, 0))
    fig = plot_rotary_rotation(query, key, base=100.0, pair=1, positions=(0, 2, 5),
                               distance_pairs=pairs)  # fmt: skip
    turning, *scenes = fig.axes
    assert len(scenes) == 3 and tuple(fig.get_size_inches()) == (7.0, 3.3)
    tips = _arrow_tips(turning)
    for t in (0, 2, 5):
        expected = rotate(query[None, :], 100.0, positions=[t])[0, 2:4]
        np.testing.assert_allclose(tips[f"query at {t}"], expected, rtol=1e-12)
    angles, products = [], []
    for ax, (i, j) in zip(scenes, pairs, strict=True):
        tips = _arrow_tips(ax)
        q = rotate(query[None, :], 100.0, positions=[i])[0, 2:4]
        k = rotate(key[None, :], 100.0, positions=[j])[0, 2:4]
        np.testing.assert_allclose(tips[f"query at {i}"], q, rtol=1e-12)
        np.testing.assert_allclose(tips[f"key at {j}"], k, rtol=1e-12)
        angles.append(ax.get_title().rsplit("angle ", 1)[1])
        products.append(ax.get_xlabel())
        assert ax.get_xlabel() == f"the pair's q·k = {q @ k:.2f}"  # H = 8: 4 pairs
    assert angles[0] == angles[1] != angles[2] and products[0] == products[1] != products[2]
    theta = 100.0 ** (-2 / 8)
    assert turning.get_title().endswith(f"θ = {np.degrees(theta):.3g}° a position")
    assert {"θ", "2θ", "5θ"} - set(_texts(fig)) == {"θ"}  # arcs for positions 2 and 5 only


def test_rotary_rotation_without_position_0_draws_the_unturned_query() -> None:
    fig = plot_rotary_rotation([1.0, 0.0], [0.0, 1.0], positions=[1, 3], distance_pairs=[(3, 1)])
    tips = _arrow_tips(fig.axes[0])
    assert tips["query unturned"] == (1.0, 0.0) and set(tips) == {
        "query unturned", "query at 1", "query at 3",
    }  # fmt: skip
    assert len(fig.axes) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"query": [1.0, 0.0, 1.0]}, ValueError, r"one even length H >= 2, got shapes \(3,\)"),
        ({"key": [0.0, 0.0]}, ValueError, r"key's pair 0 \(dimensions 0 and 1\) is zero"),
        ({"pair": 1}, ValueError, r"pair must be in \[0, 0\] for H = 2, got 1"),
        ({"base": 1.0}, ValueError, "base must be a finite number > 1, got 1.0"),
        (
            {"positions": [0, -1]},
            ValueError,
            r"positions must be 1 to 8 integers >= 0, got \[0, -1",
        ),
        ({"positions": range(9)}, ValueError, "positions must be 1 to 8 integers"),
        ({"positions": [0.5]}, TypeError, "positions must be integers"),
        ({"distance_pairs": []}, ValueError, r"distance_pairs must hold 1 to 3 pairs \(i, j\)"),
        ({"distance_pairs": [(1, 2, 3)]}, ValueError, "must hold 1 to 3 pairs"),
        ({"distance_pairs": [(1, -2)]}, ValueError, "j must be an integer >= 0, got -2"),
        ({"distance_pairs": [3, 1]}, TypeError, r"must hold pairs \(i, j\), got \[3, 1\]"),
    ],
)
def test_rotary_rotation_refuses_bad_input(kwargs: dict, error: type, message: str) -> None:
    call = {"query": [1.0, 0.0], "key": [0.0, 1.0], **kwargs}
    with pytest.raises(error, match=message):
        plot_rotary_rotation(**call)
    with pytest.raises(error, match=message):
        describe_rotary_rotation(**call)


def test_rotary_rotation_checks_its_axes_and_says_the_same_in_words() -> None:
    _, axes = new_figure(ncols=2)
    with pytest.raises(ValueError, match="axes must hold 3 axes, got 2"):
        plot_rotary_rotation([1.0, 0.0], [0.0, 1.0], axes=axes)
    text = describe_rotary_rotation([1.0, 0.0], [0.5, 0.5])
    assert "\n" not in text and "θ = 1 rad (57.3°)" in text
    assert "at (i, j) = (2, 0), distance 2, the angle is 70°" in text
    assert "at (i, j) = (7, 5), distance 2, the angle is 70°" in text
    assert text.endswith("so only i \u2212 j counts.")
    other = describe_rotary_rotation([1.0, 0.0], [0.5, 0.5], distance_pairs=[(2, 0), (3, 0)])
    assert "only i" not in other  # two distances: no claim that they match


def test_alibi_bias_draws_linear_bias_at_each_heads_slope_with_the_future_masked() -> None:
    fig = plot_alibi_bias(6, 5)
    images = fig.axes[0].get_images()
    slopes = alibi_slopes(6)
    assert [image.get_label() for image in images] == [
        "head 1: m = 1/4", "head 2: m = 1/16", "head 3: m = 1/64", "head 4: m = 1/256",
        "head 5: m = 1/2", "head 6: m = 1/8",
    ]  # fmt: skip
    future = np.triu(np.ones((5, 5), dtype=bool), k=1)
    for image, slope in zip(images, slopes, strict=True):
        drawn = image.get_array()
        np.testing.assert_array_equal(drawn.data, linear_bias(5, slope))
        np.testing.assert_array_equal(drawn.mask, future)
        assert image.get_clim() == (-slopes.max() * 4, 0.0)  # one scale: the steepest head's
    titles = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("head")]
    assert titles == [image.get_label() for image in images]
    greys = [p for p in fig.axes[0].patches if p.get_zorder() == -1]  # under the masked future
    assert len(greys) == 6 and {to_rgba(p.get_facecolor()) for p in greys} == {to_rgba("#d9d9d9")}


def test_alibi_bias_refuses_bad_input_and_says_the_same_in_words() -> None:
    for call in (plot_alibi_bias, describe_alibi_bias):
        with pytest.raises(ValueError, match="at most 8 heads of 16 positions"):
            call(9, 4)
        with pytest.raises(ValueError, match="got n_heads 2 and seq_len 17"):
            call(2, 17)
        with pytest.raises(ValueError, match="n_heads must be an integer >= 1, got 0"):
            call(0, 4)
    fig, ax = new_figure()
    assert plot_alibi_bias(2, 4, ax=ax) is fig
    text = describe_alibi_bias(4, 8)
    assert "\n" not in text and "The slopes are 1/4, 1/16, 1/64 and 1/256" in text
    assert "gets \u22121.75 from the steepest head (head 1) but only \u22120.0273 from " in text
    assert "the shallowest (head 4)" in text
    assert "\u22122 from the steepest head (head 5)" in describe_alibi_bias(6, 5)
    assert describe_alibi_bias(1, 1).endswith(
        "with one position there is no distance, and the bias is 0."
    )


def test_kv_cache_gives_each_new_token_the_cache_length_as_its_position() -> None:
    """The start_pos the figure gives each step is the length of the package's KVCache before
    that step (attention_model.cached_forward run on a tiny model), and the cache grows by one."""
    fig = plot_kv_cache(4, prompt_len=3)
    states = np.asarray(_images(fig)["cache"].get_array())
    assert states.shape == (5, 7)
    model = init_attention_model(AttentionConfig(vocab_size=4, seq_len=7, embed_dim=4, head_dim=2))
    _, cache = cached_forward(model, [[1, 2, 3]])
    for step in range(1, 5):
        row = states[step]
        start = int(np.flatnonzero(row == KV_NEW)[0])
        assert start == cache.length == int((row == KV_CACHED).sum())
        assert (row[start + 1 :] == KV_EMPTY).all()
        _, cache = cached_forward(model, [[0]], cache)
    np.testing.assert_array_equal(states[0], [KV_NEW] * 3 + [KV_EMPTY] * 4)
    bold = [t.get_text() for t in fig.axes[0].texts if t.get_fontweight() == "bold"]
    assert bold == ["0", "1", "2", "3", "4", "5", "6"]  # each new token's position id
    assert KV_DROPPED not in states


def test_kv_cache_window_keeps_the_last_keys_while_positions_go_on() -> None:
    """As gpt.forward's window: the newest position i keeps keys j with i - j < window."""
    states = np.asarray(_images(plot_kv_cache(6, prompt_len=3, window=4))["cache"].get_array())
    for step, row in enumerate(states):
        newest = 2 if step == 0 else 2 + step
        j = np.arange(states.shape[1])
        kept = (j <= newest) & (newest - j < 4)
        np.testing.assert_array_equal(np.isin(row, (KV_CACHED, KV_NEW)), kept)
        np.testing.assert_array_equal(row == KV_DROPPED, (j <= newest) & ~kept)
    text = describe_kv_cache(6, prompt_len=3, window=4)
    assert "from step 2 on, the oldest key is dropped" in text
    assert "the cache stays at 4 keys while start_pos goes on counting, to 8." in text
    assert "(3, 4, 5, 6, 7 and 8)" in text


def test_kv_cache_refuses_bad_input() -> None:
    for call in (plot_kv_cache, describe_kv_cache):
        with pytest.raises(ValueError, match="window must hold the prompt, >= prompt_len 3, got 2"):
            call(2, prompt_len=3, window=2)
        with pytest.raises(ValueError, match=r"got prompt_len 10 \+ n_steps 7 = 17"):
            call(7, prompt_len=10)
        with pytest.raises(ValueError, match="n_steps must be an integer >= 1, got 0"):
            call(0)
        with pytest.raises(TypeError, match=r"window must be an integer >= 1, got 2\.5"):
            call(2, window=2.5)  # type: ignore[arg-type]
    assert describe_kv_cache(1, prompt_len=1).startswith(
        "A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the prompt's "
        "1 token at position 0 and caches its key and value. At the next step one new token"
    )


def test_padded_batch_draws_ids_mask_and_the_position_ids_of_the_mask() -> None:
    ids = np.array([[9, 9, 5, 7], [4, 6, 5, 7], [9, 9, 9, 3]])
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1]])
    fig = plot_padded_batch(ids, mask)
    images = _images(fig)
    assert list(images) == ["token ids", "attention mask", "position ids"]
    for label, expected in (
        ("token ids", ids),
        ("attention mask", mask),
        ("position ids", position_ids_from_mask(mask)),
    ):
        drawn = images[label].get_array()
        np.testing.assert_array_equal(drawn.data, expected)
        np.testing.assert_array_equal(drawn.mask, mask == 0)  # padding greyed in every grid
    np.testing.assert_array_equal(position_ids_from_mask(mask)[mask == 0], PAD_POSITION)
    cells = [t for t in fig.axes[0].texts if t.get_text().isdigit()]
    assert [t.get_text() for t in cells[:4]] == ["9", "9", "5", "7"]
    assert [to_rgba(t.get_color()) == to_rgba("black") for t in cells[:4]] == [
        False, False, True, True,
    ]  # fmt: skip
    text = describe_padded_batch(ids, mask)
    assert "Sequence 0 is left-padded with 2 slots: its positions read 0, 0, 0, 1." in text
    assert "Sequence 1 has no padding: its positions read 0, 1, 2, 3." in text
    assert "Sequence 2 is left-padded with 3 slots" in text
    others = describe_padded_batch(
        [[1, 2, 0], [0, 0, 0], [1, 0, 2]], [[1, 1, 0], [0] * 3, [1, 0, 1]]
    )
    assert "Sequence 0 is right-padded with 1 slot: its positions read 0, 1, 0." in others
    assert "Sequence 1 is all padding: its positions read 0, 0, 0." in others
    assert "Sequence 2 is padded with 1 slot: its positions read 0, 0, 1." in others


def test_padded_batch_refuses_bad_input() -> None:
    for call in (plot_padded_batch, describe_padded_batch):
        with pytest.raises(ValueError, match=r"attention_mask must have the ids' shape \(1, 3\)"):
            call([[1, 2, 3]], [[1, 1]])
        with pytest.raises(ValueError, match=r"attention_mask value 2 at index \(0, 1\)"):
            call([[1, 2]], [[1, 2]])
        with pytest.raises(TypeError, match="token_ids must be integers"):
            call([[1.0, 2.0]], [[1, 1]])
        with pytest.raises(ValueError, match=r"token_ids must have shape \(B, T\)"):
            call([1, 2], [1, 1])
        with pytest.raises(ValueError, match="token ids must be >= 0, got -1"):
            call([[-1, 2]], [[1, 1]])
        with pytest.raises(ValueError, match=r"at most 8 sequences of 12 slots.*\(1, 13\)"):
            call([[1] * 13], [[1] * 13])


def test_diagrams_are_deterministic() -> None:
    """Two calls draw the same picture, to the byte (no randomness, no hidden state)."""
    pictures = []
    for _ in range(2):
        buffer = io.BytesIO()
        plot_kv_cache(2, prompt_len=2).savefig(buffer, format="png", dpi=20)
        pictures.append(buffer.getvalue())
    assert pictures[0] == pictures[1]


def _table(rows: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.02, (rows, dim))


_RAMP = np.linspace(2.0, 0.5, 64)
_DATA_FIGURES = {  # each data plot at about the size a chapter draws it
    "embedding addition": lambda: plot_embedding_addition(
        _table(5, 8), _table(5, 8, 1), row_labels=[f"{t} w{t}" for t in range(5)]
    ),
    "parameter asymmetry": lambda: plot_parameter_asymmetry(MODELS),
    "attention memory": lambda: plot_attention_memory([2**p for p in range(7, 15)], 12, 12),
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
    "context costs": lambda: plot_context_costs("gpt2-small", [2**p for p in range(8, 18)]),
    "training curve": lambda: plot_training_curve(_RAMP, np.arange(0, 64, 8), _RAMP[::8]),
    "principal components": lambda: plot_principal_components(
        principal_components(sinusoidal_table(32, 16)), n_components=3
    ),
    "attention by lag": lambda: plot_attention_by_lag(
        {f"head {h}": np.abs(_table(1, 16, h))[0] for h in range(4)}
    ),
}


@pytest.mark.parametrize("name", list(_DATA_FIGURES))
def test_every_data_figure_is_legible_at_page_width(name: str) -> None:
    """Text at least MIN_TEXT_PX as the page shows it, and no wider than the page: a figure of
    several panels wraps them into rows rather than shrink them to a strip (the learner measured
    labels 5 px tall on two multi-panel heat maps)."""
    fig = _DATA_FIGURES[name]()
    assert smallest_text_px(fig) >= MIN_TEXT_PX, name
    assert fig.get_size_inches()[0] <= FIGSIZE[0], name


@pytest.mark.parametrize(
    ("n_panels", "width", "extra", "grid"),
    [
        (1, 7.0, 0.0, (1, 1)),
        (2, 7.0, 0.0, (2, 1)),
        (4, 3.0, 1.0, (2, 2)),
        (3, 3.0, 1.0, (2, 2)),
        (4, 2.6, 1.2, (2, 2)),
        (3, 2.0, 0.9, (1, 3)),
        (2, 9.0, 0.0, (2, 1)),
    ],
)
def test_panels_wrap_into_rows_that_fit_the_page(
    n_panels: int, width: float, extra: float, grid: tuple[int, int]
) -> None:
    assert panel_grid(n_panels, width, extra) == grid
    columns = grid[1]
    assert columns * width + extra <= FIGSIZE[0] or columns == 1


def test_a_short_last_row_leaves_no_empty_panel() -> None:
    fig = plot_position_similarity({f"t{k}": _table(8, seed=k) for k in range(3)})
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 3 and len(fig.axes) == 4  # three heat maps and the colour bar
