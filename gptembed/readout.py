"""The read-out model: the embedding layer plus one linear map, trained on record streams.

The smallest model in which position matters. The vector at position ``t`` goes straight to
next-character logits::

    x = wte[ids] + wpe[0:T]          # (B, T, D)
    logits = x @ W + b               # (B, T, V)

There is no attention, so each prediction sees one token and one position row. Training the same
model with the position table frozen at zero measures what the table contributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_bool, check_int, check_record_format, check_type
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
from .records import PUNCTUATION, VOCAB_SIZE, make_records


@dataclass(frozen=True, kw_only=True)
class ReadoutConfig(RunConfig):
    """A read-out run: the data and sizes, plus :class:`~gptembed.optim.RunConfig`'s schedule.

    Attributes:
        record_format: the record layout (see :func:`make_records`).
        seq_len: ``T``, the context length and the rows of the position table.
        embed_dim: ``D``, the width of both tables and the read-out's input.
        random_offset: start sequences anywhere inside a record (see :func:`make_records`).
    """

    record_format: str = "AA-99;"
    seq_len: int = 30
    embed_dim: int = 16
    random_offset: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_record_format(self.record_format, PUNCTUATION)
        self._check(check_int, "seq_len", "embed_dim")
        self._check(check_bool, "random_offset")


@dataclass
class ReadoutModel(ArrayModel):
    """The embedding layer plus a linear read-out to next-character logits.

    Attributes:
        embedding: the :class:`GPTStyleEmbedding`, ``(V, D)`` token and ``(T, D)`` position tables.
        weight: ``(D, V)`` read-out matrix.
        bias: ``(V,)`` read-out bias.
    """

    embedding: GPTStyleEmbedding
    weight: NDArray[np.float64]
    bias: NDArray[np.float64]

    def readout(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """Logits ``(..., V)`` of embedded inputs ``(..., D)``: ``x @ weight + bias``."""
        return x @ self.weight + self.bias

    def logits(self, inputs: ArrayLike) -> NDArray[np.float64]:
        """Next-character logits ``(B, T, V)`` for ids ``(B, T)`` (or ``(T, V)`` for ``(T,)``)."""
        return self.readout(self.embedding.forward(inputs))


def init_model(config: ReadoutConfig) -> ReadoutModel:
    """A fresh model: tables as in :class:`GPTStyleEmbedding`, read-out from N(0, 0.02**2).

    The token table and read-out do not depend on ``use_positions``, so runs with and without a
    position table start from the same point; without positions the table is all zeros.

    Raises:
        TypeError: ``config`` is not a :class:`ReadoutConfig`.
    """
    config = check_type("config", config, ReadoutConfig)
    embedding = GPTStyleEmbedding(
        VOCAB_SIZE, config.seq_len, config.embed_dim, seed=config.seed, dtype=np.float64
    )
    if not config.use_positions:
        embedding.position_embeddings[:] = 0.0
    rng = weights_rng(seed=config.seed)
    weight = rng.standard_normal((config.embed_dim, VOCAB_SIZE)) * INIT_STD
    return ReadoutModel(embedding, weight, np.zeros(VOCAB_SIZE))


def loss_and_grads(
    model: ReadoutModel, inputs: ArrayLike, targets: ArrayLike
) -> tuple[float, dict[str, NDArray[np.floating]]]:
    """Mean cross-entropy of the model on ``(B, T)`` inputs and targets, and every gradient.

    Returns:
        ``(loss, grads)``; ``grads`` has the keys and shapes of :meth:`ReadoutModel.parameters`.
    """
    ids = model.embedding.check_ids(inputs)
    x = model.embedding.forward(ids)  # (B, T, D)
    logits = model.readout(x)  # (B, T, V)
    loss, dlogits = cross_entropy(logits, targets)  # dlogits: (B, T, V)
    dim = model.weight.shape[0]
    grad_weight = x.reshape(-1, dim).T @ dlogits.reshape(-1, VOCAB_SIZE)  # (D, V)
    grad_bias = dlogits.reshape(-1, VOCAB_SIZE).sum(axis=0)  # (V,)
    dx = dlogits @ model.weight.T  # (B, T, D)
    # the tables' gradients, keyed as parameters() keys the tables: (V, D) and (T, D)
    grads = dict(zip(model.embedding.parameters(), model.embedding.backward(dx, ids), strict=True))
    grads.update(weight=grad_weight, bias=grad_bias)
    return loss, grads


def train(
    config: ReadoutConfig, model: ReadoutModel | None = None
) -> TrainResult[ReadoutModel, ReadoutConfig]:
    """Train a :class:`ReadoutModel` on record streams, a fresh batch of :func:`make_records`
    at every step, with Adam.

    Training starts from a copy of ``model`` if one is given (which is left as it was), else from
    :func:`init_model` of ``config``; :func:`~gptembed.optim.run_training` runs it.

    Raises:
        TypeError: ``config`` is not a :class:`ReadoutConfig`, or ``model`` not a
            :class:`ReadoutModel`.
        ValueError: ``model``'s arrays do not have the shapes ``config`` gives (``seq_len``
            position rows, ``embed_dim`` wide, the records' alphabet as vocabulary).
    """
    config = check_type("config", config, ReadoutConfig)
    fmt, offset = config.record_format, config.random_offset
    draw = partial(make_records, config.batch_size, config.seq_len, fmt, random_offset=offset)
    return run_training(config, model, init_model, loss_and_grads, draw)


def evaluate(
    model: ReadoutModel, inputs: ArrayLike, targets: ArrayLike, start_pos: int = 0
) -> Evaluation:
    """Mean cross-entropy (nats) and accuracy of the argmax of ``model`` on ``(B, T)`` inputs and
    targets, the inputs at positions ``start_pos ..`` (see :meth:`GPTStyleEmbedding.forward`); no
    update."""
    x = model.embedding.forward(inputs, start_pos)  # (B, T, D)
    return Evaluation.of(model.readout(x), targets)
