"""The small GPT's first attention scores split into what the tokens and the positions add.

Chapter 7 reads the trained model's first block this way: with a learned (or sinusoidal) table,
every token enters the block as ``LayerNorm_1(tok + pos)``, and each head's scores split into the
four terms of :class:`~gptembed.attention_terms.ScoreTerms` (token-token, token-position,
position-token, position-position).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._checks import check_float
from ._transformer import LN_EPS
from .attention_terms import ScoreTerms
from .gpt import GPT
from .positions import Scheme

_SPLIT_SCHEMES: tuple[Scheme, ...] = ("learned", "sinusoidal", "none")
"""The schemes whose first scores :func:`score_terms` splits exactly: position is added to the
tokens, or absent."""


def score_terms(
    model: GPT,
    token_ids: ArrayLike,
    start_pos: int = 0,
    *,
    fixed_scale: float | None = None,
) -> list[ScoreTerms]:
    """The first block's attention scores split into four terms, one :class:`ScoreTerms` a head.

    The block reads ``LayerNorm_1(tok + pos)``, not ``tok + pos``. LayerNorm subtracts each
    vector's mean (linear, so it splits) and divides by its standard deviation ``sigma``, one
    number per token that depends on the token *and* its position. With each token's own
    ``sigma`` (``fixed_scale=None``), ``LayerNorm_1(x) = tokpart + pospart`` exactly, with

        tokpart = gain * (tok - mean(tok)) / sigma
        pospart = gain * (pos - mean(pos)) / sigma + bias

    and the four terms add up to the scores; but then the position-position term changes a
    little from sequence to sequence. With ``fixed_scale`` every token is divided by that one
    number instead: the position-position term is then a property of the positions alone, and
    the sum of the terms only approximates the scores. The constants (LayerNorm's bias and the
    query and key biases) go with the position part: it is what every token at a position
    shares, and the token part is what the token adds.

    The split holds where position enters as a table added to the tokens (``"learned"``,
    ``"sinusoidal"``), or not at all (``"none"``, whose table is zeros); ``"rotary"`` rotates the
    queries and keys after the projection and ``"alibi"`` adds a bias to the scores, neither of
    which these four terms hold, so those schemes are refused.

    Returns:
        ``n_heads`` :class:`ScoreTerms`, each ``(B, T, T)`` (or ``(T, T)`` for ``(T,)`` ids),
        scaled by ``1 / sqrt(D / n_heads)`` as the scores are.

    Raises:
        ValueError: a ``"rotary"`` or ``"alibi"`` model.
        TypeError, ValueError: as :meth:`GPTStyleEmbedding.check_ids`, or a ``fixed_scale``
            that is not a finite number > 0 (0 and NaN gave NaN terms, a negative one terms of
            the wrong sign).
    """
    if model.scheme not in _SPLIT_SCHEMES:
        raise ValueError(
            f"score_terms splits the scores of the schemes {_SPLIT_SCHEMES}, got {model.scheme!r}: "
            "its positions act on the queries and keys or on the scores after the projection, "
            "which no token or position term holds"
        )
    ids = model.embedding.check_ids(token_ids, start_pos)
    if fixed_scale is not None:
        fixed_scale = check_float("fixed_scale", fixed_scale, above=0)
    seq_len = ids.shape[-1]
    tok = model.embedding.token_embeddings[ids]  # (..., T, D)
    rows = model.embedding.position_embeddings[start_pos : start_pos + seq_len]  # (T, D)
    pos = np.broadcast_to(rows, tok.shape)
    x = tok + pos
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)  # (..., T, 1)
    if fixed_scale is not None:
        sigma = np.full_like(sigma, fixed_scale)
    gain, bias = model.ln1_gain[0], model.ln1_bias[0]
    tokpart = gain * (tok - tok.mean(axis=-1, keepdims=True)) / sigma
    pospart = gain * (pos - pos.mean(axis=-1, keepdims=True)) / sigma + bias
    dim, head = model.embedding.embed_dim, model.head_dim
    w, b = model.w_attn[0], model.b_attn[0]
    terms = []
    for h in range(model.n_heads):
        cols_q = slice(h * head, (h + 1) * head)
        cols_k = slice(dim + h * head, dim + (h + 1) * head)
        terms.append(
            ScoreTerms.from_parts(
                query_token=tokpart @ w[:, cols_q],
                query_position=pospart @ w[:, cols_q] + b[cols_q],
                key_token=tokpart @ w[:, cols_k],
                key_position=pospart @ w[:, cols_k] + b[cols_k],
                scale=1.0 / math.sqrt(head),
            )
        )
    return terms
