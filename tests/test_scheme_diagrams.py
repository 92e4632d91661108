"""The sinusoidal clocks, rotary (its turn and its wavelengths) and ALiBi diagrams: each draws
the package's own arithmetic, says the same in words, refuses what it cannot draw, and keeps its
text legible at the book's page width."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.text import Annotation

from gptembed._figures import (
    DISPLAY_DPI,
    MIN_TEXT_PX,
    PAGE_WIDTH_PX,
    new_figure,
    smallest_text_px,
)
from gptembed.positions import (
    alibi_slopes,
    linear_bias,
    ntk_base,
    rotate,
    sinusoidal_table,
)
from gptembed.scheme_diagrams import (
    describe_alibi_bias,
    describe_rotary_rotation,
    describe_rotary_wavelengths,
    describe_sinusoidal_clocks,
    plot_alibi_bias,
    plot_rotary_rotation,
    plot_rotary_wavelengths,
    plot_sinusoidal_clocks,
)
from tests.figure_checks import (
    assert_legible_diagram,
    texts_of,
)

pytestmark = pytest.mark.usefixtures("no_pyplot_figures")


def _digits(ax: Axes) -> dict[tuple[int, int], str]:
    """Each text written in a cell of ``ax``'s image: ``(row, column)`` and its text."""
    return {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }


@pytest.mark.parametrize(("n_positions", "embed_dim", "n_bits", "base"), [
    (64, 32, 4, 10000.0), (16, 8, 2, 100.0), (1, 2, 1, 10000.0),
])  # fmt: skip
def test_sinusoidal_clocks_draw_the_table_beside_the_bits_of_a_counter(
    n_positions: int, embed_dim: int, n_bits: int, base: float
) -> None:
    fig = plot_sinusoidal_clocks(n_positions, embed_dim, n_bits, base=base)
    heat, counter = fig.axes[:2]
    (table,), (bits,) = heat.get_images(), counter.get_images()
    assert (table.get_label(), bits.get_label()) == ("sinusoidal table", "binary counter")
    np.testing.assert_array_equal(table.get_array(), sinusoidal_table(n_positions, embed_dim, base))
    # row t holds t's binary digits, lowest first: written out, not computed as the module does
    expected = [[int(d) for d in reversed(f"{t:0{n_bits}b}")] for t in range(2**n_bits)]
    np.testing.assert_array_equal(bits.get_array(), expected)
    digits = _digits(counter)
    assert digits == {
        (t, b): str(bit) for t, row in enumerate(expected) for b, bit in enumerate(row)
    }
    for image in (table, bits):  # one scale: a bit of 1 is as red as a table value of 1
        assert image.get_clim() == (-1.0, 1.0) and image.get_cmap().name == "RdBu_r"
        assert image.origin == "upper"  # position 0 at the top of both
    assert [t.get_text() for t in counter.get_xticklabels()] == [str(2**b) for b in range(n_bits)]
    assert heat.get_title() == f"sinusoidal table, D = {embed_dim}"


def test_sinusoidal_clocks_refuse_bad_input_and_check_their_axes() -> None:
    bad = [
        ({"n_positions": 257}, ValueError, r"n_positions must be in \[1, 256\], got 257"),
        ({"embed_dim": 66}, ValueError, r"embed_dim must be in \[2, 64\], got 66"),
        ({"embed_dim": 7}, ValueError, "embed_dim must be even"),
        ({"n_bits": 5}, ValueError, r"n_bits must be in \[1, 4\], got 5"),
        ({"n_bits": 2.0}, TypeError, "n_bits must be an integer"),
        ({"base": 1.0}, ValueError, "base must be a finite number > 1, got 1.0"),
    ]
    for kwargs, error, message in bad:
        for call in (plot_sinusoidal_clocks, describe_sinusoidal_clocks):
            with pytest.raises(error, match=message):
                call(**kwargs)
    _, axes = new_figure(ncols=3)
    with pytest.raises(ValueError, match="axes must hold 2 axes, got 3"):
        plot_sinusoidal_clocks(axes=axes)
    fig, two = new_figure(ncols=2)
    assert plot_sinusoidal_clocks(axes=two) is fig


def test_sinusoidal_clocks_say_the_same_in_words() -> None:
    text = describe_sinusoidal_clocks()
    assert "\n" not in text and "positions 0 to 63 (down) and its 32 dimensions" in text
    # pair p repeats every 2 pi 10000**(2p / 32) positions: 6.28, then 1.78 times slower each
    assert "the first pair repeats every 6.28 positions, each next pair 1.78 times" in text
    assert "the last every 35,333;" in text  # 2 pi 10000**(30/32)
    assert "only the first 5 turn fully within the 64 positions drawn" in text  # 63 <= 64 < 112
    assert "numbers 0 to 15 in binary" in text
    assert "the lowest bit flips every row, the next ones every 2, 4 and 8 rows" in text
    small = describe_sinusoidal_clocks(4, 2, 1)
    assert "its one pair repeats every 6.28 positions; no pair turns fully" in small
    assert "its one bit flips every row" in small
    assert "every pair turns fully" in describe_sinusoidal_clocks(8, 2, 2)


def _arrow_tips(ax: Axes) -> dict[str, tuple[float, float]]:
    """Each labelled arrow (an annotation) of ``ax``: its label and tip."""
    return {t.get_label(): t.xy for t in ax.texts if isinstance(t, Annotation)}


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
    assert {"θ", "2θ", "5θ"} - set(texts_of(fig)) == {"θ"}  # arcs for positions 2 and 5 only


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


def test_rotary_wavelengths_draw_each_pairs_turn_against_the_lengths() -> None:
    """Each pair's wavelength, 2 pi / theta_i, computed here from the formula, beside the
    lengths T, 2T and 4T; a second base's wavelengths beside the first's."""
    scaled = ntk_base(10000.0, 4.0, 16)
    fig = plot_rotary_wavelengths(16, 10000.0, 64, scaled_base=scaled)
    (ax,) = fig.axes
    first, second, *lengths = ax.get_lines()
    pairs = np.arange(8)
    assert first.get_label() == "base 10,000" and second.get_label() == "base 48,761"
    np.testing.assert_allclose(first.get_xdata(), pairs - 0.15)
    np.testing.assert_allclose(second.get_xdata(), pairs + 0.15)
    np.testing.assert_allclose(first.get_ydata(), 2 * np.pi * 10000.0 ** (pairs / 8))
    np.testing.assert_allclose(second.get_ydata(), 2 * np.pi * scaled ** (pairs / 8))
    assert [(line.get_label(), line.get_ydata()[0]) for line in lengths] == [
        ("T = 64", 64), ("2T = 128", 128), ("4T = 256", 256),
    ]  # fmt: skip
    assert {"T = 64", "2T = 128", "4T = 256"} <= set(texts_of(fig))
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["base 10,000", "base 48,761"]
    alone = plot_rotary_wavelengths(8, 100.0, 16).axes[0].get_lines()
    assert len(alone) == 4 and alone[0].get_label() == "base 100"
    np.testing.assert_allclose(alone[0].get_xdata(), np.arange(4))  # nothing beside it


def test_rotary_wavelengths_say_which_pairs_meet_new_angles_past_t() -> None:
    text = describe_rotary_wavelengths()
    assert "\n" not in text
    assert "6.28, 19.9, 62.8, 199, 628, 1,987, 6,283 and 19,869 positions" in text
    assert "Pairs 0 to 2 turn full circles within T; pairs 3 to 7 turn only part" in text
    scaled = describe_rotary_wavelengths(scaled_base=ntk_base(10000.0, 4.0, 16))
    assert scaled.startswith(text)
    assert "base 48,761: pair 0 keeps its 6.28, and each slower pair's grows" in scaled
    assert "the slowest's 4 times, " in scaled
    assert "to 79,477; 3 of 8 turn full circles within 4T." in scaled
    assert "Every pair turns full circles within T" in describe_rotary_wavelengths(4, 2.0, 64)
    assert "No pair turns a full circle within T" in describe_rotary_wavelengths(2, 10.0, 6)
    assert "its one rotary pair" in describe_rotary_wavelengths(2)
    for kwargs, error, message in [
        ({"head_dim": 7}, ValueError, "head_dim must be even"),
        ({"head_dim": 66}, ValueError, r"head_dim must be in \[2, 64\], got 66"),
        ({"seq_len": 0}, ValueError, "seq_len must be an integer >= 1, got 0"),
        ({"base": 1.0}, ValueError, "base must be a finite number > 1, got 1.0"),
        ({"scaled_base": 0.5}, ValueError, "scaled_base must be a finite number > 1, got 0.5"),
    ]:
        for call in (plot_rotary_wavelengths, describe_rotary_wavelengths):
            with pytest.raises(error, match=message):
                call(**kwargs)
    fig, ax = new_figure()
    assert plot_rotary_wavelengths(ax=ax) is fig


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
        assert image.get_clim() == (-slope * 4, 0.0)  # each head's own scale
    titles = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("head")]
    assert titles == [image.get_label() for image in images]
    greys = [p for p in fig.axes[0].patches if p.get_zorder() == -1]  # under the masked future
    assert len(greys) == 6 and {to_rgba(p.get_facecolor()) for p in greys} == {to_rgba("#d9d9d9")}


def test_alibi_bias_panels_are_legible_and_none_reads_as_blank_at_page_width() -> None:
    # Four panels a row on one scale were 100 px wide as the page shows them, and the shallow
    # heads' panels, spanning a 64th of the scale or less, read as blank (issue 39).
    fig = plot_alibi_bias(4, 8)
    px_per_inch = min(DISPLAY_DPI, PAGE_WIDTH_PX / fig.get_tightbbox().width)
    assert smallest_text_px(fig) >= MIN_TEXT_PX
    for image in fig.axes[0].get_images():
        left, right = image.get_extent()[:2]
        assert (right - left) * px_per_inch >= 180, image.get_label()
        shown = image.norm(image.get_array().compressed())  # 0 darkest .. 1 white
        assert shown.min() == pytest.approx(0.0) and shown.max() == pytest.approx(1.0)


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


_DIAGRAMS = {
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
    "rotary wavelengths": lambda: plot_rotary_wavelengths(scaled_base=48_761.0),
    "rotary wavelengths, widest": lambda: plot_rotary_wavelengths(64, 1e6, 4096),
    "sinusoidal clocks": plot_sinusoidal_clocks,
    "sinusoidal clocks, largest": lambda: plot_sinusoidal_clocks(256, 64, 4),
}


@pytest.mark.parametrize("name", list(_DIAGRAMS))
def test_every_diagram_is_legible_at_page_width_and_fits_its_figure(name: str) -> None:
    assert_legible_diagram(_DIAGRAMS[name](), name)
