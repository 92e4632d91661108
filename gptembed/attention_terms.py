"""The terms of an attention head's scores, and what a head gives each lag.

With ``x_i = tok_i + pos_i`` a head's score ``s_ij = q_i k_j^T`` splits into four terms
(:class:`ScoreTerms`): token meets token, token meets position, position meets token, position
meets position. :func:`term_spread` says which of them moves attention; :func:`mean_by_lag` and
:func:`attention_by_lag` average a ``(..., T, T)`` array along its diagonals, the profile of a
head by how far back a key lies. The attention toy and the small GPT both use them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int


@dataclass
class ScoreTerms:
    """The four terms of a head's scores, each ``(..., T, T)`` and scaled by ``1 / sqrt(H)``.

    Query ``i`` is the row, key ``j`` the column; ``x_i = tok_i + pos_i``.

    Attributes:
        token_token: ``(tok_i W_q)(tok_j W_k)^T``.
        token_position: ``(tok_i W_q)(pos_j W_k)^T``: the query's token meets the key's position.
        position_token: ``(pos_i W_q)(tok_j W_k)^T``: the query's position meets the key's token.
        position_position: ``(pos_i W_q)(pos_j W_k)^T``; the same for every sequence.
    """

    token_token: NDArray[np.float64]
    token_position: NDArray[np.float64]
    position_token: NDArray[np.float64]
    position_position: NDArray[np.float64]

    def as_dict(self) -> dict[str, NDArray[np.float64]]:
        """The four terms by name, in the order above."""
        return dict(vars(self))

    def total(self) -> NDArray[np.float64]:
        """Their sum: the head's scores (up to rounding)."""
        return self.token_token + self.token_position + self.position_token + self.position_position

    @classmethod
    def from_parts(
        cls,
        query_token: NDArray[np.floating],
        query_position: NDArray[np.floating],
        key_token: NDArray[np.floating],
        key_position: NDArray[np.floating],
        scale: float,
    ) -> ScoreTerms:
        """The four products of queries ``q = query_token + query_position`` and keys
        ``k = key_token + key_position`` (each ``(..., T, H)``), times ``scale``."""

        def term(q: NDArray[np.floating], k: NDArray[np.floating]) -> NDArray[np.float64]:
            return q @ k.swapaxes(-1, -2) * scale

        return cls(
            term(query_token, key_token),
            term(query_token, key_position),
            term(query_position, key_token),
            term(query_position, key_position),
        )


def term_spread(terms: ScoreTerms) -> dict[str, float]:
    """How much each term, and their total, varies across the keys a query may attend to.

    Softmax ignores whatever is constant along a query's row, so what moves attention is a
    term's spread across the keys ``j <= i``. For each term: the variance over ``j <= i``,
    averaged over the queries ``i >= 1`` (and over the sequences of a batch).

    Returns:
        The four names of :meth:`ScoreTerms.as_dict` and ``"total"``, each a variance.

    Raises:
        ValueError: the terms are for fewer than 2 positions.
    """
    named = {**terms.as_dict(), "total": terms.total()}
    seq_len = named["total"].shape[-1]
    if seq_len < 2:
        raise ValueError(
            f"term_spread needs at least 2 positions, got {seq_len}: a query must have two "
            "keys for a term to spread over"
        )
    spread = {}
    for name, term in named.items():
        rows = [term[..., i, : i + 1].var(axis=-1).mean() for i in range(1, seq_len)]
        spread[name] = float(np.mean(rows))
    return spread


def _lag_diagonals(array: NDArray[np.float64], n_lags: int) -> list[NDArray[np.float64]]:
    """``array[..., i, i - lag]`` over the queries ``i >= lag``, for ``lag = 0 .. n_lags - 1``:
    each a ``(..., T - lag)`` view of a ``(..., T, T)`` array (query ``i`` down, key ``j``
    across)."""
    return [np.diagonal(array, -lag, axis1=-2, axis2=-1) for lag in range(n_lags)]


def mean_by_lag(scores: ArrayLike) -> NDArray[np.float64]:
    """``(T,)`` mean of ``scores[..., i, i - lag]`` for ``lag = 0 .. T-1``: what a head gives a key
    ``lag`` places back, averaged over the queries ``i >= lag`` (and the sequences of a batch).

    Args:
        scores: ``(..., T, T)``, query ``i`` the row and key ``j`` the column, such as a term of
            :func:`score_terms` or :attr:`Forward.probs`.

    Raises:
        ValueError: ``scores`` is not a stack of square matrices, or holds a NaN or inf at a key
            a query may see (``j <= i``).
    """
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim < 2 or array.shape[-1] != array.shape[-2] or array.shape[-1] == 0:
        raise ValueError(f"scores must have shape (..., T, T) with T >= 1, got {array.shape}")
    seq_len = array.shape[-1]
    lags = _lag_diagonals(array, seq_len)
    for lag, values in enumerate(lags):
        if not np.isfinite(values).all():
            raise ValueError(f"scores hold a NaN or inf at lag {lag}: the mean would be too")
    return np.array([values.mean() for values in lags])


def attention_by_lag(probs: ArrayLike, max_lag: int) -> NDArray[np.float64]:
    """The mean weight a query puts on the key ``lag`` places back, for ``lag = 0 .. max_lag``.

    Args:
        probs: ``(..., T, T)`` attention weights, query ``i`` down and key ``j`` across (a
            :class:`~gptembed.gpt.BlockTrace`'s ``probs``).
        max_lag: the largest lag, at most ``T - 1``.

    Returns:
        ``(..., max_lag + 1)``: at each lag the mean of ``probs[..., i, i - lag]`` over the
        queries ``i >= lag``.

    Raises:
        ValueError: ``probs`` is not ``(..., T, T)`` with ``T >= 1``, or ``max_lag`` is not in
            ``[0, T - 1]``.
    """
    weights = np.asarray(probs, dtype=np.float64)
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"probs must have shape (..., T, T), got {weights.shape}")
    seq_len = weights.shape[-1]
    max_lag = check_int("max_lag", max_lag, minimum=0)
    if seq_len == 0:
        raise ValueError(f"probs of shape {weights.shape} hold no position: no lag to average")
    if max_lag >= seq_len:
        raise ValueError(f"max_lag must be in [0, {seq_len - 1}], got {max_lag}")
    return np.stack([d.mean(axis=-1) for d in _lag_diagonals(weights, max_lag + 1)], axis=-1)
