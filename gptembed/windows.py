"""Reading a stream longer than the context window, as nanoGPT's ``generate`` does: crop, re-embed.

nanoGPT (github.com/karpathy/nanoGPT, ``model.py``, ``GPT.generate``) runs the model on the last
``block_size`` ids at every step, and its ``forward`` embeds them at positions ``0 .. T-1``. Once
the window is full, every id moves down one row of the position table at each step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int, check_integer_array
from .optim import cross_entropy


def sliding_window_losses(
    next_logits: Callable[[NDArray[np.intp]], NDArray[np.floating]],
    inputs: ArrayLike,
    targets: ArrayLike,
    window: int,
) -> NDArray[np.float64]:
    """Mean loss at each step of a stream read through a window of its last ``window`` ids.

    At step ``n`` the model sees ``inputs[:, max(0, n - window + 1) : n + 1]``, re-embedded from
    position 0, and its logits at the last of them are scored against ``targets[:, n]``.

    Args:
        next_logits: ids ``(B, t)`` -> logits ``(B, t, V)`` (a model's forward pass).
        inputs, targets: ``(B, N)`` ids and next-id targets; a negative target is not scored.
        window: the longest context the model is given (its position table's rows).

    Returns:
        ``(N,)`` mean cross-entropy (nats) over the batch at each step; ``nan`` at a step with
        no scored target.

    Raises:
        ValueError: ``inputs`` and ``targets`` are not ``(B, N)`` of one shape.
        TypeError: ``next_logits`` is not callable, or the targets are not integers.
        TypeError, ValueError: a ``window`` that is not a positive integer.
    """
    if not callable(next_logits):
        raise TypeError(f"next_logits must be a callable taking ids (B, t), got {next_logits!r}")
    ids = np.asarray(inputs)
    y = np.asarray(targets)
    window = check_int("window", window)
    if ids.ndim != 2 or ids.shape != y.shape:
        raise ValueError(
            f"inputs and targets must be (B, N) arrays of one shape, got {ids.shape} and {y.shape}"
        )
    check_integer_array("targets", y, None)  # a NaN target would pass as "not scored"
    losses = np.full(ids.shape[1], np.nan)
    for n in range(ids.shape[1]):
        scored = y[:, n] >= 0
        if not scored.any():
            continue
        context = ids[scored, max(0, n - window + 1) : n + 1]  # (b, <= window)
        logits = next_logits(context)[:, -1]  # (b, V)
        losses[n] = cross_entropy(logits, y[scored, n])[0]
    return losses
