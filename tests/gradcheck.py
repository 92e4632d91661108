"""Central finite differences, the one numerical gradient every gradient test compares against."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def numerical_grad(f: Callable[[], float], array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """``d f() / d array`` by central differences, one element at a time.

    ``f`` reads ``array`` (a table of a layer, a model's weights, logits): each element is moved
    by ``+eps`` and ``-eps`` in place, ``f`` is called, and the element is restored exactly.

    Returns:
        A float64 array of ``array``'s shape.
    """
    grad = np.zeros(array.shape, dtype=np.float64)
    for index in np.ndindex(*array.shape):
        saved = array[index].copy()
        array[index] = saved + eps
        up = f()
        array[index] = saved - eps
        down = f()
        array[index] = saved
        grad[index] = (up - down) / (2 * eps)
    return grad
