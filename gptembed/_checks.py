"""Validation helpers shared by the package: each raises with the bad value and the valid range."""

from __future__ import annotations

import math
import numbers
import os
from functools import cache
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


def check_int_in_range(name: str, value: object, low: int, high: int, where: str = "") -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``[low, high]``.

    ``where`` ends the range's phrase (e.g. ``" for this table"``). The range must not be empty:
    a caller whose range can be empty refuses that first, saying why (a message such as "must be
    in [1, 0]" names no valid value).

    Raises:
        TypeError: ``value`` is not an integer (bools, floats and strings are refused).
        ValueError: ``value`` is outside ``[low, high]``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer in [{low}, {high}]{where}, got {value!r} "
            f"of type {type(value).__name__}"
        )
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"{name} must be in [{low}, {high}]{where}, got {number}")
    return number


def check_seed(seed: object) -> int | None:
    """Return a seed for ``np.random.default_rng``: ``None`` (fresh entropy) or an ``int >= 0``.

    Raises:
        TypeError, ValueError: as :func:`check_int` with ``minimum=0``.
    """
    return None if seed is None else check_int("seed", seed, minimum=0)


def as_generator(seed: object) -> np.random.Generator:
    """``seed`` itself if it is a ``np.random.Generator`` (draws go on from where it is), else a
    new one seeded by it, checked by :func:`check_seed`.

    Raises:
        TypeError, ValueError: as :func:`check_seed`.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_seed(seed))


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` as a ``bool`` if it is one (Python's or numpy's).

    A truthy string such as ``"no"`` or a number would otherwise count as True.

    Raises:
        TypeError: anything else, naming the value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name} must be True or False, got {value!r} of type {type(value).__name__}"
        )
    return bool(value)


def check_rotary_interpolation(scheme: str, value: object) -> float:
    """A rotary model's interpolation factor (``rotary_interpolation`` of the small GPT and its
    config): a finite number >= 1, and 1 for a ``scheme`` other than ``"rotary"``.

    Raises:
        TypeError, ValueError: a value that is not a finite number >= 1, or not 1 for a scheme
            without rotary positions to divide.
    """
    factor = check_float("rotary_interpolation", value, minimum=1)
    if scheme != "rotary" and factor != 1:
        raise ValueError(
            f"rotary_interpolation divides rotary's positions: a {scheme!r} model has none to "
            f"divide, so it must be 1, got {factor}"
        )
    return factor


def check_float(
    name: str,
    value: object,
    *,
    above: float | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
) -> float:
    """Return ``value`` as a ``float`` if it is a finite real number in the given range.

    Args:
        above, minimum, maximum, below: the range, ``value > above``, ``value >= minimum``,
            ``value <= maximum``, ``value < below``; each optional.

    Raises:
        TypeError: ``value`` is not a real number (bools and strings are refused).
        ValueError: ``value`` is NaN, infinite or outside the range.
    """
    bounds = []
    if above is not None:
        bounds.append(f"> {above:g}")
    if minimum is not None:
        bounds.append(f">= {minimum:g}")
    if maximum is not None:
        bounds.append(f"<= {maximum:g}")
    if below is not None:
        bounds.append(f"< {below:g}")
    wanted = " " + " and ".join(bounds) if bounds else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number{wanted}, got {value!r} of type {type(value).__name__}"
        )
    number = float(value)
    if (
        not math.isfinite(number)
        or (above is not None and not number > above)
        or (minimum is not None and not number >= minimum)
        or (maximum is not None and not number <= maximum)
        or (below is not None and not number < below)
    ):
        raise ValueError(f"{name} must be a finite number{wanted}, got {value}")
    return number


def check_type(name: str, value: object, kind: type) -> Any:
    """Return ``value`` if it is an instance of ``kind``.

    Raises:
        TypeError: it is not, naming what it is.
    """
    if not isinstance(value, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise TypeError(
            f"{name} must be {article} {kind.__name__}, got {value!r} of type "
            f"{type(value).__name__}"
        )
    return value


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


def check_integer_array(name: str, values: ArrayLike, limit: int | None) -> NDArray[np.integer]:
    """``values`` as an integer array of any shape; ``[0, limit)`` names the range in the message
    (``None``: no range is named; the caller checks it).

    An empty list is accepted as an empty ``intp`` array (:func:`as_array`).

    Raises:
        TypeError: the values are not integers (floats, bools, strings, objects).
    """
    array = as_array(values)
    if array.dtype.kind not in "iu":
        where = "" if limit is None else f" in [0, {limit})"
        raise TypeError(f"{name} must be integers{where}, got dtype {array.dtype}")
    return array


def check_offset(offset: int, seq_len: int) -> int:
    """``offset`` as an ``int`` in ``[1, seq_len - 1]`` (``seq_len`` already checked).

    Raises:
        TypeError, ValueError: ``offset`` is not such an integer, or ``seq_len < 2``, which
            leaves no room for one.
    """
    if seq_len < 2:
        raise ValueError(
            f"seq_len must be at least 2 for an offset of 1 or more to fit, got {seq_len}"
        )
    return check_int_in_range("offset", offset, 1, seq_len - 1)


def check_record_format(record_format: str, punctuation: str) -> str:
    """Return ``record_format`` if valid: ``'A'`` any letter, ``'9'`` any digit, else literal.

    Literal characters must come from ``punctuation`` (:data:`gptembed.records.PUNCTUATION`), so
    every character belongs to exactly one field class.

    Raises:
        TypeError: not a string.
        ValueError: empty, or a character that is neither ``'A'``, ``'9'`` nor punctuation.
    """
    if not isinstance(record_format, str):
        raise TypeError(
            f"record_format must be a string such as 'AA-99;', got {record_format!r} "
            f"of type {type(record_format).__name__}"
        )
    if not record_format:
        raise ValueError("record_format must hold at least 1 character, got ''")
    for index, ch in enumerate(record_format):
        if ch not in "A9" and ch not in punctuation:
            raise ValueError(
                f"record_format character {ch!r} at index {index} is not allowed: use 'A' "
                f"(any letter), '9' (any digit) or a literal from {punctuation!r}"
            )
    return record_format


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


def check_targets(
    targets: ArrayLike,
    shape: tuple[int, ...],
    n_classes: int,
    *,
    like: str,
    ignore: int | None = None,
) -> NDArray[np.integer]:
    """``targets`` as integer ids in ``[0, n_classes)``, one per prediction, of ``shape``, which
    ``like`` names in the message (``"the inputs' shape"``). An id equal to ``ignore`` (a target
    not scored) is let through.

    Raises:
        TypeError: the targets are not integers.
        ValueError: another shape, or an id outside ``[0, n_classes)`` that is not ``ignore``.
    """
    y = check_integer_array("targets", targets, n_classes)
    if y.shape != shape:
        raise ValueError(f"targets must have {like} {shape}, got {y.shape}")
    scored = y if ignore is None else np.where(y == ignore, 0, y)
    check_in_range("target id", scored, n_classes, "targets")
    return y


def as_real_array(
    name: str, values: ArrayLike, *, dtype: DTypeLike | None = np.float64
) -> NDArray[Any]:
    """``values`` as an array of ``dtype`` (no copy if it already is one), if they are real numbers.

    ``dtype=None`` keeps a floating dtype and makes integers float64.

    Raises:
        TypeError: the values are not real numbers (bools, complex, strings, objects).
    """
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if dtype is None:
        dtype = array.dtype if array.dtype.kind == "f" else np.float64
    return array.astype(dtype, copy=False)


def check_real_array(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """``values`` as a ``float64`` array of any shape, every value a finite real number.

    One pass over the values (``np.isfinite``): cheap beside any analysis of them, and it keeps a
    NaN or an infinity out of LAPACK, which may raise, return NaN or never return.

    Raises:
        TypeError: as :func:`as_real_array`.
        ValueError: a NaN or an infinity, named with its index.
    """
    array = as_real_array(name, values)
    finite = np.isfinite(array)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(
            f"{name} holds {array[where]} at index {where}: every value must be finite"
        )
    return array


@cache
def _memory_bytes() -> int:
    """This machine's memory in bytes, or the largest size numpy can index where the system does
    not say (no ``os.sysconf``)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return int(np.iinfo(np.intp).max)


def check_fits_in_memory(what: str, n_bytes: int) -> None:
    """Refuse an allocation of ``n_bytes`` (exact, a Python int) that this machine's memory cannot
    hold, before numpy tries it.

    numpy's own error names a shape ("Unable to allocate 2.27 PiB for an array with shape
    (10000000000000, 64)") or, past what it can index, nothing ("array is too big"); ``what``
    names the arguments that asked for it, e.g. ``"vocab_size 10 x embed_dim 64 (the token
    table)"``. A size that passes may still fail if the memory is taken by other things.

    Raises:
        ValueError: ``n_bytes`` is more than the machine's memory.
    """
    limit = _memory_bytes()
    if n_bytes > limit:
        raise ValueError(
            f"{what} would take {n_bytes:,} bytes ({n_bytes / 2**30:,.1f} GiB), more than this "
            f"machine's memory ({limit / 2**30:,.1f} GiB)"
        )


def check_batch_fits(n_sequences: int, seq_len: int) -> None:
    """Refuse a ``(n_sequences, seq_len)`` batch of ids (checked sizes) too large for memory, by
    the names of its sizes (numpy's error names only a shape)."""
    check_fits_in_memory(
        f"n_sequences {n_sequences:,} x seq_len {seq_len:,} ids", n_sequences * seq_len * 8
    )
