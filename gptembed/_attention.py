"""The one-head attention arithmetic that the attention model and the position schemes share.

Projections, scores, the backward pass (:mod:`gptembed.attention_model`,
:mod:`gptembed.position_schemes`), and the check that a training step's scores fit in memory.

The functions read a model and a forward pass through the fields they need (:class:`Head`,
:class:`Pass`): :class:`~gptembed.attention_model.AttentionModel` and
:class:`~gptembed.attention_model.Forward` have them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import flat_rows
from ._checks import check_fits_in_memory
from ._scoring import scored_positions
from .attention_cost import attention_scores_bytes
from .embedding import GPTStyleEmbedding
from .optim import cross_entropy


class Head(Protocol):
    """The arrays of a one-head model: embedding, ``(D, H)`` projections, ``(H, V)`` read-out."""

    embedding: GPTStyleEmbedding
    w_query: NDArray[np.float64]
    w_key: NDArray[np.float64]
    w_value: NDArray[np.float64]
    w_out: NDArray[np.float64]


class Pass(Protocol):
    """What the backward pass reads of a forward pass, batch-first ``(B, T, ...)``."""

    x: NDArray[np.floating]
    q: NDArray[np.float64]
    k: NDArray[np.float64]
    v: NDArray[np.float64]
    probs: NDArray[np.float64]
    out: NDArray[np.float64]
    logits: NDArray[np.float64]


def check_step_fits(batch_size: int, seq_len: int) -> None:
    """Refuse a run whose training step's ``(B, T, T)`` float64 scores would not fit in memory."""
    check_fits_in_memory(
        f"a training step's scores, batch_size {batch_size:,} x seq_len**2 "
        f"{seq_len**2:,} in float64,",
        attention_scores_bytes(seq_len, 1, 1, batch_size, 8),
    )


def project(
    model: Head, x: NDArray[np.floating]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Queries, keys and values ``(B, T, H)`` of embedded inputs ``(B, T, D)``."""
    return x @ model.w_query, x @ model.w_key, x @ model.w_value


def head_scores(q: NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
    """``q k^T / sqrt(H)``: ``(B, Tq, Tk)`` for queries ``(B, Tq, H)`` and keys ``(B, Tk, H)``."""
    return q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])


def _masked_loss(
    logits: NDArray[np.float64], targets: ArrayLike
) -> tuple[float, NDArray[np.float64]]:
    """Cross-entropy over positions whose target is not :data:`IGNORE`, and its gradient."""
    scored = scored_positions(logits, targets)
    loss, dscored = cross_entropy(logits[scored], np.asarray(targets)[scored])
    dlogits = np.zeros_like(logits)
    dlogits[scored] = dscored
    return loss, dlogits


def backward_from(
    model: Head,
    f: Pass,
    ids: NDArray[np.intp],
    targets: ArrayLike,
    rotate_back: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """The mean cross-entropy over the scored positions and every gradient, from the forward
    pass ``f`` of ``(B, T)`` ``ids``; the gradients are keyed as the model's parameters.

    ``rotate_back`` serves a head whose queries and keys were rotated after their projections
    (rotary positions, :mod:`gptembed.position_schemes`): ``f.q`` and ``f.k`` are the rotated
    ones, and it maps gradients ``(B, T, H)`` with respect to them back to the projections'.
    """
    loss, dlogits = _masked_loss(f.logits, targets)  # (B, T, V)
    grad_out = flat_rows(f.out).T @ flat_rows(dlogits)  # (H, V)
    grad_b = dlogits.sum(axis=(0, 1))
    dout = dlogits @ model.w_out.T  # (B, T, H)
    dprobs = dout @ f.v.swapaxes(-1, -2)  # (B, T, T)
    dv = f.probs.swapaxes(-1, -2) @ dout  # (B, T, H)
    # Softmax backward, row by row: ds = p * (dp - sum_j p dp); masked entries have p = 0.
    dprobs -= np.sum(f.probs * dprobs, axis=-1, keepdims=True)  # in place: dprobs is ours
    dscores = np.multiply(dprobs, f.probs, out=dprobs)
    dscores /= math.sqrt(model.w_query.shape[1])
    dq = dscores @ f.k  # (B, T, H)
    dk = dscores.swapaxes(-1, -2) @ f.q  # (B, T, H)
    if rotate_back is not None:
        dq, dk = rotate_back(dq), rotate_back(dk)
    dx = dq @ model.w_query.T + dk @ model.w_key.T + dv @ model.w_value.T  # (B, T, D)
    # the tables' gradients, keyed as parameters() keys the tables: (V, D) and (T, D)
    grads = dict(zip(model.embedding.parameters(), model.embedding.backward(dx, ids), strict=True))
    x_t = flat_rows(f.x).T  # (D, B*T)
    grads.update(
        w_query=x_t @ flat_rows(dq), w_key=x_t @ flat_rows(dk), w_value=x_t @ flat_rows(dv)
    )
    grads.update(w_out=grad_out, b_out=grad_b)
    return loss, grads
