"""Memory of self-attention's score matrices: the formula, and a numpy measurement beside it.

One head's scores ``softmax(q k^T / sqrt(d))`` form an ``n x n`` matrix, so a batch of them takes
``batch * heads * n^2 * bytes`` per layer, and ``layers`` times that when every layer keeps them
(eager training keeps them for the backward pass). Flash-style kernels never store the matrix:
their memory is linear in ``n``, but their work is still quadratic.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ._checks import check_int
from .measure import peak_bytes


def attention_scores_bytes(
    seq_len: int,
    n_heads: int,
    n_layers: int = 1,
    batch_size: int = 1,
    bytes_per_element: int = 4,
) -> int:
    """Bytes of the attention score matrices: ``batch * heads * layers * seq_len**2 * bytes``.

    Exact Python integer arithmetic (no overflow at any length).

    >>> attention_scores_bytes(1024, n_heads=12) // 2**20  # GPT-2 small, one layer, fp32: MiB
    48

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    n_heads = check_int("n_heads", n_heads)
    n_layers = check_int("n_layers", n_layers)
    batch_size = check_int("batch_size", batch_size)
    bytes_per_element = check_int("bytes_per_element", bytes_per_element)
    return batch_size * n_heads * n_layers * seq_len**2 * bytes_per_element


def attention_probs(q: NDArray[np.floating], k: NDArray[np.floating]) -> NDArray[np.floating]:
    """``softmax(q k^T / sqrt(d))`` for one head, in one ``(n, n)`` buffer updated in place.

    Args:
        q, k: ``(n, d)`` queries and keys of one dtype.

    Returns:
        The ``(n, n)`` attention probabilities; each row sums to 1. The only full-size array
        allocated is the result itself.
    """
    scores = np.matmul(q, k.T)  # (n, n): the one full-size allocation; BLAS reads k.T in place
    # A Python float: an np.float64 scale would make numpy cast float32 scores to float64 and
    # back through 128 KiB of buffers.
    scores *= 1.0 / math.sqrt(q.shape[-1])
    # numpy gives a broadcasting ufunc an iteration buffer of np.getbufsize() elements (8192:
    # 32 KiB in float32) even when, as here, nothing needs casting or copying; a 16-element size
    # keeps the peak at the scores plus O(n) from short sequences up.
    old_bufsize = np.setbufsize(16)
    try:
        scores -= scores.max(axis=-1, keepdims=True)  # (n, 1) temporary: stable softmax
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
    finally:
        np.setbufsize(old_bufsize)
    return scores


def naive_attention_probs(q: NDArray[np.floating], k: NDArray[np.floating]) -> NDArray[np.floating]:
    """Textbook :func:`attention_probs`: each step allocates a new ``(n, n)`` array."""
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def measure_attention_scores_peak(
    seq_len: int,
    head_dim: int = 64,
    dtype: DTypeLike = np.float32,
    naive: bool = False,
    seed: int = 0,
) -> int:
    """Measured peak bytes of computing one head's ``(seq_len, seq_len)`` attention probabilities.

    Queries and keys ``(seq_len, head_dim)`` are drawn before measuring, so they are not counted.
    With ``naive=False`` (:func:`attention_probs`) the peak is ``seq_len**2 * itemsize`` plus
    ``O(seq_len)``: :func:`attention_scores_bytes` with one head. ``naive=True`` measures
    :func:`naive_attention_probs`, whose temporaries cost several times that.

    Raises:
        TypeError, ValueError: ``seq_len`` or ``head_dim`` is not a positive integer.
    """
    seq_len = check_int("seq_len", seq_len)
    head_dim = check_int("head_dim", head_dim)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((seq_len, head_dim)).astype(dtype)
    k = rng.standard_normal((seq_len, head_dim)).astype(dtype)
    fn = naive_attention_probs if naive else attention_probs
    return peak_bytes(lambda: fn(q, k))
