"""A one-head causal attention model that must use position: copy the token ``offset`` places back.

It is trained on the lookback task (:mod:`gptembed.lookback`): random ids, so only the position
rows can tell the head which key lies ``offset`` places back. The model, for ids ``(B, T)``::

    x = wte[ids] + wpe[0:T]                       # (B, T, D)
    q, k, v = x @ W_q, x @ W_k, x @ W_v           # (B, T, H) each
    s = q @ k^T / sqrt(H), causal mask            # (B, T, T): query i, key j <= i
    p = softmax(s) over j                         # (B, T, T)
    logits = (p @ v) @ W_o + b                    # (B, T, V)

No residual path and no MLP: the only way a prediction at ``t`` can see another token is the head.
With ``x_i = tok_i + pos_i`` the score splits into four terms (:func:`score_terms`, into a
:class:`~gptembed.attention_terms.ScoreTerms`)::

    s_ij = (tok_i W_q)(tok_j W_k)^T + (tok_i W_q)(pos_j W_k)^T
         + (pos_i W_q)(tok_j W_k)^T + (pos_i W_q)(pos_j W_k)^T      (each / sqrt(H))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._attention import backward_from, check_step_fits, head_scores, project
from ._checks import as_real_array, check_fits_in_memory, check_int, check_offset, check_type
from ._scoring import scored_positions
from .attention_terms import ScoreTerms
from .embedding import INIT_STD, GPTStyleEmbedding
from .lookback import make_lookback
from .optim import (
    ArrayModel,
    Evaluation,
    RunConfig,
    TrainResult,
    run_training,
    weights_rng,
)


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
        self._keep("offset", check_offset(self.offset, self.seq_len))


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
    weights = np.where(allowed, scores, -np.inf)  # the one new (B, T, T) array: then in place
    top = weights.max(axis=-1, keepdims=True, initial=-np.inf)  # -inf: no keys (T = 0)
    top[~np.isfinite(top)] = 0.0
    weights -= top
    np.exp(weights, out=weights)  # exp(-inf) = 0: a key not allowed gets no weight
    sums = weights.sum(axis=-1, keepdims=True)
    sums[~(sums > 0)] = 1.0  # a row with no key allowed stays all zeros
    weights /= sums
    return weights


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
        s = head_scores(q, k)  # (B, T, T)
    allowed = _allowed(seq_len, mask, n_seq)
    probs = _masked_softmax(s, allowed)
    out, logits = _read_out(model, probs, v)
    result = Forward(x, q, k, v, s, allowed, probs, out, logits)
    if single:
        for name, value in vars(result).items():
            setattr(result, name, value[0])
    return result


def loss_and_grads(
    model: AttentionModel, inputs: ArrayLike, targets: ArrayLike
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """Mean cross-entropy over the scored positions of ``(B, T)`` inputs, and every gradient.

    Targets equal to :data:`~gptembed.optim.IGNORE` are not scored.

    Returns:
        ``(loss, grads)``; ``grads`` has the keys and shapes of :meth:`AttentionModel.parameters`.
    """
    ids = model.embedding.check_ids(inputs)
    if ids.ndim != 2:
        raise ValueError(f"inputs must have shape (B, T), got {ids.shape}")
    return backward_from(model, forward(model, ids), ids, targets)


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
    check_step_fits(config.batch_size, config.seq_len)
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
    :data:`~gptembed.optim.IGNORE` are not scored.
    """
    logits = forward(model, inputs, start_pos, scores=scores).logits
    scored = scored_positions(logits, targets)
    return Evaluation.of(logits[scored], np.asarray(targets)[scored])


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
    s = head_scores(q, k)  # (B, n, past + n)
    probs = _masked_softmax(s, np.broadcast_to(allowed, s.shape))
    _, logits = _read_out(model, probs, v)
    return logits, KVCache(k, v)
