"""Marker streams: random ids in which a few ids are markers, and the question "which came last?".

Ids ``0 .. M-1`` are markers, the rest filler. Each position holds a marker with probability
``rate`` (its kind drawn uniformly), else a filler id drawn uniformly. The target at every
position is the most recent marker at or before it: a question of order, but of *recency* only,
where the lookback task of :mod:`gptembed.attention_model` asks for one exact distance. A model
that sees the earlier ids as an unordered bag can only guess among the markers it has seen.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_generator,
    check_batch_fits,
    check_float,
    check_int,
    check_int_in_range,
    check_integer_array,
)
from .optim import IGNORE


def make_latest_marker(
    n_sequences: int,
    seq_len: int,
    vocab_size: int,
    *,
    n_markers: int,
    rate: float,
    seed: int | np.random.Generator = 0,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """A marker stream and, at each position, the most recent marker at or before it.

    >>> inputs, targets = make_latest_marker(1, 10, vocab_size=8, n_markers=2, rate=0.3, seed=4)
    >>> inputs.tolist()  # ids 0 and 1 are the markers
    [[7, 4, 6, 0, 5, 7, 5, 1, 4, 5]]
    >>> targets.tolist()  # -1 (IGNORE) before the first marker
    [[-1, -1, -1, 0, 0, 0, 0, 1, 1, 1]]

    Returns:
        ``(inputs, targets)``, both ``(B, T)``; :data:`IGNORE` before a row's first marker.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, ``n_markers`` not in
            ``[1, V - 1]`` (some ids must be filler), a rate outside ``(0, 1]``, a batch too
            large for memory, or a seed that is not an integer >= 0 or a Generator.
    """
    n_sequences = check_int("n_sequences", n_sequences)
    seq_len = check_int("seq_len", seq_len)
    vocab_size = check_int("vocab_size", vocab_size)
    n_markers = check_marker_count(n_markers, vocab_size)
    rate = check_marker_rate(rate)
    check_batch_fits(n_sequences, seq_len)
    rng = as_generator(seed)
    shape = (n_sequences, seq_len)
    is_marker = rng.random(shape) < rate
    kinds = rng.integers(n_markers, size=shape)
    filler = rng.integers(n_markers, vocab_size, size=shape)
    inputs = np.where(is_marker, kinds, filler).astype(np.intp)  # (B, T)
    back = latest_marker_distance(inputs, n_markers)  # (B, T); IGNORE before the first marker
    latest = np.arange(seq_len) - np.maximum(back, 0)  # (B, T): where the answer sits
    picked = np.take_along_axis(inputs, latest, axis=1)
    return inputs, np.where(back >= 0, picked, IGNORE).astype(np.intp)


def latest_marker_distance(inputs: ArrayLike, n_markers: int) -> NDArray[np.intp]:
    """How far back the latest marker at or before each position lies: the answer's distance.

    0 where the position holds a marker itself; :data:`~gptembed.optim.IGNORE` (-1)
    where no marker has come yet, which is where :func:`make_latest_marker` has no target. A
    position ``t`` at distance ``d >= 0`` has the target ``inputs[..., t - d]``.

    >>> latest_marker_distance([7, 4, 6, 0, 5, 7, 5, 1, 4, 5], n_markers=2).tolist()
    [-1, -1, -1, 0, 1, 2, 3, 0, 1, 2]

    Args:
        inputs: ``(T,)`` or ``(B, T)`` ids; ids ``0 .. n_markers - 1`` are the markers.

    Returns:
        The distances, of the inputs' shape.

    Raises:
        TypeError: ids that are not integers, or ``n_markers`` not an integer.
        ValueError: inputs that are not ``(T,)`` or ``(B, T)``, a negative id, or
            ``n_markers < 1``.
    """
    ids = check_integer_array("inputs", inputs, None)
    if ids.ndim not in (1, 2):
        raise ValueError(f"inputs must have shape (T,) or (B, T), got {ids.shape}")
    if ids.size and ids.min() < 0:
        raise ValueError(f"ids must be >= 0, got {ids.min()}")
    n_markers = check_int("n_markers", n_markers)
    t = np.arange(ids.shape[-1])  # (T,)
    where = np.where(ids < n_markers, t, -1)  # a marker's own index, else -1
    latest = np.maximum.accumulate(where, axis=-1)  # index of the latest marker so far
    return np.where(latest >= 0, t - latest, IGNORE).astype(np.intp)


def check_marker_count(n_markers: object, vocab_size: int) -> int:
    """``n_markers`` as an ``int`` in ``[1, V - 1]``: some ids must be left for filler.

    Raises:
        TypeError: not an integer.
        ValueError: ``V < 2`` (no room for a marker and a filler id), or outside ``[1, V - 1]``.
    """
    if vocab_size < 2:
        raise ValueError(
            f"vocab_size must be at least 2 for a marker and a filler id, got {vocab_size}"
        )
    return check_int_in_range(
        "n_markers", n_markers, 1, vocab_size - 1, " (some ids must be filler)"
    )


def check_marker_rate(rate: object) -> float:
    """``rate`` as a ``float`` in ``(0, 1]``, the chance that a position holds a marker.

    Raises:
        TypeError: not a real number (bools refused).
        ValueError: not in ``(0, 1]``.
    """
    return check_float("rate", rate, above=0, maximum=1)
