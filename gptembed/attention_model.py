"""A one-head causal attention model that must use position: copy the token ``offset`` places back.

The task: ids drawn uniformly at random, and at every position ``t >= offset`` the target is the id
at ``t - offset``. Random ids say nothing about where they sit, so only the position rows can tell
the head which key lies ``offset`` places back. The model, for ids ``(B, T)``::

    x = wte[ids] + wpe[0:T]                       # (B, T, D)
    q, k, v = x @ W_q, x @ W_k, x @ W_v           # (B, T, H) each
    s = q @ k^T / sqrt(H), causal mask            # (B, T, T): query i, key j <= i
    p = softmax(s) over j                         # (B, T, T)
    logits = (p @ v) @ W_o + b                    # (B, T, V)

No residual path and no MLP: the only way a prediction at ``t`` can see another token is the head.
With ``x_i = tok_i + pos_i`` the score splits into four terms (:func:`score_terms`)::

    s_ij = (tok_i W_q)(tok_j W_k)^T + (tok_i W_q)(pos_j W_k)^T
         + (pos_i W_q)(tok_j W_k)^T + (pos_i W_q)(pos_j W_k)^T      (each / sqrt(H))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import flat_rows
from ._checks import (
    as_generator,
    as_real_array,
    check_batch_fits,
    check_fits_in_memory,
    check_in_range,
    check_int,
    check_int_in_range,
    check_integer_array,
    check_targets,
    check_type,
)
from .attention_cost import attention_scores_bytes
from .embedding import INIT_STD, GPTStyleEmbedding
from .optim import (
    ArrayModel,
    Evaluation,
    RunConfig,
    TrainResult,
    cross_entropy,
    run_training,
    weights_rng,
)

IGNORE = -1
"""Target id of a position that has no target (the first ``offset`` positions); no loss there."""


@dataclass(frozen=True, kw_only=True)
class AttentionConfig(RunConfig):
    """A lookback run: the data and sizes, plus :class:`~gptembed.optim.RunConfig`'s schedule.

    Attributes:
        vocab_size: ``V``, ids are drawn uniformly from ``[0, V)``.
        seq_len: ``T``, the context length and the rows of the position table.
        embed_dim: ``D``, the width of both tables.
        head_dim: ``H``, the width of queries, keys and values.
        offset: the target at position ``t`` is the id at ``t - offset``.
        steps: optimizer steps (200 here: the head needs longer than the read-out).
    """

    vocab_size: int = 16
    seq_len: int = 32
    embed_dim: int = 16
    head_dim: int = 8
    offset: int = 3
    steps: int = 200

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(check_int, "vocab_size", "seq_len", "embed_dim", "head_dim")
        self._keep("offset", _check_offset(self.offset, self.seq_len))


def _check_offset(offset: int, seq_len: int) -> int:
    """``offset`` as an ``int`` in ``[1, seq_len - 1]`` (``seq_len`` already checked).

    Raises:
        TypeError, ValueError: ``offset`` is not such an integer, or ``seq_len < 2``, which
            leaves no room for one.
    """
    if seq_len < 2:
        raise ValueError(
            f"seq_len must be at least 2 for an offset of 1 or more to fit, got {seq_len}"
        )
    return check_int_in_range("offset", offset, 1, seq_len - 1)


def check_step_fits(config: AttentionConfig) -> None:
    """Refuse a run whose training step's ``(B, T, T)`` float64 scores would not fit in memory."""
    check_fits_in_memory(
        f"a training step's scores, batch_size {config.batch_size:,} x seq_len**2 "
        f"{config.seq_len**2:,} in float64,",
        attention_scores_bytes(config.seq_len, 1, 1, config.batch_size, 8),
    )


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
    offset = _check_offset(offset, seq_len)
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
    offset = _check_offset(offset, seq_len)
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
    offset = _check_offset(offset, seq_len)
    seen = np.cumsum(np.eye(vocab_size)[ids], axis=1)  # (B, T, V): counts at positions 0..t
    probs = np.full((*ids.shape, vocab_size), 1.0 / vocab_size)
    earlier = np.arange(offset, seq_len)  # queries t; their earlier ids are 0 .. t-1
    probs[:, offset:] = seen[:, earlier - 1] / earlier[:, None]
    return probs


@dataclass
class AttentionModel(ArrayModel):
    """The embedding layer, one causal attention head and a linear read-out to logits.

    Attributes:
        embedding: :class:`GPTStyleEmbedding` with ``(V, D)`` token and ``(T, D)`` position tables.
        w_query, w_key, w_value: ``(D, H)`` projections.
        w_out: ``(H, V)`` read-out of the head's output.
        b_out: ``(V,)`` read-out bias.
    """

    embedding: GPTStyleEmbedding
    w_query: NDArray[np.float64]
    w_key: NDArray[np.float64]
    w_value: NDArray[np.float64]
    w_out: NDArray[np.float64]
    b_out: NDArray[np.float64]

    @property
    def head_dim(self) -> int:
        """``H``, the width of queries, keys and values."""
        return self.w_query.shape[1]


def init_model(config: AttentionConfig) -> AttentionModel:
    """A fresh model: tables as in :class:`GPTStyleEmbedding`, projections from N(0, 0.02**2).

    Nothing else depends on ``use_positions``, so runs with and without a position table start
    from the same point; without positions the table is all zeros.

    Raises:
        TypeError: ``config`` is not an :class:`AttentionConfig`.
        ValueError: its arrays would not fit in the machine's memory.
    """
    config = check_type("config", config, AttentionConfig)
    vocab, length, dim, head = config.vocab_size, config.seq_len, config.embed_dim, config.head_dim
    n_params = (vocab + length) * dim + 3 * dim * head + head * vocab + vocab
    check_fits_in_memory(
        f"the config's vocab_size {vocab:,}, seq_len {length:,}, embed_dim {dim:,} and head_dim "
        f"{head:,}: {n_params:,} parameters in float64,",
        n_params * 8,
    )
    embedding = GPTStyleEmbedding(
        config.vocab_size, config.seq_len, config.embed_dim, seed=config.seed, dtype=np.float64
    )
    if not config.use_positions:
        embedding.position_embeddings[:] = 0.0
    rng = weights_rng(seed=config.seed)
    dim, head = config.embed_dim, config.head_dim
    w_query, w_key, w_value = (rng.standard_normal((dim, head)) * INIT_STD for _ in range(3))
    w_out = rng.standard_normal((head, config.vocab_size)) * INIT_STD
    return AttentionModel(embedding, w_query, w_key, w_value, w_out, np.zeros(config.vocab_size))


@dataclass
class Forward:
    """What :func:`forward` computed, batch-first ``(B, T, ...)``; ``(T, ...)`` for ``(T,)`` ids.

    Attributes:
        x: ``(B, T, D)`` embedded inputs.
        q, k, v: ``(B, T, H)`` queries, keys, values.
        scores: ``(B, T, T)`` scaled scores before the mask.
        allowed: ``(B, T, T)`` bool, where query ``i`` may attend to key ``j``.
        probs: ``(B, T, T)`` attention weights; each allowed row sums to 1, other entries are 0.
        out: ``(B, T, H)`` the head's output ``probs @ v``.
        logits: ``(B, T, V)``.
    """

    x: NDArray[np.floating]
    q: NDArray[np.float64]
    k: NDArray[np.float64]
    v: NDArray[np.float64]
    scores: NDArray[np.float64]
    allowed: NDArray[np.bool_]
    probs: NDArray[np.float64]
    out: NDArray[np.float64]
    logits: NDArray[np.float64]


def _allowed(seq_len: int, mask: NDArray[np.generic] | None, batch: int) -> NDArray[np.bool_]:
    """``(B, T, T)``: key ``j <= i``, and key ``j`` is a real token where a ``(B, T)`` mask is
    given (its shape already checked)."""
    causal = np.tril(np.ones((seq_len, seq_len), dtype=bool))  # (T, T)
    allowed = np.broadcast_to(causal, (batch, seq_len, seq_len))
    if mask is None:
        return allowed
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("attention_mask must hold only 0 (padding) and 1 (a real token)")
    return allowed & mask.astype(bool)[:, None, :]


def _masked_softmax(scores: NDArray[np.float64], allowed: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Softmax over the last axis among allowed entries; a row with none allowed is all zeros."""
    masked = np.where(allowed, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True, initial=-np.inf)  # -inf: no keys (T = 0)
    top = np.where(np.isfinite(top), top, 0.0)
    weights = np.where(allowed, np.exp(masked - top), 0.0)
    sums = weights.sum(axis=-1, keepdims=True)
    return weights / np.where(sums > 0, sums, 1.0)


def project(
    model: AttentionModel, x: NDArray[np.floating]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Queries, keys and values ``(B, T, H)`` of embedded inputs ``(B, T, D)``."""
    return x @ model.w_query, x @ model.w_key, x @ model.w_value


def head_scores(
    model: AttentionModel, q: NDArray[np.float64], k: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``q k^T / sqrt(H)``: ``(B, Tq, Tk)`` for queries ``(B, Tq, H)`` and keys ``(B, Tk, H)``."""
    return q @ k.swapaxes(-1, -2) / math.sqrt(model.head_dim)


def _read_out(
    model: AttentionModel, probs: NDArray[np.float64], v: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The head's output ``probs @ v`` ``(B, Tq, H)`` and its logits ``(B, Tq, V)``."""
    out = probs @ v
    return out, out @ model.w_out + model.b_out


def forward(
    model: AttentionModel,
    token_ids: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
    attention_mask: ArrayLike | None = None,
    scores: ArrayLike | None = None,
) -> Forward:
    """Run the model on ids ``(T,)`` or ``(B, T)``.

    Args:
        token_ids: ids in ``[0, V)``.
        start_pos, position_ids: where the ids sit (see :meth:`GPTStyleEmbedding.forward`).
        attention_mask: ``(B, T)`` of 1 (real token) and 0 (padding); padding keys get no weight.
        scores: ``(B, T, T)`` scores to use instead of ``q k^T / sqrt(H)`` (for ablations, such as
            one term of :func:`score_terms`); the causal mask still applies.

    Returns:
        A :class:`Forward`; for ``(T,)`` ids every array loses its batch axis.

    Raises:
        TypeError, ValueError: as :meth:`GPTStyleEmbedding.check_ids`, or a mask or scores of
            the wrong shape.
    """
    ids = model.embedding.check_ids(token_ids, start_pos, position_ids=position_ids)
    single = ids.ndim == 1
    seq_len = ids.shape[-1]
    mask = None if attention_mask is None else np.asarray(attention_mask)
    if mask is not None and mask.shape != ids.shape:
        raise ValueError(f"attention_mask must have the ids' shape {ids.shape}, got {mask.shape}")
    s = None if scores is None else as_real_array("scores", scores)
    if s is not None and s.shape != (*ids.shape, seq_len):
        raise ValueError(f"scores must have shape {(*ids.shape, seq_len)}, got {s.shape}")
    if single:  # a batch of one until the end; shapes were checked as given
        ids = ids[None]
        mask = None if mask is None else mask[None]
        s = None if s is None else s[None]
    n_seq = len(ids)
    x = model.embedding.forward(ids, start_pos, position_ids=position_ids)  # (B, T, D)
    q, k, v = project(model, x)  # (B, T, H) each
    if s is None:
        s = head_scores(model, q, k)  # (B, T, T)
    allowed = _allowed(seq_len, mask, n_seq)
    probs = _masked_softmax(s, allowed)
    out, logits = _read_out(model, probs, v)
    result = Forward(x, q, k, v, s, allowed, probs, out, logits)
    if single:
        for name, value in vars(result).items():
            setattr(result, name, value[0])
    return result


def scored_positions(logits: NDArray[np.floating], targets: ArrayLike) -> NDArray[np.bool_]:
    """Where ``targets`` (the ids' shape) is not :data:`IGNORE`: the positions that are scored.

    Raises:
        TypeError: targets that are not integers.
        ValueError: targets of another shape, a target outside ``[0, V)`` that is not IGNORE,
            or no position to score.
    """
    shape, n_classes = logits.shape[:-1], logits.shape[-1]
    y = check_targets(targets, shape, n_classes, like="the ids' shape", ignore=IGNORE)
    scored = y != IGNORE
    if not scored.any():
        raise ValueError(f"every target is IGNORE ({IGNORE}): there is nothing to score")
    return scored


def _masked_loss(
    logits: NDArray[np.float64], targets: ArrayLike
) -> tuple[float, NDArray[np.float64]]:
    """Cross-entropy over positions whose target is not :data:`IGNORE`, and its gradient."""
    scored = scored_positions(logits, targets)
    loss, dscored = cross_entropy(logits[scored], np.asarray(targets)[scored])
    dlogits = np.zeros_like(logits)
    dlogits[scored] = dscored
    return loss, dlogits


def loss_and_grads(
    model: AttentionModel, inputs: ArrayLike, targets: ArrayLike
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """Mean cross-entropy over the scored positions of ``(B, T)`` inputs, and every gradient.

    Targets equal to :data:`IGNORE` are not scored.

    Returns:
        ``(loss, grads)``; ``grads`` has the keys and shapes of :meth:`AttentionModel.parameters`.
    """
    ids = model.embedding.check_ids(inputs)
    if ids.ndim != 2:
        raise ValueError(f"inputs must have shape (B, T), got {ids.shape}")
    return backward_from(model, forward(model, ids), ids, targets)


def backward_from(
    model: AttentionModel,
    f: Forward,
    ids: NDArray[np.intp],
    targets: ArrayLike,
    rotate_back: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """The loss and gradients of :func:`loss_and_grads`, from the forward pass ``f`` of ``ids``.

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
    dscores = f.probs * (dprobs - np.sum(f.probs * dprobs, axis=-1, keepdims=True))
    dscores /= math.sqrt(model.head_dim)
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


def train(
    config: AttentionConfig, model: AttentionModel | None = None
) -> TrainResult[AttentionModel, AttentionConfig]:
    """Teach an :class:`AttentionModel` to copy the id ``config.offset`` places back.

    Adam on a fresh batch of :func:`make_lookback` at every step, from a copy of ``model`` if
    one is given: :func:`~gptembed.optim.run_training` runs it.

    Raises:
        TypeError, ValueError: ``config`` is not an :class:`AttentionConfig`; a step's scores
            would not fit in the machine's memory; and as :func:`~gptembed.optim.run_training`
            (a ``model`` of another type or other sizes).
    """
    config = check_type("config", config, AttentionConfig)
    check_step_fits(config)
    sizes = config.batch_size, config.seq_len, config.vocab_size, config.offset
    return run_training(config, model, init_model, loss_and_grads, partial(make_lookback, *sizes))


def evaluate(
    model: AttentionModel,
    inputs: ArrayLike,
    targets: ArrayLike,
    start_pos: int = 0,
    *,
    scores: ArrayLike | None = None,
) -> Evaluation:
    """Mean cross-entropy (nats) and accuracy of the argmax over the scored positions.

    ``start_pos`` and ``scores`` are passed to :func:`forward`; no update. Targets equal to
    :data:`IGNORE` are not scored.
    """
    logits = forward(model, inputs, start_pos, scores=scores).logits
    scored = scored_positions(logits, targets)
    return Evaluation.of(logits[scored], np.asarray(targets)[scored])


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


def score_terms(
    model: AttentionModel,
    token_ids: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
) -> ScoreTerms:
    """Split the scores of ids ``(T,)`` or ``(B, T)`` into :class:`ScoreTerms`.

    Their sum equals ``forward(...).scores`` for the same arguments, up to rounding.
    """
    ids = model.embedding.check_ids(token_ids, start_pos, position_ids=position_ids)
    seq_len = ids.shape[-1]
    rows: NDArray[np.intp]
    if position_ids is None:
        rows = np.arange(start_pos, start_pos + seq_len)
    else:
        rows = np.asarray(position_ids, dtype=np.intp)
    tok = model.embedding.token_embeddings[ids]  # (..., T, D)
    pos = np.broadcast_to(model.embedding.position_embeddings[rows], tok.shape)  # (..., T, D)
    w_q, w_k = model.w_query, model.w_key
    scale = 1.0 / math.sqrt(model.head_dim)
    return ScoreTerms.from_parts(tok @ w_q, pos @ w_q, tok @ w_k, pos @ w_k, scale)


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
        ValueError: ``probs`` is not ``(..., T, T)``, or ``max_lag`` is not in ``[0, T - 1]``.
    """
    weights = np.asarray(probs, dtype=np.float64)
    if weights.ndim < 2 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"probs must have shape (..., T, T), got {weights.shape}")
    seq_len = weights.shape[-1]
    max_lag = check_int("max_lag", max_lag, minimum=0)
    if max_lag >= seq_len:
        raise ValueError(f"max_lag must be in [0, {seq_len - 1}], got {max_lag}")
    return np.stack([d.mean(axis=-1) for d in _lag_diagonals(weights, max_lag + 1)], axis=-1)


@dataclass
class KVCache:
    """The keys and values ``(B, n, H)`` of the ``n`` tokens a sequence has seen so far."""

    keys: NDArray[np.float64]
    values: NDArray[np.float64]

    @property
    def length(self) -> int:
        """``n``, the tokens already seen: the position the next token should get."""
        return self.keys.shape[1]


def cached_forward(
    model: AttentionModel,
    token_ids: ArrayLike,
    cache: KVCache | None = None,
    start_pos: int | None = None,
) -> tuple[NDArray[np.float64], KVCache]:
    """Logits of new ids ``(B, n)`` that continue the cached ones, and the grown cache.

    Only the new ids are embedded and projected; their queries meet the cached keys and their
    own (causally). With the default ``start_pos`` (the cache's length) the logits equal those of
    :func:`forward` on the whole sequence. Any other ``start_pos`` puts the new ids at the wrong
    rows of the position table, as a continuation that forgets its offset does.

    Returns:
        ``(logits, cache)``: ``(B, n, V)`` logits and a new :class:`KVCache` of ``length + n``.

    Raises:
        TypeError, ValueError: as :meth:`GPTStyleEmbedding.check_ids` (so a continuation past the
            last row of the position table is refused), ids that are not ``(B, n)``, or a cache
            of another batch size or head width.
    """
    past = 0 if cache is None else cache.length
    start = past if start_pos is None else start_pos
    ids = model.embedding.check_ids(token_ids, start)
    if ids.ndim != 2:
        raise ValueError(f"token_ids must have shape (B, n), got {ids.shape}")
    if cache is not None:
        shapes = cache.keys.shape, cache.values.shape
        if any(len(shape) != 3 or shape[2] != model.head_dim for shape in shapes) or (
            shapes[0] != shapes[1]
        ):
            raise ValueError(
                f"the cache's keys and values must be (B, n, H) with H = {model.head_dim}, "
                f"got shapes {shapes[0]} and {shapes[1]}"
            )
        if shapes[0][0] != ids.shape[0]:
            raise ValueError(
                f"the cache holds {shapes[0][0]} sequences, got ids for {ids.shape[0]}"
            )
    x = model.embedding.forward(ids, start)  # (B, n, D)
    q, k, v = project(model, x)  # (B, n, H) each
    if cache is not None:
        k = np.concatenate([cache.keys, k], axis=1)  # (B, past + n, H)
        v = np.concatenate([cache.values, v], axis=1)
    n_new = ids.shape[1]
    allowed = np.tri(n_new, past + n_new, k=past, dtype=bool)  # new id r sees keys <= past + r
    s = head_scores(model, q, k)  # (B, n, past + n)
    probs = _masked_softmax(s, np.broadcast_to(allowed, s.shape))
    _, logits = _read_out(model, probs, v)
    return logits, KVCache(k, v)
