"""Position ids, and the position signals that are not a learned table.

A learned table is read at ``position_ids``; :func:`position_ids_from_mask` derives them for a
padded batch, :func:`random_start_rows` for windows trained at random start rows. The other
schemes of :data:`SCHEMES` are formulas: :func:`sinusoidal_table`, the fixed table of the
original Transformer; :func:`rotate`, rotary positions (RoPE), which turn
queries and keys, with their wavelengths (:func:`rotary_wavelengths`) and the base that NTK-aware
scaling gives a longer context (:func:`ntk_base`); and ALiBi's linear bias on the scores
(:func:`linear_bias`, :func:`alibi_slopes`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import (
    as_array,
    as_generator,
    as_real_array,
    check_bool,
    check_float,
    check_float_dtype,
    check_int,
    check_real_array,
)

Scheme = Literal["learned", "sinusoidal", "rotary", "alibi", "none"]
SCHEMES: tuple[Scheme, ...] = ("learned", "sinusoidal", "rotary", "alibi", "none")
"""Five ways of giving a model position, in the order the book shows them: a learned table
(GPT-2), a fixed sinusoidal table (Vaswani et al. 2017), rotary positions (Su et al. 2021),
ALiBi's linear bias (Press et al. 2021), and none (only the causal mask)."""

PAD_POSITION = 0
"""The position id :func:`position_ids_from_mask` gives padded slots.

Any valid row would do: the layer gathers a row for every slot, padding included, before the
attention mask discards the padded ones, so the id must only be a row the table has. Row 0
exists in every table (Hugging Face's generation code fills 1, which needs two rows).
"""


def position_ids_from_mask(attention_mask: ArrayLike) -> NDArray[np.intp]:
    """Position ids ``(B, T)`` for a padded batch: each real token counts from 0 in its row.

    The Hugging Face generation convention: the cumulative sum of the mask along each row minus
    one, so a left-padded row ``[0, 0, 1, 1, 1]`` reads positions ``[., ., 0, 1, 2]``, exactly the
    rows it reads unpadded. Padded slots get :data:`PAD_POSITION` (0). A row with no real token
    is allowed (a batch may carry an empty slot) and gets 0 everywhere.

    >>> position_ids_from_mask([[0, 0, 1, 1, 1], [1, 1, 1, 1, 0]]).tolist()
    [[0, 0, 0, 1, 2], [0, 1, 2, 3, 0]]

    Args:
        attention_mask: ``(B, T)`` of 0/1 integers or bools, 1 for a real token, 0 for padding.

    Returns:
        ``(B, T)`` ``intp`` position ids, each in ``[0, T)``.

    Raises:
        TypeError: the mask is not integer or bool.
        ValueError: the mask is not 2-D, or holds a value other than 0 and 1.
    """
    mask = as_array(attention_mask)
    if mask.ndim != 2:
        raise ValueError(
            f"attention_mask must have shape (B, T), got {mask.ndim} dimensions "
            f"with shape {mask.shape}"
        )
    if mask.dtype.kind not in "biu":
        raise TypeError(f"attention_mask must hold 0/1 integers or bools, got dtype {mask.dtype}")
    real = mask.astype(bool)
    if mask.dtype.kind != "b" and (real != mask).any():
        bad = mask[real != mask].flat[0]
        where = tuple(int(i) for i in np.argwhere(real != mask)[0])
        raise ValueError(
            f"attention_mask value {bad} at index {where} is not allowed: values must be 0 or 1"
        )
    positions = np.cumsum(real, axis=1, dtype=np.intp) - 1  # (B, T); -1 before the first token
    positions[~real] = PAD_POSITION
    return positions


def random_start_rows(
    n_windows: int, seq_len: int, max_start: int, *, seed: int | np.random.Generator
) -> NDArray[np.intp]:
    """Position ids ``(n_windows, seq_len)`` of windows moved to random start rows: window ``b``
    reads rows ``s_b .. s_b + seq_len - 1``, ``s_b`` drawn uniformly from ``[0, max_start]``.

    Randomised (shifted) positions, as Kiyono et al. 2021 ("SHAPE", arXiv:2109.05644) and
    Ruoss et al. 2023 (arXiv:2305.16843) train them: a table of ``seq_len + max_start`` rows is
    trained to its last row while every window stays ``seq_len`` long
    (:attr:`GPTConfig.max_start <gptembed.gpt_config.GPTConfig>`).

    >>> random_start_rows(2, 3, 4, seed=0).tolist()
    [[4, 5, 6], [3, 4, 5]]

    Raises:
        TypeError, ValueError: a size not an integer >= 1 (``max_start``: >= 0), or ``seed``
            not an integer >= 0 or a Generator.
    """
    n_windows = check_int("n_windows", n_windows)
    seq_len = check_int("seq_len", seq_len)
    max_start = check_int("max_start", max_start, minimum=0)
    starts = as_generator(seed).integers(0, max_start + 1, size=n_windows)  # (B,)
    return (starts[:, None] + np.arange(seq_len)).astype(np.intp)


def sinusoidal_table(
    max_seq_len: int, embed_dim: int, base: float = 10000.0, *, dtype: DTypeLike = np.float64
) -> NDArray[np.floating]:
    """The fixed ``(L, D)`` position table of Vaswani et al. 2017, "Attention Is All You Need".

    ``table[t, 2i] = sin(t / base**(2i / D))`` and ``table[t, 2i + 1] = cos(t / base**(2i / D))``:
    each pair of dimensions is a rotation at its own frequency, from one radian per position
    (``i = 0``) down to about ``1 / base``.

    Args:
        max_seq_len: ``L``, rows (positions ``0 .. L-1``).
        embed_dim: ``D``, an even width (sin and cos come in pairs).
        base: the wavelength scale; 10,000 in the paper.
        dtype: a floating dtype of the result (computed in float64).

    Raises:
        TypeError: a size is not an integer, ``base`` is not a number, or ``dtype`` not floating.
        ValueError: a size is not positive, ``embed_dim`` is odd, or ``base`` is not > 1.
    """
    max_seq_len = check_int("max_seq_len", max_seq_len)
    embed_dim = check_int("embed_dim", embed_dim)
    if embed_dim % 2:
        raise ValueError(
            f"embed_dim must be even (sin and cos dimensions come in pairs), got {embed_dim}"
        )
    base = check_float("base", base, above=1)
    resolved = check_float_dtype(dtype)
    angles = np.arange(max_seq_len, dtype=np.float64)[:, None] * _frequencies(embed_dim, base)
    table = np.empty((max_seq_len, embed_dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table.astype(resolved, copy=False)


def _frequencies(width: int, base: float) -> NDArray[np.float64]:
    """``(width / 2,)`` angular frequencies ``base**(-2i / width)``, one radian per position
    first."""
    return base ** (-np.arange(0, width, 2, dtype=np.float64) / width)


@lru_cache(maxsize=16)
def _angles(seq_len: int, head_dim: int, base: float) -> tuple[NDArray[np.float64], ...]:
    """``(sin, cos)``, each ``(T, H/2)``: the rotary angles' sines and cosines, read-only."""
    table = sinusoidal_table(seq_len, head_dim, base)  # (T, H): sin, cos, sin, cos, ...
    sin, cos = np.ascontiguousarray(table[:, 0::2]), np.ascontiguousarray(table[:, 1::2])
    sin.flags.writeable = cos.flags.writeable = False
    return sin, cos


def rotate(
    a: ArrayLike, base: float, inverse: bool = False, *, positions: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Rotate each pair of dimensions ``(2i, 2i + 1)`` of ``(..., T, H)`` by ``t * theta_i``.

    ``theta_i = base**(-2i / H)``: the frequencies of :func:`sinusoidal_table`, whose sine and
    cosine columns are exactly what the rotation needs. Rotating a query at ``i`` and a key at
    ``j`` leaves their dot product a function of ``i - j``, because rotations compose:
    ``R(i)^T R(j) = R(j - i)``. ``inverse`` rotates by ``-t * theta_i`` (the transpose), which is
    how a gradient goes back through the rotation.

    A position may be fractional: position interpolation (Chen et al. 2023,
    arXiv:2306.15595) turns position ``m`` of a longer sequence by ``m / s``, inside the range
    of angles the model was trained on.

    Args:
        a: ``(..., T, H)`` queries or keys.
        base: the wavelength scale (10,000 in RoPE).
        inverse: rotate the other way.
        positions: the position ``t`` of each row, real numbers >= 0 (integers or not)
            broadcastable to ``a.shape[:-1]``; by default ``0 .. T-1``.

    Returns:
        The rotated array, of ``a``'s floating dtype (integers are rotated in float64).

    Raises:
        TypeError: ``a`` or ``positions`` does not hold real numbers, or ``inverse`` is not a
            bool.
        TypeError, ValueError: ``base`` is not a finite number > 1.
        ValueError: ``a`` is not ``(..., T, H)`` with ``T >= 1`` and an even ``H >= 2``;
            ``positions`` holds a NaN, an infinity or a negative number, or does not broadcast
            to ``a.shape[:-1]``.
    """
    a = as_real_array("a", a, dtype=None)  # a float array as it is; integers as float64
    if a.ndim < 2 or a.shape[-2] == 0 or a.shape[-1] == 0 or a.shape[-1] % 2:
        raise ValueError(
            f"a must have shape (..., T, H) with T >= 1 and an even H >= 2, got {a.shape}"
        )
    base = check_float("base", base, above=1)
    if positions is None:
        sin, cos = _angles(*a.shape[-2:], base)  # (T, H/2) each
    else:
        at = check_real_array("positions", positions)  # float64, finite
        if at.size and at.min() < 0:
            raise ValueError(f"positions must be >= 0, got {at.min()}")
        try:
            fits = np.broadcast_shapes(at.shape, a.shape[:-1]) == a.shape[:-1]
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"positions of shape {at.shape} do not broadcast to a's {a.shape[:-1]}"
            )
        # the angles of the positions as given (one per position, not per head): they
        # broadcast against ``a`` in the products below
        angles = at[..., None] * _frequencies(a.shape[-1], base)
        sin, cos = np.sin(angles), np.cos(angles)  # (..., T, H/2) each
    if check_bool("inverse", inverse):
        sin = -sin
    even, odd = a[..., 0::2], a[..., 1::2]
    out = np.empty_like(a)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rotary_wavelengths(head_dim: int, base: float = 10000.0) -> NDArray[np.float64]:
    """``(H/2,)`` positions per full turn of each rotary pair, ``2 pi / theta_i``, fastest first.

    Pair ``i`` turns ``theta_i = base**(-2i / H)`` radians a position (:func:`rotate`), so it
    comes back to where it started every ``2 pi base**(2i / H)`` positions. A model trained on
    ``T`` positions has seen every angle of the pairs whose wavelength is at most ``T``; a
    slower pair has turned only part of its circle by ``T``, and past ``T`` it reaches angles
    no training window showed it.

    >>> rotary_wavelengths(4, base=100.0).round(2).tolist()
    [6.28, 62.83]

    Raises:
        TypeError, ValueError: ``head_dim`` is not an even integer >= 2, or ``base`` not a
            finite number > 1.
    """
    head_dim = check_int("head_dim", head_dim, minimum=2)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (rotary turns pairs), got {head_dim}")
    return 2 * np.pi / _frequencies(head_dim, check_float("base", base, above=1))


def ntk_base(base: float, factor: float, head_dim: int) -> float:
    """The rotary base that NTK-aware scaling gives a model run ``factor`` times longer than it
    was trained, without training: ``base * factor**(H / (H - 2))``.

    The rule of bloc97 (2023), as YaRN states it (Peng et al. 2023, arXiv:2309.00071, section
    3.1): the fastest pair keeps its rate, one radian a position, so the model still tells
    neighbours apart, while the slowest pair (``i = H/2 - 1``) turns ``factor`` times more
    slowly, as position interpolation would turn it; the pairs between slow down by less the
    faster they are. Set it with ``dataclasses.replace(model, rotary_base=ntk_base(...))``.

    >>> round(ntk_base(10000.0, 4.0, 16))
    48761

    Args:
        base: the base the model was trained with, a finite number > 1.
        factor: ``s``, how many times the trained length the model is to run, a finite
            number >= 1 (1 keeps ``base``).
        head_dim: ``H``, the width of a head, an even integer >= 4 (with one pair, ``H = 2``,
            the fastest pair is the slowest and the rule has no answer).

    Raises:
        TypeError, ValueError: an argument outside its range.
    """
    base = check_float("base", base, above=1)
    factor = check_float("factor", factor, minimum=1)
    head_dim = check_int("head_dim", head_dim, minimum=4)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (rotary turns pairs), got {head_dim}")
    return base * factor ** (head_dim / (head_dim - 2))


def linear_bias(seq_len: int, slope: float) -> NDArray[np.float64]:
    """ALiBi's ``(T, T)`` bias: ``-slope * (i - j)`` for query ``i`` and key ``j``.

    Entries above the diagonal (keys in the future) are masked anyway.

    Raises:
        TypeError, ValueError: ``seq_len`` is not an integer >= 1, or ``slope`` not a finite
            number > 0 (as :class:`~gptembed.position_schemes.SchemeConfig`'s ``alibi_slope``).
    """
    seq_len = check_int("seq_len", seq_len)
    slope = check_float("slope", slope, above=0)
    t = np.arange(seq_len, dtype=np.float64)
    return slope * (t[None, :] - t[:, None])  # (j - i), so the diagonal is +0.0, not -0.0


def alibi_slopes(n_heads: int) -> NDArray[np.float64]:
    """ALiBi's slopes, one a head: the geometric sequence of Press, Smith & Lewis 2021 (section 3).

    For ``n`` heads, ``n`` a power of 2, the slopes start at ``2**(-8/n)`` and each is the last
    times ``2**(-8/n)``: for 4 heads 1/4, 1/16, 1/64, 1/256; for 8 heads 1/2, 1/4, ..., 1/256.
    For other ``n`` the paper's code takes the slopes of the power of 2 below ``n`` and fills the
    rest with every other slope of twice that power.

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]

    Raises:
        TypeError, ValueError: ``n_heads`` is not an integer >= 1.
    """
    n_heads = check_int("n_heads", n_heads)

    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    below = 1 << (n_heads.bit_length() - 1)  # the power of 2 at or below n_heads
    slopes = power_of_two(below)
    if below < n_heads:
        slopes += alibi_slopes(2 * below).tolist()[0::2][: n_heads - below]
    return np.array(slopes)
