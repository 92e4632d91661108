"""Validation helpers shared by the package: each raises with the bad value and the valid range."""

from __future__ import annotations

import numbers


def check_int(name: str, value: object, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``.

    Raises:
        TypeError: ``value`` is not an integer (bools, floats and strings are refused).
        ValueError: ``value < minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer >= {minimum}, got {value!r} of type {type(value).__name__}"
        )
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)
