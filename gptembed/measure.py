"""Measuring tools: the peak memory of a call, the exponent of a power law, bytes for people."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ._checks import check_int


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes that ``fn()`` allocates beyond what was allocated before it (tracemalloc).

    numpy reports its array buffers to tracemalloc, so this counts every temporary array. If
    the caller is already tracing, its tracing goes on with its traces kept (only the recorded
    peak is reset, to measure this call); otherwise tracing starts and stops here.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()  # stop() also drops the traces: only ever our own


def loglog_slope(xs: ArrayLike, ys: ArrayLike) -> float:
    """Least-squares slope of ``log(y)`` against ``log(x)``: the exponent ``p`` of ``y ~ x**p``.

    Args:
        xs, ys: two 1-D sequences of the same length (at least 2), all values positive.

    Raises:
        ValueError: the lengths differ, fewer than two points, fewer than two distinct ``x``,
            or a value that is not positive.
    """
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"xs and ys must be 1-D of one length, got shapes {x.shape} and {y.shape}")
    if x.size < 2 or np.unique(x).size < 2:
        raise ValueError(f"need at least two distinct x values, got {x.size} points")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("xs and ys must all be > 0 to take logarithms")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(n_bytes: int, digits: int = 3) -> str:
    """``n_bytes`` in the largest binary unit that keeps the number >= 1.

    Rounded to ``digits`` significant digits (never fewer than the integer part), trailing zeros
    dropped, never in scientific notation.

    >>> format_bytes(48 * 2**20), format_bytes(3 * 2**30), format_bytes(9 * 2**40 // 4)
    ('48 MiB', '3 GiB', '2.25 TiB')

    Raises:
        TypeError, ValueError: ``n_bytes`` is not an integer >= 0, or ``digits`` not >= 1.
    """
    n_bytes = check_int("n_bytes", n_bytes, minimum=0)
    digits = check_int("digits", digits)
    power = 0
    while n_bytes >= 1024 ** (power + 1) and power < len(_BINARY_UNITS) - 1:
        power += 1
    value = n_bytes / 1024**power
    decimals = max(0, digits - len(str(int(value))))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {_BINARY_UNITS[power]}"
