"""Figures: the right artists and labels, a fixed size, an opaque background, no show()."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from gptembed.plotting import (
    ADDITION_FIGSIZE,
    DIVERGING_CMAP,
    PALETTE,
    plot_embedding_addition,
)


@pytest.fixture(autouse=True)
def _close_figures_and_forbid_show(monkeypatch: pytest.MonkeyPatch):
    def no_show(*args: object, **kwargs: object) -> None:
        raise AssertionError("plotting functions must not call plt.show()")

    monkeypatch.setattr(plt, "show", no_show)
    yield
    plt.close("all")


def _addition_rows() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(0, 0.02, (5, 4)), rng.normal(0, 0.02, (5, 4))


def test_embedding_addition_draws_three_heatmaps_on_one_centred_scale() -> None:
    tok, pos = _addition_rows()
    fig, axes = plot_embedding_addition(tok, pos)
    assert len(axes) == 3
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
    _, axes = plot_embedding_addition(tok, pos, row_labels=labels, highlight_rows=[0, 4])
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
    fig, _ = plot_embedding_addition(tok, pos)
    assert tuple(fig.get_size_inches()) == pytest.approx(ADDITION_FIGSIZE)
    face = fig.get_facecolor()
    assert face[3] == 1.0 and face[:3] == (1.0, 1.0, 1.0)


def test_embedding_addition_draws_on_given_axes() -> None:
    tok, pos = _addition_rows()
    fig, given = plt.subplots(1, 3)
    got_fig, got_axes = plot_embedding_addition(tok, pos, axes=given)
    assert got_fig is fig
    assert list(got_axes) == list(given)


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


def test_embedding_addition_refuses_wrong_number_of_axes() -> None:
    tok, pos = _addition_rows()
    _, two = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="axes must hold 3 axes, got 2"):
        plot_embedding_addition(tok, pos, axes=two)
