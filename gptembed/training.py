"""The smallest model in which position matters, trained in numpy.

Data: a stream of fixed-format records such as ``"QX-37;"``, so the class of the next character
(letter, digit or a fixed punctuation mark) is set by the position inside the record. Model: the
embedding layer, then a linear read-out from the vector at position ``t`` to next-character logits::

    x = wte[ids] + wpe[0:T]          # (B, T, D)
    logits = x @ W + b               # (B, T, V)

trained with cross-entropy and a few lines of Adam. Training the same model with the position
table frozen at zero measures what the position table contributes. numpy only: no plotting here.

The products use ``np.einsum`` rather than ``@``: these matrices are tiny, and einsum never hands
them to a multi-threaded BLAS, so a run takes the same time on a busy machine and gives the same
bits whatever the thread count.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_int
from .embedding import INIT_STD, GPTStyleEmbedding

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
PUNCTUATION = "-;:/.#"
ALPHABET = LETTERS + DIGITS + PUNCTUATION
"""Every character a record can hold; a character's id is its index here."""

VOCAB_SIZE = len(ALPHABET)

_CHAR_TO_ID = {ch: i for i, ch in enumerate(ALPHABET)}
_LETTER_IDS = np.arange(len(LETTERS))
_DIGIT_IDS = np.arange(len(LETTERS), len(LETTERS) + len(DIGITS))


def encode(text: str) -> NDArray[np.intp]:
    """Ids ``(len(text),)`` of the characters of ``text``.

    Raises:
        ValueError: a character is not in :data:`ALPHABET`.
    """
    for index, ch in enumerate(text):
        if ch not in _CHAR_TO_ID:
            raise ValueError(
                f"character {ch!r} at index {index} is not in the alphabet {ALPHABET!r}"
            )
    return np.array([_CHAR_TO_ID[ch] for ch in text], dtype=np.intp)


def decode(ids: ArrayLike) -> str:
    """The text of a 1-D array of ids in ``[0, VOCAB_SIZE)``."""
    return "".join(ALPHABET[int(i)] for i in np.asarray(ids).reshape(-1))


def check_record_format(record_format: str) -> str:
    """Return ``record_format`` if valid: ``'A'`` any letter, ``'9'`` any digit, else literal.

    Literal characters must come from :data:`PUNCTUATION`, so every character belongs to exactly
    one field class.

    Raises:
        TypeError: not a string.
        ValueError: empty, or a character that is neither ``'A'``, ``'9'`` nor punctuation.
    """
    if not isinstance(record_format, str):
        raise TypeError(
            f"record_format must be a string such as 'AA-99;', got {record_format!r} "
            f"of type {type(record_format).__name__}"
        )
    if not record_format:
        raise ValueError("record_format must hold at least 1 character, got ''")
    for index, ch in enumerate(record_format):
        if ch not in "A9" and ch not in PUNCTUATION:
            raise ValueError(
                f"record_format character {ch!r} at index {index} is not allowed: use 'A' "
                f"(any letter), '9' (any digit) or a literal from {PUNCTUATION!r}"
            )
    return record_format


def _field_choices(ch: str) -> NDArray[np.intp]:
    """The ids a format character can produce."""
    if ch == "A":
        return _LETTER_IDS
    if ch == "9":
        return _DIGIT_IDS
    return np.array([_CHAR_TO_ID[ch]], dtype=np.intp)


def make_records(
    n_sequences: int,
    seq_len: int,
    record_format: str = "AA-99;",
    seed: int | np.random.Generator = 0,
    random_offset: bool = False,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Sequences of back-to-back records and the next character at every position.

    Each sequence is ``seq_len + 1`` characters of a record stream; inputs are the first
    ``seq_len`` and targets the last ``seq_len``, so ``targets[:, t]`` follows ``inputs[:, t]``.
    Every sequence starts at the start of a record unless ``random_offset``, which starts each
    one at a random place inside a record (position then says nothing about the field).

    Args:
        n_sequences: ``B``, sequences to draw.
        seq_len: ``T``, characters per input sequence.
        record_format: ``'A'`` a random letter, ``'9'`` a random digit, punctuation literal.
        seed: an int seed or a ``np.random.Generator`` to draw from.
        random_offset: start each sequence at a uniformly random offset inside a record.

    Returns:
        ``(inputs, targets)``, both ``(B, T)`` arrays of ids in ``[0, VOCAB_SIZE)``.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, or a bad format.
    """
    n_sequences = check_int("n_sequences", n_sequences)
    seq_len = check_int("seq_len", seq_len)
    record_format = check_record_format(record_format)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    period = len(record_format)
    n_records = -(-(seq_len + 1 + period) // period)  # enough records for any offset
    stream = np.empty((n_sequences, n_records * period), dtype=np.intp)  # (B, n_records * P)
    for k, ch in enumerate(record_format):
        choices = _field_choices(ch)
        stream[:, k::period] = choices[rng.integers(len(choices), size=(n_sequences, n_records))]
    if random_offset:
        offsets = rng.integers(period, size=n_sequences)  # (B,)
    else:
        offsets = np.zeros(n_sequences, dtype=np.intp)
    rows = offsets[:, None] + np.arange(seq_len + 1)  # (B, T + 1)
    chars = np.take_along_axis(stream, rows, axis=1)
    return chars[:, :-1], chars[:, 1:]


def loss_floor(record_format: str, seq_len: int, use_positions: bool) -> float:
    """The lowest mean cross-entropy (nats) any model of this family can reach on aligned records.

    With positions the model can know the field of the next character, which is uniform over its
    class: the floor is the mean over ``t`` of ``ln |class(t + 1)|``. Without positions it sees
    only the current character, so the floor is the conditional entropy of the next character
    given the current one, over the positions ``0 .. T-1`` of a sequence.
    """
    record_format = check_record_format(record_format)
    seq_len = check_int("seq_len", seq_len)
    period = len(record_format)
    next_fields = [record_format[(t + 1) % period] for t in range(seq_len)]
    if use_positions:
        return float(np.mean([math.log(len(_field_choices(ch))) for ch in next_fields]))
    # For each class of current character: the mixture of next-character distributions.
    mixtures: dict[str, NDArray[np.float64]] = {}
    for t, nxt in enumerate(next_fields):
        cls = record_format[t % period]
        probs = mixtures.setdefault(cls, np.zeros(VOCAB_SIZE))
        choices = _field_choices(nxt)
        probs[choices] += 1.0 / len(choices)
    total = 0.0
    for probs in mixtures.values():  # weight of a class = its count of positions = probs.sum()
        p = probs[probs > 0] / probs.sum()
        total += probs.sum() * float(-(p * np.log(p)).sum())
    return total / seq_len


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on; equal configs give bit-identical runs.

    Attributes:
        record_format: the record layout (see :func:`make_records`).
        seq_len: ``T``, the context length and the rows of the position table.
        embed_dim: ``D``, the width of both tables and the read-out's input.
        batch_size: ``B``, sequences per step (a fresh batch every step).
        steps: optimizer steps.
        learning_rate: Adam's step size.
        use_positions: train the position table; if False it is frozen at zero.
        random_offset: start sequences anywhere inside a record (see :func:`make_records`).
        seed: seeds the initial tables, the read-out and the batches.
    """

    record_format: str = "AA-99;"
    seq_len: int = 30
    embed_dim: int = 16
    batch_size: int = 32
    steps: int = 150
    learning_rate: float = 0.02
    use_positions: bool = True
    random_offset: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        check_record_format(self.record_format)
        for name in ("seq_len", "embed_dim", "batch_size"):
            check_int(name, getattr(self, name))
        check_int("steps", self.steps, minimum=0)
        check_int("seed", self.seed, minimum=0)
        lr = self.learning_rate
        if (
            isinstance(lr, bool)
            or not isinstance(lr, numbers.Real)
            or not math.isfinite(lr)
            or lr <= 0
        ):
            raise ValueError(f"learning_rate must be a finite number > 0, got {lr!r}")


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
        """The four arrays by name; the optimizer updates them in place."""
        return {
            "token_embeddings": self.embedding.token_embeddings,
            "position_embeddings": self.embedding.position_embeddings,
            "weight": self.weight,
            "bias": self.bias,
        }

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
    """
    embedding = GPTStyleEmbedding(
        VOCAB_SIZE, config.seq_len, config.embed_dim, seed=config.seed, dtype=np.float64
    )
    if not config.use_positions:
        embedding.position_embeddings[:] = 0.0
    rng = np.random.default_rng([config.seed, 1])
    weight = rng.standard_normal((config.embed_dim, VOCAB_SIZE)) * INIT_STD
    return ReadoutModel(embedding, weight, np.zeros(VOCAB_SIZE))


def cross_entropy(logits: ArrayLike, targets: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """Mean cross-entropy (nats) of ``(..., V)`` logits against ``(...)`` ids, and its gradient.

    Returns:
        ``(loss, dloss_dlogits)``, the gradient with the logits' shape.

    Raises:
        ValueError: the shapes do not match, or a target is outside ``[0, V)``.
    """
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(targets)
    if z.ndim < 1 or z.shape[:-1] != y.shape:
        raise ValueError(
            f"targets must have the logits' shape without the last axis, {z.shape[:-1]}, "
            f"got {y.shape}"
        )
    n_classes = z.shape[-1]
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        bad = y.min() if y.min() < 0 else y.max()
        raise ValueError(f"target id {bad} is out of range: targets must be in [0, {n_classes})")
    rows = z.reshape(-1, n_classes)  # (N, V)
    flat = y.reshape(-1)  # (N,)
    shifted = rows - rows.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    sums = probs.sum(axis=1, keepdims=True)  # (N, 1)
    picked = shifted[np.arange(flat.size), flat] - np.log(sums[:, 0])  # (N,) log-probabilities
    probs /= sums
    probs[np.arange(flat.size), flat] -= 1.0
    n = max(flat.size, 1)
    probs /= n
    return float(-picked.sum() / n), probs.reshape(z.shape)


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


@dataclass
class Adam:
    """Adam (Kingma & Ba) with bias correction; :meth:`step` updates arrays in place.

    Attributes:
        learning_rate: step size.
        beta1, beta2, eps: the usual constants.
    """

    learning_rate: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict[str, NDArray[np.floating]] = field(default_factory=dict)
    v: dict[str, NDArray[np.floating]] = field(default_factory=dict)

    def step(
        self, params: dict[str, NDArray[np.floating]], grads: Mapping[str, NDArray[np.floating]]
    ) -> None:
        """One update of every array in ``grads`` (arrays absent from ``grads`` stay frozen)."""
        self.t += 1
        for name, g in grads.items():
            m = self.m.setdefault(name, np.zeros_like(g))
            v = self.v.setdefault(name, np.zeros_like(g))
            m += (1 - self.beta1) * (g - m)
            v += (1 - self.beta2) * (g * g - v)
            m_hat = m / (1 - self.beta1**self.t)
            v_hat = v / (1 - self.beta2**self.t)
            params[name] -= self.learning_rate * m_hat / (np.sqrt(v_hat) + self.eps)


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        model: the trained model.
        losses: ``(steps,)`` training loss (nats) of each step's batch, before its update.
        initial_positions: ``(T, D)`` copy of the position table before training.
        config: the configuration that produced the run.
    """

    model: ReadoutModel
    losses: NDArray[np.float64]
    initial_positions: NDArray[np.floating]
    config: TrainConfig


def train(config: TrainConfig) -> TrainResult:
    """Train a :class:`ReadoutModel` with Adam on fresh batches of records.

    Deterministic: the same ``config`` gives the same losses and tables on the same machine.
    With ``use_positions=False`` the position table stays at zero throughout.
    """
    model = init_model(config)
    initial = model.embedding.position_embeddings.copy()
    data_rng = np.random.default_rng([config.seed, 2])
    optimizer = Adam(config.learning_rate)
    params = model.parameters()
    losses = np.empty(config.steps)
    for step in range(config.steps):
        inputs, targets = make_records(
            config.batch_size,
            config.seq_len,
            config.record_format,
            data_rng,
            config.random_offset,
        )
        losses[step], grads = loss_and_grads(model, inputs, targets)
        if not config.use_positions:
            del grads["position_embeddings"]  # frozen at zero
        optimizer.step(params, grads)
    return TrainResult(model, losses, initial, config)


def evaluate(model: ReadoutModel, inputs: ArrayLike, targets: ArrayLike) -> float:
    """Mean cross-entropy (nats) of ``model`` on ``(B, T)`` inputs and targets; no update."""
    return cross_entropy(model.logits(inputs), targets)[0]


def cosine_similarity_matrix(table: ArrayLike) -> NDArray[np.float64]:
    """``(L, L)`` cosine similarity between every pair of rows of an ``(L, D)`` table.

    Raises:
        ValueError: ``table`` is not 2-D, or a row is all zeros (its direction is undefined).
    """
    rows = np.asarray(table, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"table must be a 2-D (L, D) array, got shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1)  # (L,)
    if rows.size and not norms.all():
        bad = int(np.flatnonzero(norms == 0)[0])
        raise ValueError(f"row {bad} is all zeros: cosine similarity needs nonzero rows")
    unit = rows / norms[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def lagged_similarity(table: ArrayLike, lag: int) -> NDArray[np.float64]:
    """``(L - lag,)`` cosine similarity of row ``t`` with row ``t + lag``, for ``t = 0 .. L-lag-1``.

    Raises:
        ValueError: ``lag`` is not in ``[1, L - 1]``, or as :func:`cosine_similarity_matrix`.
    """
    sims = cosine_similarity_matrix(table)  # (L, L)
    lag = check_int("lag", lag)
    if lag >= len(sims):
        raise ValueError(f"lag must be in [1, {len(sims) - 1}] for this table, got {lag}")
    return np.diagonal(sims, offset=lag).copy()
