"""Validation helpers shared by the package: each raises with the bad value and the valid range."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import DTypeLike


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


def check_float_dtype(dtype: DTypeLike) -> np.dtype:
    """Return ``dtype`` resolved if it is a floating dtype (float16, float32, float64, ...).

    Raises:
        TypeError: ``dtype`` is not a dtype, or not floating (integers and complex are refused).
    """
    try:
        resolved = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(
            f"dtype must be a floating dtype such as np.float32, got {dtype!r}"
        ) from err
    if resolved.kind != "f":
        raise TypeError(f"dtype must be a floating dtype such as np.float32, got {resolved}")
    return resolved
