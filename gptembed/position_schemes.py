"""Five ways to give the one-head attention model position, with one model and one training loop.

The model is :mod:`gptembed.attention_model`'s causal attention head; only where position enters
changes:

- ``"learned"``: a learned absolute table added to the token rows, as in GPT-2 and GPT-3
  (:class:`~gptembed.embedding.GPTStyleEmbedding`, every row trained).
- ``"sinusoidal"``: the fixed table of Vaswani et al. 2017
  (:func:`~gptembed.positions.sinusoidal_table`) added to the token rows, never trained.
- ``"rotary"``: nothing added; the query and the key at position ``t`` are rotated, one pair of
  dimensions at a time, through the angles ``t * theta_i`` (RoPE: Su et al. 2021, "RoFormer",
  arXiv:2104.09864), so that ``q_i . k_j`` sees the positions only through ``i - j``.
- ``"alibi"``: nothing added; ``-m * (i - j)`` is added to the score of query ``i`` and key ``j``
  with a fixed slope ``m`` (ALiBi: Press, Smith & Lewis 2021, "Train Short, Test Long",
  arXiv:2108.12409).
- ``"none"``: no position signal at all; the causal mask is all that tells positions apart.

Every scheme is the same :class:`~gptembed.attention_model.AttentionModel`, with the same initial
token rows and projections for a given seed; the embedding's position table does the scheme's
part. The learned table trains each row. The sinusoidal table is frozen. The three schemes that
add nothing train *one* row shared by every position (it starts at zero and every row takes the
same update): a bias on the queries, keys and values that carries no position, which the two
tables have anyway (a learned table learns its own mean; the slowest cosines of a sinusoidal
table are close to 1 at every position).

:func:`at_length` makes a trained model run past its length: the learned table needs new rows (one
of :meth:`~gptembed.embedding.GPTStyleEmbedding.extended`'s methods), the sinusoidal table more
rows of its formula, and the other three nothing but their shared row repeated.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import partial
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._attention import backward_from, check_step_fits, head_scores, project
from ._checks import as_real_array, check_float, check_int, check_targets
from .attention_model import AttentionConfig, AttentionModel, Forward
from .attention_model import forward as attention_forward
from .attention_model import init_model as init_attention
from .embedding import Extension, GPTStyleEmbedding
from .lookback import make_lookback
from .optim import IGNORE, Batch, TrainResult, cross_entropy, run_training
from .positions import SCHEMES, Scheme, linear_bias, rotate, sinusoidal_table

_SHARED_ROW: tuple[Scheme, ...] = ("rotary", "alibi", "none")
"""The schemes that add nothing to the token rows; their position table is one shared row."""


@dataclass(frozen=True, kw_only=True)
class SchemeConfig(AttentionConfig):
    """A run of the attention model with one position scheme on the lookback task.

    The sizes are :class:`~gptembed.attention_model.AttentionConfig`'s but for a shorter training
    length (16) and a head twice as wide (16, so a rotary head has eight frequencies).

    Attributes:
        scheme: one of :data:`SCHEMES`.
        alibi_slope: ``m`` of the linear bias.
        rotary_base: the wavelength scale of the rotary angles (10,000, as in RoPE).
    """

    # AttentionConfig's sizes, but for these two:
    seq_len: int = 16
    head_dim: int = 16
    # the scheme:
    scheme: Scheme = "learned"
    alibi_slope: float = 0.5
    rotary_base: float = 10000.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if not self.use_positions:
            raise ValueError("use_positions=False is scheme='none' here: pass that instead")
        self._check(check_float, "alibi_slope", above=0)
        self._check(check_float, "rotary_base", above=1)
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even (rotary pairs), got {self.head_dim}")


@dataclass
class SchemeModel:
    """The attention model and the run that made it.

    Attributes:
        attention: the model; what its position table holds depends on the scheme.
        config: the run's configuration (scheme, slope, base).
    """

    attention: AttentionModel
    config: SchemeConfig

    @property
    def scheme(self) -> Scheme:
        """Which of :data:`SCHEMES` the model uses."""
        return self.config.scheme

    @property
    def embedding(self) -> GPTStyleEmbedding:
        """The attention model's embedding layer (the training loop's view of any toy model)."""
        return self.attention.embedding

    def parameters(self) -> dict[str, NDArray[np.floating]]:
        """The attention model's arrays by name, not copies."""
        return self.attention.parameters()

    @property
    def max_seq_len(self) -> int:
        """The longest sequence the model runs as it is (:func:`at_length` makes it longer)."""
        return self.attention.embedding.max_seq_len


def init_model(config: SchemeConfig) -> SchemeModel:
    """A fresh model: :func:`~gptembed.attention_model.init_model`'s weights, whatever the scheme.

    The position table starts as the learned table's random draw (``"learned"``), the sinusoidal
    table (``"sinusoidal"``) or zeros (the shared row of the other three).
    """
    attention = init_attention(config)
    table = attention.embedding.position_embeddings  # (T, D), updated in place
    if config.scheme == "sinusoidal":
        table[:] = sinusoidal_table(config.seq_len, config.embed_dim)
    elif config.scheme in _SHARED_ROW:
        table[:] = 0.0
    return SchemeModel(attention, config)


def forward(model: SchemeModel, token_ids: ArrayLike, *, window: int | None = None) -> Forward:
    """Run the model on ids ``(T,)`` or ``(B, T)`` at positions ``0 .. T-1``.

    The scheme sets the scores; masking, softmax and read-out are
    :func:`gptembed.attention_model.forward`'s. The returned ``q`` and ``k`` are the ones the
    scores were computed from (rotated, for ``"rotary"``).

    Args:
        window: if given, query ``i`` sees only the keys ``j > i - window`` (the last ``window``
            positions, itself included), as in sliding-window attention.

    Raises:
        TypeError, ValueError: as :meth:`GPTStyleEmbedding.check_ids`, so a sequence longer than
            :attr:`SchemeModel.max_seq_len` is refused (see :func:`at_length`); or a window that
            is not a positive integer.
    """
    attention, config = model.attention, model.config
    ids = attention.embedding.check_ids(token_ids)  # (T,) or (B, T)
    seq_len = ids.shape[-1]
    q, k, _ = project(attention, attention.embedding.forward(ids))  # (..., T, H) each
    # An empty sequence (T = 0) has no position to rotate or bias: its result is empty.
    if config.scheme == "rotary" and seq_len:
        q, k = rotate(q, config.rotary_base), rotate(k, config.rotary_base)
    scores = head_scores(q, k)  # (..., T, T)
    if config.scheme == "alibi" and seq_len:
        scores = scores + linear_bias(seq_len, config.alibi_slope)
    if window is not None:
        window = check_int("window", window)
        t = np.arange(seq_len)
        scores = np.where(t[:, None] - t[None, :] >= window, -np.inf, scores)
    # attention_model.forward embeds and projects again (cheap next to the (T, T) scores), so
    # that masking, softmax and read-out have one implementation for every scheme.
    result = attention_forward(attention, ids, scores=scores)
    result.q, result.k = q, k
    return result


def loss_and_grads(
    model: SchemeModel, inputs: ArrayLike, targets: ArrayLike
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """Mean cross-entropy over the scored positions of ``(B, T)`` inputs, and every gradient.

    Returns:
        ``(loss, grads)`` keyed like :meth:`AttentionModel.parameters`: the gradient of each
        array as it is used, each position row on its own (:func:`train` applies the scheme's
        rule to the table's gradient).
    """
    ids = model.attention.embedding.check_ids(inputs)
    if ids.ndim != 2:
        raise ValueError(f"inputs must have shape (B, T), got {ids.shape}")
    base = model.config.rotary_base
    rotate_back = None
    if model.scheme == "rotary":

        def rotate_back(grad: NDArray[np.float64]) -> NDArray[np.float64]:
            return rotate(grad, base, inverse=True)

    return backward_from(model.attention, forward(model, ids), ids, targets, rotate_back)


def make_batch(
    config: SchemeConfig, n_sequences: int, seq_len: int, *, seed: int | np.random.Generator = 0
) -> Batch:
    """``(inputs, targets)`` of the lookback task at ``config.offset``, each ``(B, T)``;
    :data:`~gptembed.optim.IGNORE` marks no target (:func:`~gptembed.lookback.make_lookback`)."""
    return make_lookback(n_sequences, seq_len, config.vocab_size, config.offset, seed=seed)


def train(
    config: SchemeConfig,
    model: SchemeModel | None = None,
    *,
    frozen: Collection[str] = (),
) -> TrainResult[SchemeModel, SchemeConfig]:
    """Train a :class:`SchemeModel` on fresh batches of the lookback task, through
    :func:`~gptembed.optim.run_training` like every model of the package.

    The position table follows the scheme: every row trained (``"learned"``), frozen
    (``"sinusoidal"``), or one row shared by all positions (the others: each row gets the sum of
    the rows' gradients, so the rows, equal at the start, stay equal). ``frozen`` names more
    arrays to leave as they start (chapter 10 freezes the shared row at zero this way). Training
    starts from a copy of ``model`` if one is given. Deterministic: the same ``config`` gives the
    same losses and weights on the same machine.

    Raises:
        ValueError: a step's scores would not fit in the machine's memory; and as
            :func:`~gptembed.optim.run_training`.
    """
    check_step_fits(config.batch_size, config.seq_len)

    def step(
        model: SchemeModel, inputs: NDArray[np.intp], targets: NDArray[np.intp]
    ) -> tuple[float, dict]:
        loss, grads = loss_and_grads(model, inputs, targets)
        if config.scheme in _SHARED_ROW:
            rows = grads["position_embeddings"]  # (T, D)
            rows[:] = rows.sum(axis=0)
        return loss, grads

    draw = partial(make_batch, config, config.batch_size, config.seq_len)
    fixed = ("position_embeddings",) if config.scheme == "sinusoidal" else ()
    return run_training(config, model, init_model, step, draw, frozen=(*fixed, *frozen))


def at_length(
    model: SchemeModel, seq_len: int, method: Extension | None = None, *, seed: int | None = None
) -> SchemeModel:
    """The trained model able to run sequences of up to ``seq_len``; its weights are shared.

    Args:
        seq_len: the new longest sequence, at least :attr:`SchemeModel.max_seq_len`.
        method: for ``"learned"`` only, and required there: how the missing rows are made, one of
            :meth:`GPTStyleEmbedding.extended`'s methods (``seed`` seeds ``"fresh"`` rows). A
            sinusoidal table gets the rows of its formula; the other schemes repeat their shared
            row, which carries no position.

    Raises:
        TypeError: ``seq_len`` is not an integer.
        ValueError: ``seq_len`` shorter than the model's, a learned table without a method, or a
            method for a scheme with no learned rows to extend.
    """
    embedding = model.attention.embedding
    seq_len = check_int("seq_len", seq_len, minimum=embedding.max_seq_len)
    if model.scheme == "learned":
        if method is None:
            raise ValueError(
                "a learned table has no rows past its length: pass method='fresh', "
                "'interpolate' or 'tile' (GPTStyleEmbedding.extended)"
            )
        grown = embedding.extended(seq_len, method=method, seed=seed)
    elif method is not None:
        raise ValueError(f"method is for a learned table only; {model.scheme!r} has none to grow")
    else:
        if model.scheme == "sinusoidal":
            table = sinusoidal_table(seq_len, embedding.embed_dim, dtype=embedding.dtype)
        else:
            table = np.repeat(embedding.position_embeddings[:1], seq_len, axis=0)
        grown = GPTStyleEmbedding.from_tables(embedding.token_embeddings, table)
    return SchemeModel(replace(model.attention, embedding=grown), model.config)


def loss_by_position(
    model: SchemeModel, inputs: ArrayLike, targets: ArrayLike, *, window: int | None = None
) -> NDArray[np.float64]:
    """Mean cross-entropy (nats) at each position of ``(B, T)`` inputs, over the rows: ``(T,)``.

    A position where no row has a target (all :data:`IGNORE`) is ``nan``. ``window`` is passed
    to :func:`forward`. One ``(T,)`` sequence is taken as a batch of one: its own losses.

    Raises:
        TypeError: targets that are not integers; and as :func:`forward`.
        ValueError: targets of another shape than the inputs, or a target outside ``[0, V)``
            that is not IGNORE; and as :func:`forward`.
    """
    logits = forward(model, inputs, window=window).logits  # (B, T, V)
    shape, n_classes = logits.shape[:-1], logits.shape[-1]
    y = check_targets(targets, shape, n_classes, like="the inputs' shape", ignore=IGNORE)
    if y.ndim == 1:  # one sequence: a batch of one
        logits, y = logits[None], y[None]
    losses = np.full(y.shape[-1], np.nan)  # (T,)
    for t in range(y.shape[-1]):
        rows = y[:, t] != IGNORE  # (B,)
        if rows.any():
            losses[t] = cross_entropy(logits[rows, t], y[rows, t])[0]
    return losses


def losses_by_length(
    per_position: ArrayLike, train_len: int, multiples: tuple[int, ...] = (1, 2, 4)
) -> dict[int, float]:
    """The mean loss over the positions each length adds, from :func:`loss_by_position`'s curve.

    For multiples ``(1, 2, 4)`` of ``T``: positions ``[0, T)`` (what training saw), ``[T, 2T)`` and
    ``[2T, 4T)``; positions without a target (``nan``) are left out.

    Returns:
        ``{multiple: mean loss}`` in the order given.

    Raises:
        TypeError: a curve that is not real numbers.
        ValueError: a curve that is not 1-D (a ``(B, T)`` batch's rows are not positions),
            multiples that do not increase from 1 or more, or a curve shorter than the last
            length.
    """
    curve = as_real_array("per_position", per_position)
    if curve.ndim != 1:
        raise ValueError(
            "per_position must be one curve (T,), a loss per position such as "
            f"loss_by_position's, got shape {curve.shape}: average a batch's rows first"
        )
    train_len = check_int("train_len", train_len)
    if not multiples or multiples[0] < 1 or any(a >= b for a, b in pairwise(multiples)):
        raise ValueError(f"multiples must increase from 1 or more, got {multiples}")
    if len(curve) < multiples[-1] * train_len:
        raise ValueError(
            f"the curve has {len(curve)} positions; {multiples[-1]} x {train_len} are needed"
        )
    return {
        end: float(np.nanmean(curve[start * train_len : end * train_len]))
        for start, end in pairwise((0, *multiples))
    }
