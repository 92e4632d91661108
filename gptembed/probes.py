"""Looking inside a position table: how alike its rows are, pair by pair and at a fixed lag."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int


def cosine_similarity_matrix(table: ArrayLike) -> NDArray[np.float64]:
    """``(L, L)`` cosine similarity between every pair of rows of an ``(L, D)`` table.

    Raises:
        ValueError: ``table`` is not 2-D, or a row is all zeros (its direction is undefined).
    """
    rows = np.asarray(table, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"table must be a 2-D (L, D) array, got shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1)  # (L,)
    if rows.size and not norms.all():
        bad = int(np.flatnonzero(norms == 0)[0])
        raise ValueError(f"row {bad} is all zeros: cosine similarity needs nonzero rows")
    unit = rows / norms[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def lagged_similarity(table: ArrayLike, lag: int) -> NDArray[np.float64]:
    """``(L - lag,)`` cosine similarity of row ``t`` with row ``t + lag``, for ``t = 0 .. L-lag-1``.

    Raises:
        ValueError: ``lag`` is not in ``[1, L - 1]``, or as :func:`cosine_similarity_matrix`.
    """
    sims = cosine_similarity_matrix(table)  # (L, L)
    lag = check_int("lag", lag)
    if lag >= len(sims):
        raise ValueError(f"lag must be in [1, {len(sims) - 1}] for this table, got {lag}")
    return np.diagonal(sims, offset=lag).copy()
