"""Measuring tools: the peak memory of a call, the exponent of a power law, bytes for people."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from ._checks import check_int, check_real_array

# tracemalloc keeps one peak for the whole process, and a measurement resets it. So measurements
# take turns (a thread waits for another's to end), and a nested one first hands the peak it is
# about to reset to every measurement around it: the highest traced bytes each has seen so far.
_turn = threading.RLock()
_highest: list[int] = []  # one entry per measurement under way, outermost first


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes that ``fn()`` allocates beyond what was allocated before it (tracemalloc).

    numpy reports its array buffers to tracemalloc, so this counts every temporary array. If
    the caller is already tracing, its tracing goes on with its traces kept (only the recorded
    peak is reset, to measure this call); otherwise tracing starts and stops here.

    A measurement may be nested inside another (``fn`` may call ``peak_bytes``): each reports
    its own peak. Measurements in two threads take turns, one waiting for the other to end;
    allocations by other threads that are not measuring are counted, as tracemalloc sees them.

    Raises:
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {fn!r}")
    with _turn:
        was_tracing = tracemalloc.is_tracing()
        if not was_tracing:
            tracemalloc.start()
        try:
            before, peak = tracemalloc.get_traced_memory()
            _highest[:] = [max(seen, peak) for seen in _highest]  # before the reset loses it
            tracemalloc.reset_peak()
            _highest.append(before)
            try:
                fn()
            finally:
                highest = max(_highest.pop(), tracemalloc.get_traced_memory()[1])
            return highest - before
        finally:
            if not was_tracing:
                tracemalloc.stop()  # stop() also drops the traces: only ever our own


def loglog_slope(xs: ArrayLike, ys: ArrayLike) -> float:
    """Least-squares slope of ``log(y)`` against ``log(x)``: the exponent ``p`` of ``y ~ x**p``.

    Args:
        xs, ys: two 1-D sequences of the same length (at least 2), all values positive.

    Raises:
        TypeError: a value that is not a real number.
        ValueError: a NaN or an infinity, the lengths differ, fewer than two points, fewer than
            two distinct ``x``, or a value that is not positive.
    """
    x = check_real_array("xs", xs)
    y = check_real_array("ys", ys)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"xs and ys must be 1-D of one length, got shapes {x.shape} and {y.shape}")
    distinct = np.unique(x).size
    if distinct < 2:
        raise ValueError(
            f"need at least two distinct x values, got {distinct} (xs holds {x.size} values)"
        )
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
    unit = 1024**power
    decimals = max(0, digits - len(str(n_bytes // unit)))
    # n_bytes / unit rounded to `decimals` places, half to even, in exact integers: a float
    # overflows past 1.8e308 bytes.
    scaled = round(Fraction(n_bytes * 10**decimals, unit))
    whole, fraction = divmod(scaled, 10**decimals)
    text = f"{whole}.{fraction:0{decimals}d}".rstrip("0").rstrip(".") if decimals else str(whole)
    return f"{text} {_BINARY_UNITS[power]}"
