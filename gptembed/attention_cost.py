"""What attention costs as the context grows: score memory, KV-cache memory and FLOPs.

One head's scores ``softmax(q k^T / sqrt(d))`` form an ``n x n`` matrix, so a batch of them takes
``batch * heads * n^2 * bytes`` per layer, and ``layers`` times that when every layer keeps them
(eager training keeps them for the backward pass); a numpy measurement stands beside the formula.
Flash-style kernels never store the matrix: their memory is linear in ``n``, but their work is
still quadratic, which :func:`flops_per_token` counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import check_bool, check_float_dtype, check_int, check_int_in_range, check_seed
from .measure import peak_bytes
from .models import ModelConfig, check_config


def _product_of_sizes(**sizes: int) -> int:
    """The product of ``sizes``, each checked to be an integer >= 1 (named in any error)."""
    return math.prod(check_int(name, value) for name, value in sizes.items())


def attention_scores_bytes(
    seq_len: int,
    n_heads: int,
    n_layers: int = 1,
    batch_size: int = 1,
    bytes_per_element: int = 4,
    *,
    window: int | None = None,
) -> int:
    """Bytes of the attention score matrices: ``batch * heads * layers * seq_len**2 * bytes``.

    Exact Python integer arithmetic (no overflow at any length). With ``window``, each query keeps
    the scores of at most ``window`` keys (a locally banded layer, as in half of GPT-3's layers):
    ``seq_len * min(seq_len, window)`` scores per head instead of ``seq_len**2``.

    >>> attention_scores_bytes(1024, n_heads=12) // 2**20  # GPT-2 small, one layer, fp32: MiB
    48
    >>> attention_scores_bytes(1024, n_heads=12, window=256) // 2**20  # a band of 256 keys
    12

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    per_score = _product_of_sizes(
        batch_size=batch_size,
        n_heads=n_heads,
        n_layers=n_layers,
        bytes_per_element=bytes_per_element,
    )
    return per_score * seq_len * _keys_per_query(seq_len, window)


def _keys_per_query(seq_len: int, window: int | None) -> int:
    """How many keys each query scores: all ``seq_len``, or at most ``window`` (checked >= 1)."""
    return seq_len if window is None else min(seq_len, check_int("window", window))


def softmax_statistics_bytes(
    seq_len: int, n_heads: int, n_layers: int = 1, batch_size: int = 1
) -> int:
    """Bytes a fused (flash-style) kernel keeps instead of the scores: one fp32 number per row.

    FlashAttention-2 (Dao 2023, arXiv:2307.08691, Algorithm 1) writes only the output and, for
    the backward pass, each query row's log-sum-exp of its scores, in fp32 whatever the inputs'
    precision: ``batch * heads * layers * seq_len * 4`` bytes, linear in the length.

    >>> softmax_statistics_bytes(1024, n_heads=12, n_layers=12) // 2**10  # GPT-2 small: KiB
    576

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    rows = _product_of_sizes(batch_size=batch_size, n_heads=n_heads, n_layers=n_layers)
    return rows * seq_len * 4  # one fp32 log-sum-exp per query row


def longest_context(
    memory_bytes: int,
    n_heads: int,
    n_layers: int = 1,
    batch_size: int = 1,
    bytes_per_element: int = 4,
) -> int:
    """The largest whole ``n`` whose score matrices fit in ``memory_bytes``.

    The largest ``n`` with :func:`attention_scores_bytes` ``(n, ...) <= memory_bytes``, in exact
    integer arithmetic: ``n**2 * per <= memory`` holds exactly when ``n**2 <= memory // per``, so
    ``n = isqrt(memory // per)`` with ``per = batch * heads * layers * bytes``. (A float
    ``sqrt`` can land one off for large sizes.)

    >>> longest_context(80 * 10**9, n_heads=12, n_layers=12)  # GPT-2 small, fp32, 80 GB
    11785

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``memory_bytes`` is negative, or another argument is not positive.
    """
    memory_bytes = check_int("memory_bytes", memory_bytes, minimum=0)
    per_score = attention_scores_bytes(1, n_heads, n_layers, batch_size, bytes_per_element)
    return math.isqrt(memory_bytes // per_score)  # bytes per n**2, then the largest whole n


def kv_cache_bytes(
    seq_len: int,
    n_layers: int,
    embed_dim: int,
    batch_size: int = 1,
    bytes_per_element: int = 2,
) -> int:
    """Bytes of a KV cache: keys and values of width ``embed_dim`` for every layer and position.

    ``2 * batch * layers * seq_len * embed_dim * bytes`` (all heads together are ``embed_dim``
    wide, as in GPT-2 and GPT-3). It grows linearly in ``seq_len``, unlike the scores; the default
    2 bytes is fp16, the usual precision at inference.

    >>> kv_cache_bytes(1024, n_layers=12, embed_dim=768) // 2**20  # GPT-2 small, fp16: MiB
    36

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    batch_size = check_int("batch_size", batch_size)
    per_token = _product_of_sizes(
        n_layers=n_layers, embed_dim=embed_dim, bytes_per_element=bytes_per_element
    )
    return batch_size * seq_len * 2 * per_token  # 2: a key and a value


def kv_width(config: ModelConfig, kv_heads: int | None = None) -> int:
    """The width of a layer's keys (and of its values): ``kv_heads`` heads of ``config.head_dim``.

    Grouped-query attention (Ainslie et al. 2023, "GQA", arXiv:2305.13245) gives each group of
    query heads one key head and one value head: ``kv_heads`` groups, from ``n_heads`` (every
    query head its own: multi-head attention, the default) down to 1 (multi-query attention).
    The KV cache and the key and value projections shrink by ``kv_heads / n_heads``.

    >>> from gptembed import MODELS
    >>> kv_width(MODELS["gpt2-small"]), kv_width(MODELS["gpt2-small"], kv_heads=4)
    (768, 256)

    Raises:
        TypeError: ``config`` is not a :class:`~gptembed.models.ModelConfig`.
        TypeError, ValueError: ``kv_heads`` is not a positive integer that divides
            ``config.n_heads``.
    """
    config = check_config(config)
    if kv_heads is None:
        return config.embed_dim
    groups = check_int_in_range("kv_heads", kv_heads, 1, config.n_heads)
    if config.n_heads % groups:
        divisors = [g for g in range(1, config.n_heads + 1) if config.n_heads % g == 0]
        raise ValueError(
            f"kv_heads must divide n_heads {config.n_heads} (one of {divisors}), got {groups}"
        )
    return groups * config.head_dim


MODEL_STATE_BYTES_PER_PARAMETER = 16
"""What training with Adam keeps for each parameter: its weight, its gradient and Adam's two
moments. In mixed precision that is a 2-byte weight and gradient plus fp32 copies of the weight
and both moments, ``2 + 2 + 12 = 16`` bytes (Rajbhandari et al. 2020, "ZeRO", arXiv:1910.02054,
section 3.1); in fp32 it is ``4 + 4 + 8``, also 16."""

ACTIVATION_WIDTHS: tuple[tuple[str, int, Literal["d", "k"]], ...] = (
    ("the two LayerNorms' inputs", 2, "d"),
    ("the attention's input (the first LayerNorm's output)", 1, "d"),
    ("the queries", 1, "d"),
    ("the keys and the values", 2, "k"),
    ("the attention's output (the output projection's input)", 1, "d"),
    ("the MLP's input (the second LayerNorm's output)", 1, "d"),
    ("the MLP's hidden layer before and after GELU", 8, "d"),
)
"""What one layer of a training step keeps for each token for the backward pass, besides its
attention scores: ``(what, how many, of width d or k)``, with ``d`` the model's width and ``k``
its keys' width (:func:`kv_width`). Korthikanti et al. 2022 ("Reducing Activation Recomputation
in Large Transformer Models", arXiv:2205.05198, section 4.1) list these, ``34 s b h`` bytes a
layer in 16-bit numbers: the 32 here and two 1-byte dropout masks, left out with dropout as
this chapter leaves it out of the scores (a floor)."""


def activation_bytes(
    seq_len: int,
    embed_dim: int,
    n_layers: int = 1,
    batch_size: int = 1,
    bytes_per_element: int = 4,
    *,
    kv_width: int | None = None,
) -> int:
    """Bytes a training step keeps for the backward pass in its layers, besides the scores.

    Each layer keeps, for each of the ``batch * seq_len`` tokens, the numbers that
    :data:`ACTIVATION_WIDTHS` lists (Korthikanti et al. 2022, section 4.1, without dropout):
    arrays of shape ``(batch, seq_len, width)`` adding up to ``14 d + 2 k`` numbers a token,
    ``16 d`` without grouped-query attention (``k = kv_width``, ``d = embed_dim`` unless given).
    So ``batch * layers * seq_len * (14 d + 2 k) * bytes``: linear in the length, as the KV
    cache, but about 8 times the cache. A fused attention kernel keeps these too (its backward
    pass reads the queries, keys, values and output); what it drops is the scores.

    >>> activation_bytes(1024, embed_dim=768, n_layers=12) // 2**20  # GPT-2 small, fp32: MiB
    576

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    d = check_int("embed_dim", embed_dim)
    k = d if kv_width is None else check_int("kv_width", kv_width)
    per_token = sum(count * (d if width == "d" else k) for _, count, width in ACTIVATION_WIDTHS)
    rows = _product_of_sizes(
        batch_size=batch_size, n_layers=n_layers, bytes_per_element=bytes_per_element
    )
    return rows * seq_len * per_token


def logits_bytes(
    seq_len: int, vocab_size: int, batch_size: int = 1, bytes_per_element: int = 4
) -> int:
    """Bytes of the output layer's logits, ``(batch, seq_len, vocab_size)``, which the loss keeps.

    ``batch * seq_len * vocab_size * bytes``: for GPT-2's 50,257 tokens, 65 times the width of
    GPT-2 small, so at long contexts more than a few layers' activations. (Kernels that fuse the
    output layer with the loss avoid storing them; this counts the plain way.)

    >>> logits_bytes(1024, vocab_size=50_257) // 2**20  # GPT-2, one sequence, fp32: MiB
    196

    Raises:
        TypeError: an argument is not an integer.
        ValueError: ``seq_len`` is negative, or another argument is not positive.
    """
    seq_len = check_int("seq_len", seq_len, minimum=0)
    per_token = _product_of_sizes(
        vocab_size=vocab_size, batch_size=batch_size, bytes_per_element=bytes_per_element
    )
    return seq_len * per_token


@dataclass(frozen=True)
class FlopsPerToken:
    """Floating-point operations per token, split into the part that grows with the context.

    Attributes:
        weights: multiply-adds with weight matrices, times 2: the same at every context length.
        attention: the score and weighted-value products, times 2: linear in the context length
            per token (so quadratic per sequence).
    """

    weights: int
    attention: int

    def __post_init__(self) -> None:
        check_int("weights", self.weights)
        check_int("attention", self.attention, minimum=0)

    @property
    def total(self) -> int:
        """``weights + attention``."""
        return self.weights + self.attention

    @property
    def attention_share(self) -> float:
        """Fraction of the FLOPs spent on attention's scores, ``attention / total``."""
        return self.attention / self.total


FlopsConvention = Literal["palm", "kaplan"]
"""The two published ways of counting a forward pass's FLOPs that :func:`flops_per_token` knows."""


def flops_per_token(
    config: ModelConfig,
    seq_len: int,
    training: bool = False,
    *,
    convention: FlopsConvention = "palm",
    window: int | None = None,
    kv_heads: int | None = None,
) -> FlopsPerToken:
    """FLOPs per token of a pass over ``seq_len`` tokens, as weights plus attention.

    One multiply-add is 2 FLOPs; ``d = embed_dim``, ``L = n_layers``, ``V = vocab_size``. Each
    block's weight matrices hold ``12 d^2`` numbers (QKV ``3d^2``, output ``d^2``, 4x MLP
    ``8d^2``). Biases, LayerNorms and the softmax are ``O(d)`` or ``O(n)`` per token and left
    out. Two conventions:

    - ``"palm"`` (the default): weights ``2 (12 L d^2 + V d)``, attention ``4 L n d``. This is
      nanoGPT's ``estimate_mfu``, which takes PaLM's ``6 N + 12 L H Q T`` per token for a
      training step (Chowdhery et al. 2022, "PaLM", arXiv:2204.02311, appendix B) and divides
      by 3 for the forward pass. nanoGPT's ``N`` holds the token table, which is also the
      output layer, so the head's ``V d`` multiply-adds count: every token pays for them. The
      attention term is the full ``n x n`` matrix: each query meets ``n`` keys (``q k^T``) and
      ``n`` values (``probs @ v``), as eager attention and this book's numpy attention compute
      it, every score and then the causal mask.
    - ``"kaplan"``: ``C_forward = 2 N + 2 L n_ctx d_attn`` with ``N = 12 L d^2`` (Kaplan et al.
      2020, "Scaling Laws for Neural Language Models", arXiv:2001.08361, Table 1): no output
      head (his "de-embed" row is left out of ``N``) and half the attention term, which is what
      a kernel that skips the masked half of a causal matrix does.

    ``window`` counts a locally banded layer (each query meets at most ``window`` keys) in
    place of a dense one; GPT-3 alternates the two, which a caller adds up layer by layer.
    ``kv_heads`` counts grouped-query attention (:func:`kv_width`): the key and value
    projections are ``d x k`` instead of ``d x d``, so a block's weights are ``10 d^2 + 2 d k``
    instead of ``12 d^2``; attention's term does not change (each query head still meets every
    key).
    ``training=True`` counts forward plus backward as 3x the forward pass (the backward pass
    does two products for each of the forward's one).

    Raises:
        TypeError: ``config`` is not a :class:`ModelConfig` (as
            :func:`~gptembed.models.check_config`).
        TypeError, ValueError: ``seq_len`` is not an integer >= 0, ``window`` not >= 1,
            ``kv_heads`` not a divisor of ``config.n_heads``, or ``training`` not a bool.
        ValueError: an unknown ``convention``.
    """
    config = check_config(config)
    seq_len = check_int("seq_len", seq_len, minimum=0)
    keys = _keys_per_query(seq_len, window)
    d, n_layers = config.embed_dim, config.n_layers
    blocks = n_layers * d * (10 * d + 2 * kv_width(config, kv_heads))
    if convention == "palm":
        weights, attention = 2 * (blocks + config.vocab_size * d), 4 * n_layers * keys * d
    elif convention == "kaplan":
        weights, attention = 2 * blocks, 2 * n_layers * keys * d
    else:
        raise ValueError(f"convention must be 'palm' or 'kaplan', got {convention!r}")
    passes = 3 if check_bool("training", training) else 1
    return FlopsPerToken(weights=passes * weights, attention=passes * attention)


def attention_flops_parity(config: ModelConfig, *, convention: FlopsConvention = "palm") -> int:
    """The shortest context at which attention's FLOPs reach the weights' (share >= 1/2).

    Exact: the smallest whole ``n`` with attention's FLOPs at least the weights'. With
    ``"palm"``, ``4 L n d >= 2 (12 L d^2 + V d)``: ``ceil(6 d + V / (2 L))``; with ``"kaplan"``,
    ``2 L n d >= 24 L d^2``: ``12 d``. It depends on the width, not (much) on the depth.

    Raises:
        TypeError: ``config`` is not a :class:`ModelConfig`.
        ValueError: an unknown ``convention``.
    """
    weights = flops_per_token(config, 0, convention=convention).weights
    attention_per_position = flops_per_token(config, 1, convention=convention).attention
    return -(-weights // attention_per_position)


def _queries_and_keys(
    q: ArrayLike, k: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """``q`` ``(..., n, d)`` and ``k`` ``(..., m, d)`` as arrays (no copy), checked.

    Raises:
        TypeError: not floating point, or two dtypes.
        ValueError: fewer than 2 axes, widths or batch shapes that differ, ``d = 0``, or no
            keys for some queries.
    """
    arrays = np.asarray(q), np.asarray(k)
    for name, array, rows in zip("qk", arrays, "nm", strict=True):
        if array.ndim < 2:
            raise ValueError(f"{name} must have shape (..., {rows}, d), got {array.shape}")
        if array.dtype.kind != "f":
            raise TypeError(f"{name} must be floating point, got dtype {array.dtype}")
    queries, keys = arrays
    if queries.shape[:-2] != keys.shape[:-2] or queries.shape[-1] != keys.shape[-1]:
        raise ValueError(
            "q and k must have one width d and one batch shape: got "
            f"{queries.shape} and {keys.shape}"
        )
    if queries.shape[-1] == 0:
        raise ValueError("q and k must be at least 1 wide, got d = 0")
    if keys.shape[-2] == 0 and queries.shape[-2] > 0:
        raise ValueError(
            f"k must hold at least one key for {queries.shape[-2]} queries to attend to, "
            f"got shape {keys.shape}"
        )
    if queries.dtype != keys.dtype:
        raise TypeError(f"q and k must share one dtype, got {queries.dtype} and {keys.dtype}")
    return queries, keys


def attention_probs(q: ArrayLike, k: ArrayLike) -> NDArray[np.floating]:
    """``softmax(q k^T / sqrt(d))`` for one head, in one ``(n, m)`` buffer updated in place.

    Args:
        q, k: ``(n, d)`` queries and ``(m, d)`` keys of one floating dtype (usually ``m = n``);
            or a batch of heads, ``(..., n, d)`` and ``(..., m, d)`` with the same leading axes.

    Returns:
        The ``(..., n, m)`` attention probabilities; each row sums to 1. The only full-size
        array allocated is the result itself.

    Raises:
        TypeError, ValueError: as the checks of shapes and dtypes say (1-D or int inputs, two
            widths, no keys).
    """
    q, k = _queries_and_keys(q, k)
    # (..., n, m): the one full-size allocation; BLAS reads the transposed view in place
    scores = np.matmul(q, k.swapaxes(-1, -2))
    if scores.size == 0:
        return scores
    # A Python float: an np.float64 scale would make numpy cast float32 scores to float64 and
    # back through buffers.
    scores *= 1.0 / math.sqrt(q.shape[-1])
    # numpy gives a broadcasting ufunc an iteration buffer even when, as here, nothing needs
    # casting or copying; a small one keeps the peak at the scores plus O(n) from short
    # sequences up (benchmarks/README.md has the numbers).
    old_bufsize = np.setbufsize(16)
    try:
        scores -= scores.max(axis=-1, keepdims=True)  # (..., n, 1) temporary: stable softmax
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
    finally:
        np.setbufsize(old_bufsize)
    return scores


def naive_attention_probs(q: ArrayLike, k: ArrayLike) -> NDArray[np.floating]:
    """Textbook :func:`attention_probs`: each step allocates a new ``(..., n, m)`` array."""
    q, k = _queries_and_keys(q, k)
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    if scores.size == 0:
        return scores
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def measure_attention_scores_peak(
    seq_len: int,
    head_dim: int = 64,
    *,
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
        TypeError: ``dtype`` is not floating (integers and complex are refused).
        TypeError, ValueError: ``seq_len`` or ``head_dim`` is not a positive integer, ``naive``
            is not a bool, or ``seed`` not an integer >= 0.
    """
    seq_len = check_int("seq_len", seq_len)
    head_dim = check_int("head_dim", head_dim)
    resolved = check_float_dtype(dtype)
    fn = naive_attention_probs if check_bool("naive", naive) else attention_probs
    rng = np.random.default_rng(check_seed(seed))
    q = rng.standard_normal((seq_len, head_dim)).astype(resolved)
    k = rng.standard_normal((seq_len, head_dim)).astype(resolved)
    return peak_bytes(lambda: fn(q, k))
