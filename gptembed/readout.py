"""The read-out model: the embedding layer plus one linear map, trained on record streams.

The smallest model in which position matters. The vector at position ``t`` goes straight to
next-character logits::

    x = wte[ids] + wpe[0:T]          # (B, T, D)
    logits = x @ W + b               # (B, T, V)

There is no attention, so each prediction sees one token and one position row. Training the same
model with the position table frozen at zero measures what the table contributes.

The products use ``np.einsum`` rather than ``@``: these matrices are tiny, and einsum never hands
them to a multi-threaded BLAS, so a run takes the same time on a busy machine and gives the same
bits whatever the thread count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_bool, check_int, check_type
from .embedding import INIT_STD, GPTStyleEmbedding
from .optim import RunConfig, TrainResult, cross_entropy, fit, named_arrays
from .records import VOCAB_SIZE, check_record_format, make_records


@dataclass(frozen=True)
class TrainConfig(RunConfig):
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
        check_record_format(self.record_format)
        self._keep("seq_len", check_int("seq_len", self.seq_len))
        self._keep("embed_dim", check_int("embed_dim", self.embed_dim))
        self._keep("random_offset", check_bool("random_offset", self.random_offset))


@dataclass
class ReadoutModel:
    """The embedding layer plus a linear read-out to next-character logits.

    Attributes:
        embedding: the :class:`GPTStyleEmbedding`, ``(V, D)`` token and ``(T, D)`` position tables.
        weight: ``(D, V)`` read-out matrix.
        bias: ``(V,)`` read-out bias.
    """

    embedding: GPTStyleEmbedding
    weight: NDArray[np.float64]
    bias: NDArray[np.float64]

    def parameters(self) -> dict[str, NDArray[np.floating]]:
        """Every array by name (the two tables first); the optimizer updates them in place."""
        return named_arrays(self)

    def readout(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """Logits ``(..., V)`` of embedded inputs ``(..., D)``: ``x @ weight + bias``."""
        return np.einsum("...d,dv->...v", x, self.weight) + self.bias

    def logits(self, inputs: ArrayLike) -> NDArray[np.float64]:
        """Next-character logits ``(B, T, V)`` for ids ``(B, T)`` (or ``(T, V)`` for ``(T,)``)."""
        return self.readout(self.embedding.forward(inputs))


def init_model(config: TrainConfig) -> ReadoutModel:
    """A fresh model: tables as in :class:`GPTStyleEmbedding`, read-out from N(0, 0.02**2).

    The token table and read-out do not depend on ``use_positions``, so runs with and without a
    position table start from the same point; without positions the table is all zeros.

    Raises:
        TypeError: ``config`` is not a :class:`TrainConfig`.
    """
    config = check_type("config", config, TrainConfig)
    embedding = GPTStyleEmbedding(
        VOCAB_SIZE, config.seq_len, config.embed_dim, seed=config.seed, dtype=np.float64
    )
    if not config.use_positions:
        embedding.position_embeddings[:] = 0.0
    rng = np.random.default_rng([config.seed, 1])
    weight = rng.standard_normal((config.embed_dim, VOCAB_SIZE)) * INIT_STD
    return ReadoutModel(embedding, weight, np.zeros(VOCAB_SIZE))


def loss_and_grads(
    model: ReadoutModel, inputs: ArrayLike, targets: ArrayLike
) -> tuple[float, dict[str, NDArray[np.float64]]]:
    """Mean cross-entropy of the model on ``(B, T)`` inputs and targets, and every gradient.

    Returns:
        ``(loss, grads)``; ``grads`` has the keys and shapes of :meth:`ReadoutModel.parameters`.
    """
    ids = model.embedding.check_ids(inputs)
    x = model.embedding.forward(ids)  # (B, T, D)
    logits = model.readout(x)  # (B, T, V)
    loss, dlogits = cross_entropy(logits, targets)  # dlogits: (B, T, V)
    dim = model.weight.shape[0]
    grad_weight = np.einsum("nd,nv->dv", x.reshape(-1, dim), dlogits.reshape(-1, VOCAB_SIZE))
    grad_bias = dlogits.reshape(-1, VOCAB_SIZE).sum(axis=0)  # (V,)
    dx = np.einsum("...v,dv->...d", dlogits, model.weight)  # (B, T, D)
    grad_token, grad_position = model.embedding.backward(dx, ids)  # (V, D), (T, D)
    grads = {
        "token_embeddings": grad_token,
        "position_embeddings": grad_position,
        "weight": grad_weight,
        "bias": grad_bias,
    }
    return loss, grads


def train(
    config: TrainConfig, model: ReadoutModel | None = None
) -> TrainResult[ReadoutModel, TrainConfig]:
    """Train a :class:`ReadoutModel` with Adam on fresh batches of records.

    Args:
        config: the run; its ``seq_len`` and ``embed_dim`` must match ``model``'s tables.
        model: where training starts; by default :func:`init_model` of ``config``. A given model
            is copied first, so it is left as it was (tables shared with other layers stay
            intact); training continues from its values with a fresh Adam, on the batches of
            ``config.seed``. ``train(config, init_model(config))`` equals ``train(config)`` bit
            for bit.

    Deterministic: the same ``config`` and start give the same losses and tables on the same
    machine. With ``use_positions=False`` the position table is not updated (all zeros for a
    fresh model).

    Raises:
        TypeError: ``config`` is not a :class:`TrainConfig`, or ``model`` not a
            :class:`ReadoutModel`.
        ValueError: ``model``'s arrays do not have the shapes ``config`` gives (``seq_len``
            position rows, ``embed_dim`` wide, the records' alphabet as vocabulary).
    """
    config = check_type("config", config, TrainConfig)
    model = init_model(config) if model is None else _copy_for(config, model)
    initial = model.embedding.position_embeddings.copy()
    data_rng = np.random.default_rng([config.seed, 2])
    fmt, offset = config.record_format, config.random_offset
    losses = fit(
        model.parameters(),
        lambda inputs, targets: loss_and_grads(model, inputs, targets),
        lambda: make_records(config.batch_size, config.seq_len, fmt, data_rng, offset),
        config.steps,
        config.learning_rate,
        frozen=() if config.use_positions else ("position_embeddings",),
    )
    return TrainResult(model, losses, initial, config)


def _copy_for(config: TrainConfig, model: ReadoutModel) -> ReadoutModel:
    """A copy of ``model`` to train under ``config``, after checking that its sizes fit."""
    layer = check_type("model", model, ReadoutModel).embedding
    tables = (layer.token_embeddings, layer.position_embeddings, model.weight, model.bias)
    shapes = tuple(array.shape for array in tables)
    dim = config.embed_dim
    wanted = ((VOCAB_SIZE, dim), (config.seq_len, dim), (dim, VOCAB_SIZE), (VOCAB_SIZE,))
    if shapes != wanted:
        raise ValueError(
            f"model's token table, position table, weight and bias have shapes {shapes}; "
            f"config needs {wanted}"
        )
    embedding = GPTStyleEmbedding.from_tables(
        layer.token_embeddings.copy(), layer.position_embeddings.copy()
    )
    return ReadoutModel(embedding, model.weight.copy(), model.bias.copy())


def evaluate(model: ReadoutModel, inputs: ArrayLike, targets: ArrayLike) -> float:
    """Mean cross-entropy (nats) of ``model`` on ``(B, T)`` inputs and targets; no update."""
    return cross_entropy(model.logits(inputs), targets)[0]
