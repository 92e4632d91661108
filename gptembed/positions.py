"""Position ids and fixed position tables: which row of a position table each token reads.

A learned table is read at ``position_ids``; :func:`position_ids_from_mask` derives them for a
padded batch. :func:`sinusoidal_table` is the fixed table of the original Transformer, a
reference point beside the learned one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import as_array, check_float, check_float_dtype, check_int

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
    positions = np.arange(max_seq_len, dtype=np.float64)[:, None]  # (L, 1)
    frequencies = base ** (-np.arange(0, embed_dim, 2, dtype=np.float64) / embed_dim)
    angles = positions * frequencies  # (L, D/2)
    table = np.empty((max_seq_len, embed_dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table.astype(resolved, copy=False)
