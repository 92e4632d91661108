"""Validation helpers shared by the package: each raises with the bad value and the valid range."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray


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


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as a ``float`` if it is a finite real number ``> 0`` (not a bool).

    Raises:
        ValueError: anything else, naming the value.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


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


def as_array(values: ArrayLike) -> NDArray[Any]:
    """``values`` as an array; an empty list, which numpy makes float64, as an empty ``intp`` one
    (it holds no bad value, so a check of the dtype must not refuse it)."""
    array = np.asarray(values)
    return array.astype(np.intp) if array.size == 0 and array.dtype.kind == "f" else array


def check_integer_array(name: str, values: ArrayLike, limit: int) -> NDArray[np.integer]:
    """``values`` as an integer array of any shape; ``[0, limit)`` names the range in the message.

    An empty list is accepted as an empty ``intp`` array (:func:`as_array`).

    Raises:
        TypeError: the values are not integers (floats, bools, strings, objects).
    """
    array = as_array(values)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers in [0, {limit}), got dtype {array.dtype}")
    return array


def check_in_range(what: str, array: NDArray[np.integer], limit: int, noun: str) -> None:
    """Check every value of an integer ``array`` lies in ``[0, limit)``.

    Raises:
        ValueError: naming the first offending value and its index, e.g. ``token id 99 at index
            (1, 1) is out of range: ids must be in [0, 11)``.
    """
    if array.size == 0:
        return
    low, high = array.min(), array.max()
    if low < 0 or high >= limit:
        bad = low if low < 0 else high
        where = tuple(int(i) for i in np.argwhere(array == bad)[0])
        raise ValueError(
            f"{what} {bad} at index {where} is out of range: {noun} must be in [0, {limit})"
        )
