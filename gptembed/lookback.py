"""The lookback task: random ids, and the target at ``t`` is the id ``offset`` places back.

At every position ``t >= offset`` the target is the id at ``t - offset``. Random ids say nothing
about where they sit, so only position can tell a model which earlier id lies ``offset`` places
back: the task the attention toy (:mod:`gptembed.attention_model`) and the five position schemes
(:mod:`gptembed.position_schemes`) are trained on. :func:`order_blind_floor` is the best a model
that cannot see order can do.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_generator,
    check_batch_fits,
    check_in_range,
    check_int,
    check_integer_array,
    check_offset,
)
from .optim import IGNORE


def make_lookback(
    n_sequences: int,
    seq_len: int,
    vocab_size: int,
    offset: int,
    *,
    seed: int | np.random.Generator = 0,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Random ids and their targets: ``targets[:, t] = inputs[:, t - offset]``, else :data:`IGNORE`.

    Returns:
        ``(inputs, targets)``, both ``(B, T)``; ``targets[:, :offset]`` is :data:`IGNORE`.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, ``offset`` not in
            ``[1, seq_len - 1]``, a batch too large for memory, or a seed that is not an
            integer >= 0 or a Generator.
    """
    n_sequences = check_int("n_sequences", n_sequences)
    seq_len = check_int("seq_len", seq_len)
    vocab_size = check_int("vocab_size", vocab_size)
    offset = check_offset(offset, seq_len)
    check_batch_fits(n_sequences, seq_len)
    rng = as_generator(seed)
    inputs = rng.integers(vocab_size, size=(n_sequences, seq_len)).astype(np.intp)
    targets = np.full_like(inputs, IGNORE)
    targets[:, offset:] = inputs[:, :-offset]
    return inputs, targets


def order_blind_floor(vocab_size: int, seq_len: int, offset: int) -> float:
    """The lowest mean loss (nats) of a model that sees the query id and the *set* of earlier ids.

    Such a model (one head reading token rows only, with no position rows, is one) cannot tell
    which earlier id sits ``offset`` back. At query ``t`` the target is one of the ``t`` earlier
    ids, exchangeable, so the best guess for id ``v`` is (its count among them) / ``t``. The
    target's own count is ``1 + Binomial(t - 1, 1/V)``, giving the expected loss
    ``E[ln t - ln(1 + Binomial(t - 1, 1/V))]``, averaged over ``t = offset .. T-1``.
    """
    vocab_size = check_int("vocab_size", vocab_size)
    seq_len = check_int("seq_len", seq_len)
    offset = check_offset(offset, seq_len)
    p = 1.0 / vocab_size
    losses = []
    for t in range(offset, seq_len):
        n = t - 1  # the other earlier ids, besides the target
        counts = np.arange(n + 1)
        log_pmf = np.array(
            [math.lgamma(n + 1) - math.lgamma(c + 1) - math.lgamma(n - c + 1) for c in counts]
        )
        if p < 1.0:
            log_pmf += counts * math.log(p) + (n - counts) * math.log1p(-p)
        else:  # V == 1: every earlier id is the target
            log_pmf = np.where(counts == n, 0.0, -np.inf)
        losses.append(float(np.sum(np.exp(log_pmf) * (math.log(t) - np.log1p(counts)))))
    return float(np.mean(losses))


def order_blind_probs(inputs: ArrayLike, vocab_size: int, offset: int) -> NDArray[np.float64]:
    """The best order-blind model's probabilities on ids ``(B, T)``: what :func:`order_blind_floor`
    is the expected loss of.

    At query ``t >= offset`` the probability of id ``v`` is its count among the ids at positions
    ``0 .. t-1``, divided by ``t``. Its argmax (the most frequent earlier id, the lowest id on a
    tie) is the best order-blind guess. Rows ``t < offset`` have no target; they are uniform.

    Returns:
        ``(B, T, V)`` probabilities; each row sums to 1.

    Raises:
        TypeError, ValueError: ids that are not a 2-D array of integers in ``[0, V)``, or an
            ``offset`` outside ``[1, T - 1]``.
    """
    vocab_size = check_int("vocab_size", vocab_size)
    ids = check_integer_array("inputs", inputs, vocab_size)
    if ids.ndim != 2:
        raise ValueError(f"inputs must have shape (B, T), got {ids.shape}")
    check_in_range("id", ids, vocab_size, "ids")
    seq_len = ids.shape[1]
    offset = check_offset(offset, seq_len)
    seen = np.cumsum(np.eye(vocab_size)[ids], axis=1)  # (B, T, V): counts at positions 0..t
    probs = np.full((*ids.shape, vocab_size), 1.0 / vocab_size)
    earlier = np.arange(offset, seq_len)  # queries t; their earlier ids are 0 .. t-1
    probs[:, offset:] = seen[:, earlier - 1] / earlier[:, None]
    return probs
