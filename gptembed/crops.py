"""Reading a stream longer than the model's context, as nanoGPT's ``generate`` does: crop, re-embed.

nanoGPT (github.com/karpathy/nanoGPT, ``model.py``, ``GPT.generate``) crops the stream to its last
``block_size`` ids at every step, and its ``forward`` embeds them at positions ``0 .. T-1``. Once
the crop is full, every id moves down one row of the position table at each step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int, check_integer_array
from .optim import cross_entropy, losses_of_logits


def cropped_stream_losses(
    next_logits: Callable[[NDArray[np.intp]], NDArray[np.floating]],
    inputs: ArrayLike,
    targets: ArrayLike,
    context: int,
) -> NDArray[np.float64]:
    """Mean loss at each step of a stream read through a crop of its last ``context`` ids.

    At step ``n`` the model sees ``inputs[:, max(0, n - context + 1) : n + 1]``, re-embedded from
    position 0, and its logits at the last of them are scored against ``targets[:, n]``.

    Args:
        next_logits: ids ``(B, t)`` -> logits ``(B, t, V)`` (a model's forward pass).
        inputs, targets: ``(B, N)`` ids and next-id targets; a negative target is not scored.
        context: the most ids the model is given (its position table's rows).

    Returns:
        ``(N,)`` mean cross-entropy (nats) over the batch at each step; ``nan`` at a step with
        no scored target.

    Raises:
        ValueError: ``inputs`` and ``targets`` are not ``(B, N)`` of one shape.
        TypeError: ``next_logits`` is not callable, or the targets are not integers.
        TypeError, ValueError: a ``context`` that is not a positive integer.
    """
    if not callable(next_logits):
        raise TypeError(f"next_logits must be a callable taking ids (B, t), got {next_logits!r}")
    ids = np.asarray(inputs)
    y = np.asarray(targets)
    context = check_int("context", context)
    _check_pair(ids, y)
    check_integer_array("targets", y, None)  # a NaN target would pass as "not scored"
    losses = np.full(ids.shape[1], np.nan)
    for n in range(ids.shape[1]):
        scored = y[:, n] >= 0
        if not scored.any():
            continue
        crop = ids[scored, max(0, n - context + 1) : n + 1]  # (b, <= context)
        logits = next_logits(crop)[:, -1]  # (b, V)
        losses[n] = cross_entropy(logits, y[scored, n])[0]
    return losses


_CROP_IDS = 4096
"""How many ids :func:`crop_losses` sends to ``next_logits`` at once: ``max(1, _CROP_IDS //
keep)`` crops, of which only the last logits are kept. All of chapter 10's 2,048 crops of 64 ids
at once would hold 110 MB of float64 logits per run, 63 of every 64 rows unread."""


def crop_losses(
    next_logits: Callable[[NDArray[np.intp]], NDArray[np.floating]],
    inputs: ArrayLike,
    targets: ArrayLike,
    keep: int,
    at: ArrayLike,
) -> NDArray[np.float64]:
    """Loss of each prediction at the positions ``at`` when the model sees only the last ``keep``
    ids: the history-truncation measure of Khandelwal et al. 2018 ("Sharp Nearby, Fuzzy Far
    Away", arXiv:1805.04623, section 4).

    The prediction at position ``n`` is made from ``inputs[:, n - keep + 1 : n + 1]`` alone,
    re-embedded from position 0 (as :func:`cropped_stream_losses` does once its crop is full),
    and scored against ``targets[:, n]``. The crops go to ``next_logits`` a few thousand ids at a
    time, and only each crop's last logits are kept.

    Args:
        next_logits: ids ``(b, keep)`` -> logits ``(b, keep, V)``.
        inputs, targets: ``(B, N)`` ids and next-id targets.
        keep: how many ids the model sees, the last of them the one at ``n``.
        at: positions ``n``, each in ``[keep - 1, N)``.

    Returns:
        ``(B, len(at))`` cross-entropy (nats) of each prediction.

    Raises:
        ValueError: ``inputs`` and ``targets`` are not ``(B, N)`` of one shape; a position of
            ``at`` outside ``[keep - 1, N)``; a target outside ``[0, V)``.
        TypeError: ``next_logits`` is not callable, or the ids or positions not integers.
        TypeError, ValueError: ``keep`` is not a positive integer, or longer than ``N``.
    """
    if not callable(next_logits):
        raise TypeError(f"next_logits must be a callable taking ids (B, t), got {next_logits!r}")
    ids = check_integer_array("inputs", inputs, None)
    y = check_integer_array("targets", targets, None)
    _check_pair(ids, y)
    keep = check_int("keep", keep)
    ends = check_integer_array("at", at, None).reshape(-1)
    n_steps = ids.shape[1]
    if keep > n_steps:
        raise ValueError(f"keep must be at most the {n_steps} ids of each row, got {keep}")
    if ends.size and (ends.min() < keep - 1 or ends.max() >= n_steps):
        raise ValueError(
            f"at must hold positions in [{keep - 1}, {n_steps}) (a full crop of {keep} ids "
            f"ending there), got {ends.min()} to {ends.max()}"
        )
    positions = ends[:, None] - keep + 1 + np.arange(keep)  # (len(at), keep)
    crops = ids[:, positions].reshape(-1, keep).astype(np.intp)  # (B * len(at), keep)
    per = max(1, _CROP_IDS // keep)
    last = [next_logits(crops[i : i + per])[:, -1] for i in range(0, max(len(crops), 1), per)]
    logits = np.concatenate(last)  # (B * len(at), V)
    return losses_of_logits(logits, y[:, ends].reshape(-1)).reshape(len(ids), len(ends))


def _check_pair(ids: NDArray[np.generic], targets: NDArray[np.generic]) -> None:
    """Refuse inputs and targets that are not ``(B, N)`` arrays of one shape."""
    if ids.ndim != 2 or ids.shape != targets.shape:
        raise ValueError(
            "inputs and targets must be (B, N) arrays of one shape, "
            f"got {ids.shape} and {targets.shape}"
        )
