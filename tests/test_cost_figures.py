"""The cost figures: each model's parameters as shares, attention's memory, a context's bytes."""

from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from gptembed import (
    MODELS,
    attention_scores_bytes,
    config_embedding_counts,
    model_label,
    transformer_parameter_count,
)
from gptembed._figures import (
    new_figure,
)
from gptembed.cost_figures import (
    _ASYMMETRY_FIGSIZE,
    _MEMORY_FIGSIZE,
    plot_attention_memory,
    plot_context_costs,
    plot_parameter_asymmetry,
)
from tests.figure_checks import (
    assert_fixed_opaque,
    assert_legible_figure,
)

pytestmark = pytest.mark.usefixtures("no_pyplot_figures")


# --- the intro: plot_parameter_asymmetry ---


def test_model_label() -> None:
    assert model_label("gpt2-small") == "GPT-2 small"
    assert model_label("gpt2-xl") == "GPT-2 XL"
    assert model_label("gpt3-2.7b") == "GPT-3 2.7B"


def test_parameter_asymmetry_bars_are_shares_on_a_linear_axis() -> None:
    """Each bar is one model, split into its shares: a segment's length is its share, so the
    position table of GPT-2 small takes 0.632% of its bar (a log axis of counts drew it at about
    29% of the whole model's bar), and models of any size fit (the log axis stopped at 1e12)."""
    fig = plot_parameter_asymmetry()
    assert_fixed_opaque(fig, _ASYMMETRY_FIGSIZE)
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
    assert_fixed_opaque(fig, _MEMORY_FIGSIZE)
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
    assert tuple(fig.get_size_inches()) == _MEMORY_FIGSIZE
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


_COST_FIGURES = {  # each at about the size a chapter draws it
    "parameter asymmetry": lambda: plot_parameter_asymmetry(MODELS),
    "attention memory": lambda: plot_attention_memory([2**p for p in range(7, 15)], 12, 12),
    "context costs": lambda: plot_context_costs("gpt2-small", [2**p for p in range(8, 18)]),
}


@pytest.mark.parametrize("name", list(_COST_FIGURES))
def test_every_cost_figure_is_legible_at_page_width(name: str) -> None:
    assert_legible_figure(_COST_FIGURES[name](), name)
