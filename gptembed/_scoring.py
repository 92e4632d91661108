"""Which positions of a batch are scored: those whose target is not ``optim.IGNORE``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_targets
from .optim import IGNORE


def scored_positions(logits: NDArray[np.floating], targets: ArrayLike) -> NDArray[np.bool_]:
    """Where ``targets`` (the ids' shape) is not :data:`IGNORE`: the positions that are scored.

    Raises:
        TypeError: targets that are not integers.
        ValueError: targets of another shape, a target outside ``[0, V)`` that is not IGNORE,
            an empty batch, or no position to score.
    """
    shape, n_classes = logits.shape[:-1], logits.shape[-1]
    y = check_targets(targets, shape, n_classes, like="the ids' shape", ignore=IGNORE)
    if y.size == 0:
        raise ValueError(
            f"the batch is empty (targets of shape {y.shape}): there is nothing to score"
        )
    scored = y != IGNORE
    if not scored.any():
        raise ValueError(f"every target is IGNORE ({IGNORE}): there is nothing to score")
    return scored
