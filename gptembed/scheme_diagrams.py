"""Diagrams of the position schemes: sinusoidal clocks, rotary's turn and wavelengths, ALiBi's bias.

Pictures of the ideas, drawn from :mod:`gptembed.positions`' own arithmetic in the idiom of
:mod:`gptembed.plotting` (:func:`plot_sinusoidal_clocks`, :func:`plot_rotary_rotation`,
:func:`plot_rotary_wavelengths`, :func:`plot_alibi_bias`). Each
``plot_<idea>`` has a ``describe_<idea>`` taking the same data: the same picture in words, one
paragraph for a figure's alt text (``mystnb.image.alt``), its numbers computed as the picture's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

try:
    from matplotlib.axes import Axes
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Arc, Circle, Rectangle
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"{__name__} draws with matplotlib, which is not installed: install the plot extra with "
        'pip install "gptembed[plot]"'
    ) from err

from ._checks import (
    check_float,
    check_int,
    check_int_in_range,
    check_integer_array,
    check_real_array,
)
from ._figures import (
    DIAGRAM_FONTSIZE,
    DIAGRAM_MAX_ROWS,
    DIAGRAM_WIDTH,
    DIVERGING_CMAP,
    FRAME,
    GREY,
    MINUS,
    PALETTE,
    canvas,
    cells,
    figure_and_axes,
    figure_and_panels,
    new_figure,
    put_text,
    word_list,
)
from .positions import alibi_slopes, linear_bias, rotary_wavelengths, rotate, sinusoidal_table

_RED_TEXT = "#a64500"  # the vermillion darkened for text: 6:1 on white (the vermillion is 3.9:1)


# The sinusoidal table as clocks, beside a binary counter.

_CLOCKS_FIGSIZE = (7.0, 3.8)
"""Width and height in inches of :func:`plot_sinusoidal_clocks`: the table, the counter, a bar."""

_CLOCKS_MAX = (256, 64, 4)
"""The most positions, dimensions and bits :func:`plot_sinusoidal_clocks` draws: past them the
table's columns or the counter's digits would be too narrow to read."""


@dataclass(frozen=True)
class _SinusoidalClocks:
    """:func:`plot_sinusoidal_clocks`' inputs, checked, and what it draws."""

    table: NDArray[np.floating]  # (L, D): sinusoidal_table(L, D, base), float64
    bits: NDArray[np.int64]  # (2**n_bits, n_bits): bit b of t in column b, lowest first
    base: float

    @property
    def wavelengths(self) -> NDArray[np.float64]:
        """``(D/2,)`` positions per full turn of each pair, ``2 pi / theta_p``."""
        return rotary_wavelengths(self.table.shape[1], self.base)


def _sinusoidal_clocks(
    n_positions: int, embed_dim: int, n_bits: int, base: float
) -> _SinusoidalClocks:
    """The inputs of :func:`plot_sinusoidal_clocks`, checked, and its two arrays."""
    most_positions, most_dims, most_bits = _CLOCKS_MAX
    n_positions = check_int_in_range("n_positions", n_positions, 1, most_positions)
    embed_dim = check_int_in_range("embed_dim", embed_dim, 2, most_dims)
    n_bits = check_int_in_range("n_bits", n_bits, 1, most_bits)
    table = sinusoidal_table(n_positions, embed_dim, base)  # checks D even and base
    numbers = np.arange(2**n_bits)
    bits = (numbers[:, None] >> np.arange(n_bits)) & 1
    return _SinusoidalClocks(table, bits.astype(np.int64), float(base))


def plot_sinusoidal_clocks(
    n_positions: int = 64,
    embed_dim: int = 32,
    n_bits: int = 4,
    *,
    base: float = 10000.0,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """The sinusoidal position table beside a binary counter: clocks that turn at set rates.

    Left, a heat map of :func:`~gptembed.positions.sinusoidal_table` ``(L, D)``, position ``t``
    down and dimension across: pair ``p`` (dimensions ``2p`` and ``2p + 1``) is
    ``(sin t theta_p, cos t theta_p)``, ``theta_p = base**(-2p / D)``, so its columns repeat
    every ``2 pi / theta_p`` positions, a few at the left and ever more to the right. Right, the
    numbers ``0 .. 2**n_bits - 1`` in binary (as *Dive into Deep Learning*, section 11.6.3, sets
    them beside the table), lowest bit first, each digit written in its cell: bit ``b`` flips
    every ``2**b`` rows. One colour scale, :data:`~gptembed._figures.DIVERGING_CMAP` from -1 to
    1, for both (a bit of 1 is as red as a table value of 1). :func:`describe_sinusoidal_clocks`
    says the same in words.

    >>> fig = plot_sinusoidal_clocks(16, 8, 2)
    >>> [image.get_label() for ax in fig.axes[:2] for image in ax.get_images()]
    ['sinusoidal table', 'binary counter']

    Args:
        n_positions: ``L``, rows of the table, 1 to 256.
        embed_dim: ``D``, the table's width, even, 2 to 64.
        n_bits: bits of the counter, 1 to 4 (it counts to ``2**n_bits - 1``).
        base: the wavelength scale of the table (10,000 in the paper).
        axes: two axes to draw on (the table's, the counter's); by default a new
            :data:`_CLOCKS_FIGSIZE` figure, the table three times as wide as the counter.

    Returns:
        The figure: its first axes hold the image ``"sinusoidal table"``, whose data is
        ``sinusoidal_table(n_positions, embed_dim, base)``; its second the image
        ``"binary counter"``, ``(2**n_bits, n_bits)``, bit ``b`` of row ``t`` in column ``b``,
        and one text per cell, its digit; then the shared colour bar.

    Raises:
        TypeError, ValueError: a size not an integer in its range, ``embed_dim`` odd, ``base``
            not a finite number > 1, or ``axes`` not two axes.
    """
    clocks = _sinusoidal_clocks(n_positions, embed_dim, n_bits, base)
    if axes is None:
        fig, panels = new_figure(_CLOCKS_FIGSIZE, ncols=2, width_ratios=(3, 1))
    else:
        fig, panels = figure_and_panels(2, _CLOCKS_FIGSIZE, axes=axes)
    heat, counter = panels
    norm = Normalize(-1.0, 1.0)
    (n_rows, width), (n_numbers, n_columns) = clocks.table.shape, clocks.bits.shape
    image = heat.imshow(
        clocks.table, cmap=DIVERGING_CMAP, norm=norm, aspect="auto", interpolation="nearest",
        label="sinusoidal table",
    )  # fmt: skip
    heat.set_title(f"sinusoidal table, D = {width}", fontsize=DIAGRAM_FONTSIZE)
    heat.set_xlabel("dimension (pairs: sin, cos), fastest first", fontsize=DIAGRAM_FONTSIZE)
    heat.set_ylabel("position t", fontsize=DIAGRAM_FONTSIZE)
    for set_ticks, n in ((heat.set_xticks, width), (heat.set_yticks, n_rows)):
        step = 2 ** max(0, (n // 4).bit_length() - 1)  # a power of two, four ticks or so
        set_ticks(range(0, n, step))

    counter.imshow(
        clocks.bits, cmap=DIVERGING_CMAP, norm=norm, aspect="auto", interpolation="nearest",
        label="binary counter",
    )  # fmt: skip
    counter.hlines(np.arange(n_numbers - 1) + 0.5, -0.5, n_columns - 0.5, color="#bbbbbb", lw=0.5)
    counter.vlines(np.arange(n_columns - 1) + 0.5, -0.5, n_numbers - 0.5, color="#bbbbbb", lw=0.5)
    for (t, b), bit in np.ndenumerate(clocks.bits):
        colour = "white" if bit else "black"  # white on the darkest red, black on white
        counter.text(b, t, str(bit), ha="center", va="center", color=colour,
                     fontsize=DIAGRAM_FONTSIZE)  # fmt: skip
    counter.set_xticks(range(n_columns), [str(2**b) for b in range(n_columns)])
    counter.set_yticks(range(n_numbers))
    counter.set_title("t in binary", fontsize=DIAGRAM_FONTSIZE)
    counter.set_xlabel("bit (rows per flip)", fontsize=DIAGRAM_FONTSIZE)
    for ax in (heat, counter):
        ax.tick_params(labelsize=DIAGRAM_FONTSIZE)
    bar = fig.colorbar(image, ax=[heat, counter], ticks=[-1.0, 0.0, 1.0])
    bar.ax.set_yticklabels([f"{MINUS}1", "0", "1"])
    bar.ax.tick_params(labelsize=DIAGRAM_FONTSIZE)
    return fig


def describe_sinusoidal_clocks(
    n_positions: int = 64, embed_dim: int = 32, n_bits: int = 4, *, base: float = 10000.0
) -> str:
    """:func:`plot_sinusoidal_clocks` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_sinusoidal_clocks`.
    """
    clocks = _sinusoidal_clocks(n_positions, embed_dim, n_bits, base)
    n_rows, width = clocks.table.shape
    waves = clocks.wavelengths
    if len(waves) == 1:
        rates = f"its one pair repeats every {waves[0]:.3g} positions"
    else:
        rates = (
            f"the first pair repeats every {waves[0]:.3g} positions, each next pair "
            f"{clocks.base ** (2 / width):.3g} times more slowly, the last every "
            f"{waves[-1]:,.0f}"
        )
    turning = int((waves <= n_rows).sum())  # pairs that make a full turn in the rows drawn
    if turning == len(waves):
        shown = f"every pair turns fully within the {n_rows} positions drawn"
    elif turning == 0:
        shown = f"no pair turns fully within the {n_rows} positions drawn"
    else:
        shown = (
            f"only the first {turning} turn fully within the {n_rows} positions drawn, and the "
            "stripes widen from left to right"
        )
    n_columns = clocks.bits.shape[1]
    if n_columns == 1:
        flips = "its one bit flips every row"
    else:
        later = word_list([2**b for b in range(1, n_columns)])
        flips = f"the lowest bit flips every row, the next ones every {later} rows in turn"
    return (
        "Two heat maps side by side on one colour scale, from minus 1 (blue) through 0 (white) "
        f"to 1 (red). Left: the sinusoidal position table for positions 0 to {n_rows - 1} "
        f"(down) and its {width} dimensions (across), in pairs of a sine and a cosine, each "
        f"pair a clock turning at its own rate, fastest first: {rates}; {shown}. Right: the "
        f"numbers 0 to {2**n_columns - 1} in binary, one a row, lowest bit first, each cell "
        f"showing its digit (1 red, 0 white): {flips}, as each pair of the table turns more "
        "slowly than the one before."
    )


# Rotary positions: a pair of coordinates turned by an angle that grows with position.

_ROTARY_FIGSIZE = (7.0, 3.3)
"""Width and height in inches of :func:`plot_rotary_rotation`: its panels side by side."""


@dataclass(frozen=True)
class _RotaryRotation:
    """:func:`plot_rotary_rotation`'s inputs, checked, and the vectors
    :func:`~gptembed.positions.rotate` turns them to (the drawn pair's two coordinates)."""

    pair: int
    head_dim: int
    theta: float  # radians per position
    positions: list[int]
    turned: NDArray[np.float64]  # (n, 2): the query's pair at each position
    query: NDArray[np.float64]  # (2,): the query's pair, unturned
    key: NDArray[np.float64]  # (2,)
    distance_pairs: list[tuple[int, int]]
    queries: NDArray[np.float64]  # (m, 2): the query's pair turned to i
    keys: NDArray[np.float64]  # (m, 2): the key's pair turned to j

    def angles(self) -> NDArray[np.float64]:
        """``(m,)`` degrees from each turned key to its turned query, in ``(-180, 180]``."""
        turn = np.degrees(
            np.arctan2(self.queries[:, 1], self.queries[:, 0])
            - np.arctan2(self.keys[:, 1], self.keys[:, 0])
        )
        return 180.0 - (180.0 - turn) % 360.0

    def dots(self) -> NDArray[np.float64]:
        """``(m,)`` the pair's share of each score ``q_i . k_j``."""
        return np.einsum("md,md->m", self.queries, self.keys)

    @property
    def product(self) -> str:
        """What :meth:`dots` are, in words: the whole product when the head is one pair."""
        return "q·k" if self.head_dim == 2 else "the pair's q·k"


def _rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    base: float,
    pair: int,
    positions: Sequence[int],
    distance_pairs: Sequence[tuple[int, int]],
) -> _RotaryRotation:
    """The inputs of :func:`plot_rotary_rotation`, checked, and their rotations."""
    q = check_real_array("query", query)
    k = check_real_array("key", key)
    if q.ndim != 1 or q.shape != k.shape or q.size == 0 or q.size % 2:
        raise ValueError(
            f"query and key must be vectors (H,) of one even length H >= 2, got shapes "
            f"{q.shape} and {k.shape}"
        )
    head_dim = q.size
    pair = check_int_in_range("pair", pair, 0, head_dim // 2 - 1, f" for H = {head_dim}")
    dims = slice(2 * pair, 2 * pair + 2)
    for name, vector in (("query", q), ("key", k)):
        if not vector[dims].any():
            raise ValueError(
                f"{name}'s pair {pair} (dimensions {2 * pair} and {2 * pair + 1}) is zero: a "
                "zero vector has no direction to turn"
            )
    base = check_float("base", base, above=1)
    at = check_integer_array("positions", positions, None)
    if at.ndim != 1 or not 1 <= at.size <= 8 or at.min() < 0:
        raise ValueError(f"positions must be 1 to 8 integers >= 0, got {at.tolist()}")
    try:
        pairs = [tuple(p) for p in distance_pairs]
    except TypeError as err:
        raise TypeError(f"distance_pairs must hold pairs (i, j), got {distance_pairs!r}") from err
    if not 1 <= len(pairs) <= 3 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"distance_pairs must hold 1 to 3 pairs (i, j), got {pairs}")
    ij = [(check_int("i", i, minimum=0), check_int("j", j, minimum=0)) for i, j in pairs]
    # the package's rotation, of whole vectors: the drawn pair is two of their coordinates
    turned = rotate(np.tile(q, (at.size, 1)), base, positions=at)[:, dims]
    queries = rotate(np.tile(q, (len(ij), 1)), base, positions=[i for i, _ in ij])[:, dims]
    keys = rotate(np.tile(k, (len(ij), 1)), base, positions=[j for _, j in ij])[:, dims]
    theta = base ** (-2.0 * pair / head_dim)
    return _RotaryRotation(
        pair, head_dim, theta, at.tolist(), turned, q[dims], k[dims], ij, queries, keys
    )


def _arrow(ax: Axes, tip: NDArray[np.float64], colour: str, label: str, style: str = "-") -> None:
    """An arrow from the origin to ``tip``: an :class:`~matplotlib.text.Annotation` whose ``xy``
    is ``tip``, labelled ``label``."""
    ax.annotate(
        "",
        xy=(float(tip[0]), float(tip[1])),
        xytext=(0.0, 0.0),
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "lw": 2.0,
            "linestyle": style,
            "shrinkA": 0,
            "shrinkB": 0,
            "mutation_scale": 14,
        },
        label=label,
    )


def _plane(ax: Axes, reach: float) -> None:
    """A pair's plane: its two axes through the origin, the view ``reach`` each way."""
    ax.axhline(0.0, color="#bbbbbb", lw=0.8, zorder=0)
    ax.axvline(0.0, color="#bbbbbb", lw=0.8, zorder=0)
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_color("#bbbbbb")


def _angle_arc(
    ax: Axes, start: float, end: float, radius: float, text: str, at: float | None = None
) -> None:
    """An arc from ``start`` to ``end`` degrees (either way round) at ``radius``, ``text`` just
    outside it at ``at`` degrees (its middle by default)."""
    low, high = sorted((start, end))
    ax.add_patch(
        Arc((0.0, 0.0), 2 * radius, 2 * radius, theta1=low, theta2=high, color=FRAME, lw=1.2)
    )
    where = np.radians((low + high) / 2 if at is None else at)
    offset = radius + 0.09 * ax.get_xlim()[1]
    put_text(ax, offset * np.cos(where), offset * np.sin(where), text, ha="center", va="center")


def _degrees(vector: NDArray[np.float64]) -> float:
    """The direction of a 2-D vector, in degrees."""
    return float(np.degrees(np.arctan2(vector[1], vector[0])))


def _tip_label(ax: Axes, tip: NDArray[np.float64], text: str, colour: str) -> None:
    """``text`` just past an arrow's tip, along the arrow."""
    where = tip * (1 + 0.13 * ax.get_xlim()[1] / np.linalg.norm(tip))
    put_text(ax, where[0], where[1], text, ha="center", va="center", color=colour)


def _spread_out(positions: Sequence[int], theta: float, apart: float = 20.0) -> list[int]:
    """The positions to label, in order: each at least ``apart`` degrees of turn past the one
    before (arrows closer than that would overlap their labels), the last always."""
    kept: list[int] = []
    for t in sorted(set(positions)):
        if kept and np.degrees((t - kept[-1]) * theta) < apart:
            if t == max(positions):
                kept[-1] = t
            continue
        kept.append(t)
    return kept


def plot_rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    *,
    base: float = 10000.0,
    pair: int = 0,
    positions: Sequence[int] = (0, 1, 2, 3),
    distance_pairs: Sequence[tuple[int, int]] = ((2, 0), (7, 5)),
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """Rotary positions (RoPE) as a pair of coordinates turned by an angle that grows with position.

    First panel: one pair ``(2 pair, 2 pair + 1)`` of ``query`` at each of ``positions``:
    position ``t`` turns it by ``t theta`` (``theta = base**(-2 pair / H)`` radians), the angles
    drawn as arcs (for a slow pair, only positions 20 degrees apart are labelled). Then a panel
    per ``(i, j)`` of ``distance_pairs``: the query turned to ``i``, the key turned to ``j`` and
    the angle between them, which is the same for the same ``i - j``: both are turned, so the
    pair's share of the score ``q . k`` depends only on the distance. Every turned vector is
    :func:`~gptembed.positions.rotate`'s.
    :func:`describe_rotary_rotation` says the same in words.

    >>> fig = plot_rotary_rotation([1.0, 0.0], [0.5, 0.5])
    >>> [ax.get_title().replace("\\n", ": ") for ax in fig.axes[1:]]
    ['i = 2, j = 0: i \u2212 j = 2: angle 70°', 'i = 7, j = 5: i \u2212 j = 2: angle 70°']

    Args:
        query, key: ``(H,)`` a query and a key of one head, ``H`` even (``H = 2``: one pair).
        base: the wavelength scale of :func:`~gptembed.positions.rotate` (10,000 in RoPE).
        pair: which pair of dimensions to draw, ``0 .. H/2 - 1`` (pair 0 turns fastest, one
            radian per position).
        positions: 1 to 8 positions ``>= 0`` for the first panel.
        distance_pairs: 1 to 3 ``(i, j)``: a query at ``i`` and a key at ``j``, a panel each.
        axes: ``1 + len(distance_pairs)`` axes to draw on; by default a new
            :data:`_ROTARY_FIGSIZE` figure.

    Returns:
        The figure. Each arrow is an :class:`~matplotlib.text.Annotation` whose ``xy`` is the
        turned vector's tip, labelled ``"query at t"`` (``"query unturned"`` for a reference
        drawn when ``positions`` leaves out 0) or ``"key at j"``.

    Raises:
        TypeError: vectors that are not real numbers, or positions that are not integers.
        TypeError, ValueError: ``base`` not a finite number > 1, ``pair`` not in
            ``[0, H/2 - 1]``, an ``i`` or ``j`` not an integer ``>= 0``.
        ValueError: vectors that are not ``(H,)`` of one even length, hold a NaN or inf, or are
            zero on the pair; positions not 1 to 8 integers ``>= 0``; ``distance_pairs`` not 1
            to 3 pairs; ``axes`` of the wrong number.
    """
    parts = _rotary_rotation(query, key, base, pair, positions, distance_pairs)
    n_pairs = len(parts.distance_pairs)
    width, height = _ROTARY_FIGSIZE
    fig, panels = figure_and_panels(1 + n_pairs, (width / (1 + n_pairs), height), axes=axes)
    q_norm, k_norm = float(np.linalg.norm(parts.query)), float(np.linalg.norm(parts.key))
    reach = 1.65 * max(q_norm, k_norm)
    blue, red = PALETTE["blue"], PALETTE["vermillion"]

    turning = panels[0]
    _plane(turning, reach)
    turning.add_patch(Circle((0.0, 0.0), q_norm, fill=False, color="#bbbbbb", lw=0.8, ls="--"))
    if 0 not in parts.positions:  # the unturned query, for the angles to start from
        _arrow(turning, parts.query, "#999999", "query unturned", ":")
    labelled = _spread_out(parts.positions, parts.theta)
    for t, tip in zip(parts.positions, parts.turned, strict=True):
        _arrow(turning, tip, blue, f"query at {t}")
        if t in labelled:
            _tip_label(turning, tip, f"t = {t}", blue)
    start = _degrees(parts.query)
    turns = [t for t in labelled if t > 0]
    for rank, t in enumerate(turns):
        radius = q_norm * (0.25 + 0.45 * rank / max(len(turns) - 1, 1))
        end = start + np.degrees(t * parts.theta)
        # the label sits past the arrow before it, where no arrow is
        label_at = start + np.degrees((t - 0.5) * parts.theta)
        _angle_arc(turning, start, end, radius, "θ" if t == 1 else f"{t}θ", at=label_at)
    turning.set_title(
        f"query turned by t·θ\nθ = {np.degrees(parts.theta):.3g}° a position",
        fontsize=DIAGRAM_FONTSIZE,
    )
    turning.set_xlabel(f"dimension {2 * parts.pair}", fontsize=DIAGRAM_FONTSIZE)
    turning.set_ylabel(f"dimension {2 * parts.pair + 1}", fontsize=DIAGRAM_FONTSIZE)

    angles, dots = parts.angles(), parts.dots()
    for n, (ax, (i, j)) in enumerate(zip(panels[1:], parts.distance_pairs, strict=True)):
        q_turned, k_turned = parts.queries[n], parts.keys[n]
        _plane(ax, reach)
        _arrow(ax, k_turned, red, f"key at {j}")
        _arrow(ax, q_turned, blue, f"query at {i}")
        _tip_label(ax, k_turned, f"k at {j}", _RED_TEXT)
        _tip_label(ax, q_turned, f"q at {i}", blue)
        k_dir = _degrees(k_turned)
        _angle_arc(ax, k_dir, k_dir + angles[n], 0.4 * min(q_norm, k_norm), "")
        distance = f"i {MINUS} j = {i - j}: angle {abs(angles[n]):.0f}°"
        ax.set_title(f"i = {i}, j = {j}\n{distance}", fontsize=DIAGRAM_FONTSIZE)
        ax.set_xlabel(f"{parts.product} = {dots[n]:.2f}", fontsize=DIAGRAM_FONTSIZE)
    return fig


def describe_rotary_rotation(
    query: ArrayLike,
    key: ArrayLike,
    *,
    base: float = 10000.0,
    pair: int = 0,
    positions: Sequence[int] = (0, 1, 2, 3),
    distance_pairs: Sequence[tuple[int, int]] = ((2, 0), (7, 5)),
) -> str:
    """:func:`plot_rotary_rotation` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_rotary_rotation`.
    """
    parts = _rotary_rotation(query, key, base, pair, positions, distance_pairs)
    angles, dots = np.abs(parts.angles()), parts.dots()
    scenes = [
        f"at (i, j) = ({i}, {j}), distance {i - j}, the angle is {a:.0f}° and {parts.product} "
        f"is {d:.2f}"
        for (i, j), a, d in zip(parts.distance_pairs, angles, dots, strict=True)
    ]
    text = (
        f"Arrows in the plane of one pair of coordinates (dimensions {2 * parts.pair} and "
        f"{2 * parts.pair + 1}) of a head of width {parts.head_dim}. First panel: the query's "
        f"pair at positions {word_list(parts.positions)}; each position turns it by θ = "
        f"{parts.theta:.3g} rad ({np.degrees(parts.theta):.3g}°) more, so at position t it "
        "has turned t·θ, drawn as arcs. Then a panel for each query turned to its position i "
        "(blue) and key turned to its position j (red), the angle between them marked: "
        f"{'; '.join(scenes)}."
    )
    if len({i - j for i, j in parts.distance_pairs}) < len(parts.distance_pairs):
        text += (
            " The same distance gives the same angle and the same product wherever the pair "
            f"sits: query and key are turned together, so only i {MINUS} j counts."
        )
    return text


# Rotary's wavelengths: which pairs turn a full circle within the trained length.

_WAVELENGTHS_FIGSIZE = (7.0, 3.4)
"""Width and height in inches of :func:`plot_rotary_wavelengths`."""


def _rotary_wavelengths(
    head_dim: int, base: float, seq_len: int, scaled_base: float | None
) -> tuple[int, list[float], list[NDArray[np.float64]]]:
    """:func:`plot_rotary_wavelengths`' inputs, checked: ``(seq_len, bases, wavelengths)``, the
    base and the scaled base if given, and each one's ``(H/2,)`` wavelengths."""
    head_dim = check_int_in_range("head_dim", head_dim, 2, 64)  # 32 pairs, each still a tick
    seq_len = check_int("seq_len", seq_len)
    bases = [check_float("base", base, above=1)]
    if scaled_base is not None:
        bases.append(check_float("scaled_base", scaled_base, above=1))
    return seq_len, bases, [rotary_wavelengths(head_dim, b) for b in bases]  # H even


def plot_rotary_wavelengths(
    head_dim: int = 16,
    base: float = 10000.0,
    seq_len: int = 64,
    *,
    scaled_base: float | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Each rotary pair's wavelength against the trained length: which meet new angles past it.

    Pair ``i`` of a head turns ``theta_i = base**(-2i / H)`` radians a position
    (:func:`~gptembed.positions.rotate`), a full circle every ``2 pi / theta_i`` positions
    (:func:`~gptembed.positions.rotary_wavelengths`): one marker per pair, on a log axis, beside
    lines at ``T``, ``2T`` and ``4T`` (dashed, dash-dotted, dotted). A pair below ``T`` has
    turned full circles within the windows the model trained on, so it meets no angle past ``T``
    it has not seen; a pair above it reaches new angles past it. With ``scaled_base`` (such as
    :func:`~gptembed.positions.ntk_base`'s), that base's wavelengths beside the first's.
    :func:`describe_rotary_wavelengths` says the same in words.

    >>> fig = plot_rotary_wavelengths(8, 100.0, 16, scaled_base=400.0)
    >>> [line.get_label() for line in fig.axes[0].get_lines()[:2]]
    ['base 100', 'base 400']

    Args:
        head_dim: ``H``, the width of a head, even, 2 to 64.
        base: the rotary base (10,000 in RoPE).
        seq_len: ``T``, the trained length, an integer >= 1.
        scaled_base: a second base to draw beside the first, a finite number > 1, or None.
        ax: axes to draw on; by default a new :data:`_WAVELENGTHS_FIGSIZE` figure.

    Returns:
        The figure. Its axes' first line, labelled ``"base 10,000"``, has the pairs ``0 ..
        H/2 - 1`` as x and their wavelengths as y; with ``scaled_base`` the second line is that
        base's, its x shifted right by 0.15 (the first's left by as much); then the lengths,
        horizontal lines labelled ``"T = 64"``, ``"2T = 128"`` and ``"4T = 256"``.

    Raises:
        TypeError, ValueError: ``head_dim`` not an even integer in ``[2, 64]``, ``seq_len`` not
            an integer >= 1, or a base not a finite number > 1.
    """
    seq_len, bases, wavelengths = _rotary_wavelengths(head_dim, base, seq_len, scaled_base)
    fig, ax = figure_and_axes(_WAVELENGTHS_FIGSIZE, ax=ax)
    pairs = np.arange(len(wavelengths[0]))
    shift = 0.15 if len(bases) == 2 else 0.0
    styles = (("o", PALETTE["blue"], -shift), ("s", PALETTE["vermillion"], shift))
    for b, waves, (marker, colour, dx) in zip(bases, wavelengths, styles, strict=False):
        label = f"base {b:,.0f}"
        ax.plot(pairs + dx, waves, marker=marker, color=colour, lw=1.0, ms=6, label=label)
    for times, style in ((1, "--"), (2, "-."), (4, ":")):
        label = f"{'' if times == 1 else times}T = {times * seq_len:,}"
        ax.axhline(times * seq_len, color=PALETTE["black"], ls=style, lw=1.0, label=label)
        ax.annotate(
            label, xy=(1.0, times * seq_len), xycoords=("axes fraction", "data"), xytext=(4, 0),
            textcoords="offset points", va="center", fontsize=DIAGRAM_FONTSIZE,
        )  # fmt: skip
    ax.set_yscale("log")
    ax.set_xticks(pairs[:: max(1, len(pairs) // 16)])  # 16 ticks at most: their labels fit
    ax.set_xlabel("pair i (dimensions 2i and 2i + 1), fastest first", fontsize=DIAGRAM_FONTSIZE)
    ax.set_ylabel(r"wavelength $2\pi / \theta_i$ (positions)", fontsize=DIAGRAM_FONTSIZE)
    title = f"rotary wavelengths, H = {2 * len(pairs)}: below T a pair has turned full circles"
    ax.set_title(title, fontsize=DIAGRAM_FONTSIZE)
    ax.tick_params(labelsize=DIAGRAM_FONTSIZE)
    ax.legend(handles=ax.get_lines()[: len(bases)], loc="upper left", fontsize=DIAGRAM_FONTSIZE)
    return fig


def describe_rotary_wavelengths(
    head_dim: int = 16,
    base: float = 10000.0,
    seq_len: int = 64,
    *,
    scaled_base: float | None = None,
) -> str:
    """:func:`plot_rotary_wavelengths` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_rotary_wavelengths`.
    """
    length, bases, (waves, *scaled) = _rotary_wavelengths(head_dim, base, seq_len, scaled_base)
    n_pairs = len(waves)
    pairs = "its one rotary pair" if n_pairs == 1 else f"each of the {n_pairs} rotary pairs"
    text = (
        f"A chart, log scale, of the wavelength of {pairs} of a head of width {2 * n_pairs} "
        f"with base {bases[0]:,.0f} (circles), fastest first: {_lengths(waves)} positions; "
        f"horizontal lines mark T = {length}, 2T = {2 * length} and 4T = {4 * length}. "
    )
    turned = int((waves <= length).sum())  # the fastest pairs, which turn fully within T
    if turned == n_pairs:
        text += "Every pair turns full circles within T, so none meets a new angle past T."
    elif turned == 0:
        text += "No pair turns a full circle within T: every pair meets new angles past T."
    else:
        fast = "Pair 0 turns" if turned == 1 else f"Pairs 0 to {turned - 1} turn"
        slow = f"pair {turned}" if turned == n_pairs - 1 else f"pairs {turned} to {n_pairs - 1}"
        text += (
            f"{fast} full circles within T; {slow} turn only part of a circle by T, so only "
            "they meet angles past T that no training window showed."
        )
    if not scaled:
        return text
    text += f" Beside them (squares), base {bases[1]:,.0f}: pair 0 keeps its {_lengths(waves[:1])}"
    if n_pairs > 1:
        text += (
            f", and each slower pair's grows, the slowest's {scaled[0][-1] / waves[-1]:.3g} "
            f"times, to {_lengths(scaled[0][-1:])}"
        )
    within = int((scaled[0] <= 4 * length).sum())
    return text + f"; {within} of {n_pairs} turn full circles within 4T."


def _lengths(waves: NDArray[np.float64]) -> str:
    """Wavelengths in words: 3 significant digits below 1,000, whole positions above."""
    return word_list([f"{w:.3g}" if w < 1000 else f"{w:,.0f}" for w in waves])


# ALiBi: a bias on the scores that falls with distance, at a slope per head.

_BIAS_CMAP = "Blues_r"
"""Colour map of a bias that is never positive: white at 0, darker blue the more negative (the
negative half of :data:`DIVERGING_CMAP`, spread over the whole scale)."""


def _alibi_bias(n_heads: int, seq_len: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(slopes (n_heads,), biases (n_heads, T, T))`` of :func:`plot_alibi_bias`, checked."""
    n_heads = check_int("n_heads", n_heads)
    seq_len = check_int("seq_len", seq_len)
    if n_heads > 8 or seq_len > DIAGRAM_MAX_ROWS:
        raise ValueError(
            f"a diagram draws at most 8 heads of {DIAGRAM_MAX_ROWS} positions, so that every "
            f"label stays legible, got n_heads {n_heads} and seq_len {seq_len}"
        )
    slopes = alibi_slopes(n_heads)
    return slopes, np.stack([linear_bias(seq_len, float(m)) for m in slopes])


def _slope_label(slope: float) -> str:
    """``1/4`` for a power of two's reciprocal (ALiBi's slopes mostly are), else 3 digits."""
    power = -math.log2(slope)
    return f"1/{2 ** round(power)}" if power == round(power) and power >= 0 else f"{slope:.3g}"


def plot_alibi_bias(n_heads: int = 4, seq_len: int = 8, *, ax: Axes | None = None) -> Figure:
    """ALiBi's bias ``-m_h (i - j)`` on the attention scores, a heat map per head.

    One panel per head ``h`` (two a row), query ``i`` down and key ``j`` across, of
    :func:`~gptembed.positions.linear_bias` at that head's slope ``m_h`` of
    :func:`~gptembed.positions.alibi_slopes`: 0 on the diagonal, falling by ``m_h`` per
    position back. Future keys (``j > i``) are grey, as the causal mask hides them. Each head
    has its own colour scale, :data:`_BIAS_CMAP` from its farthest key's bias to 0, and its own
    colour bar: on one shared scale the shallow heads' panels would read as blank.
    :func:`describe_alibi_bias` says the same in words.

    >>> fig = plot_alibi_bias(4, 6)
    >>> [image.get_label() for image in fig.axes[0].get_images()]
    ['head 1: m = 1/4', 'head 2: m = 1/16', 'head 3: m = 1/64', 'head 4: m = 1/256']

    Args:
        n_heads: heads, 1 to 8.
        seq_len: ``T``, positions, 1 to :data:`DIAGRAM_MAX_ROWS`.
        ax: axes to draw on (a blank canvas); by default a new figure at most
            :data:`DIAGRAM_WIDTH` wide, as tall as the rows of panels need.

    Returns:
        The figure. Each head's image, labelled with its title (``"head 1: m = 1/4"``), is a
        masked array whose data is ``linear_bias(seq_len, m_h)``, the future keys masked, its
        colour limits ``(-m_h max(T - 1, 1), 0)``.

    Raises:
        TypeError, ValueError: ``n_heads`` or ``seq_len`` not an integer >= 1, or more than a
            diagram draws.
    """
    slopes, biases = _alibi_bias(n_heads, seq_len)
    n_heads, seq_len = biases.shape[:2]
    ncols, nrows = min(n_heads, 2), -(-n_heads // 2)
    left, gap, bar_gap, bar_w, bar_text, title_h, below = 0.62, 0.3, 0.1, 0.15, 0.8, 0.32, 0.55
    beside = bar_gap + bar_w + bar_text  # a panel's colour bar and its labels
    cell = min(0.3, (DIAGRAM_WIDTH - left - (ncols - 1) * gap - ncols * beside) / (ncols * seq_len))
    grid = seq_len * cell
    pitch_x, pitch_y = grid + beside + gap, title_h + grid + below
    size = (left + ncols * (grid + beside) + (ncols - 1) * gap, nrows * pitch_y + 0.05)
    fig, ax = canvas(size, ax)
    future = np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1)
    step = 1 if cell >= 0.13 else 2  # a tick label per position while they fit
    ticks = range(0, seq_len, step)
    for h, (bias, slope) in enumerate(zip(biases, slopes, strict=True)):
        row, col = divmod(h, ncols)
        x, y = left + col * pitch_x, row * pitch_y + title_h
        ax.add_patch(Rectangle((x, y), grid, grid, color=GREY, lw=0, zorder=-1))  # the future
        title = f"head {h + 1}: m = {_slope_label(float(slope))}"
        limit = float(slope) * max(seq_len - 1, 1)  # this head's farthest key
        norm = Normalize(-limit, 0.0)
        cells(
            ax, np.ma.masked_where(future, bias), x, y, (cell, cell), cmap=_BIAS_CMAP, norm=norm,
            label=title,
        )  # fmt: skip
        put_text(ax, x + grid / 2, y - 0.08, title, ha="center", va="bottom")
        for t in ticks:
            put_text(ax, x + (t + 0.5) * cell, y + grid + 0.05, str(t), ha="center", va="top")
            if col == 0:
                put_text(ax, x - 0.05, y + (t + 0.5) * cell, str(t), ha="right", va="center")
        put_text(ax, x + grid / 2, y + grid + 0.25, "key j", ha="center", va="top")
        if col == 0:
            put_text(ax, 0.22, y + grid / 2, "query i", rotation=90, ha="center", va="center")
        bar = ax.inset_axes(  # beside the panel, as tall as it (axes fractions, y up)
            ((x + grid + bar_gap) / size[0], 1 - (y + grid) / size[1], bar_w / size[0],
             grid / size[1])
        )  # fmt: skip
        colorbar = fig.colorbar(ScalarMappable(norm, _BIAS_CMAP), cax=bar)
        colorbar.set_ticks([-limit, -limit / 2, 0.0])
        colorbar.set_ticklabels([f"{MINUS}{limit:.3g}", f"{MINUS}{limit / 2:.3g}", "0"])
        bar.tick_params(labelsize=DIAGRAM_FONTSIZE)
    return fig


def describe_alibi_bias(n_heads: int = 4, seq_len: int = 8) -> str:
    """:func:`plot_alibi_bias` in words, one paragraph for its alt text (same arguments).

    Raises:
        TypeError, ValueError: as :func:`plot_alibi_bias`.
    """
    slopes, biases = _alibi_bias(n_heads, seq_len)
    n_heads, seq_len = biases.shape[:2]
    far = seq_len - 1
    heads = "one head" if n_heads == 1 else f"one per head, {n_heads} heads, two a row"
    scale = "The panel's colour scale runs" if n_heads == 1 else "Each panel has its own scale,"
    text = (
        f"Heat maps of ALiBi's bias on the attention scores ({heads}) for {seq_len} positions: "
        "query i down, key j across, future keys (j after i) greyed out. The bias is minus the "
        "slope m times the distance i minus j: 0 on the diagonal, more negative (darker blue) "
        f"the further back the key. {scale} from 0 (white) to the farthest key's bias (darkest "
        "blue), shown by a colour bar. The slope"
        f"{'s are' if n_heads > 1 else ' is'} {word_list([_slope_label(float(m)) for m in slopes])}"
    )
    if far == 0:
        return text + "; with one position there is no distance, and the bias is 0."
    steep, shallow = int(np.argmax(slopes)), int(np.argmin(slopes))
    text += f", so the farthest key, {far} back, gets {MINUS}{slopes[steep] * far:.3g} from "
    if n_heads == 1:
        return text + "the head."
    return text + (
        f"the steepest head (head {steep + 1}) but only {MINUS}{slopes[shallow] * far:.3g} "
        f"from the shallowest (head {shallow + 1}), which can still look far back: the panels "
        "look alike, and their colour bars tell the heads apart."
    )
