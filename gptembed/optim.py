"""Learning machinery shared by the book's models: cross-entropy, Adam and the training loop."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_in_range, check_int, check_integer_array, check_positive_float


def cross_entropy(logits: ArrayLike, targets: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """Mean cross-entropy (nats) of ``(..., V)`` logits against ``(...)`` ids, and its gradient.

    Returns:
        ``(loss, dloss_dlogits)``, the gradient with the logits' shape.

    Raises:
        TypeError: the targets are not integers.
        ValueError: the shapes do not match, or a target is outside ``[0, V)``.
    """
    z = np.asarray(logits, dtype=np.float64)
    n_classes = z.shape[-1] if z.ndim else 0
    y = check_integer_array("targets", targets, n_classes)
    if z.ndim < 1 or z.shape[:-1] != y.shape:
        raise ValueError(
            f"targets must have the logits' shape without the last axis, {z.shape[:-1]}, "
            f"got {y.shape}"
        )
    check_in_range("target id", y, n_classes, "targets")
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


@dataclass(frozen=True)
class RunConfig:
    """What every toy model's training run shares; equal configs give bit-identical runs.

    Attributes:
        batch_size: ``B``, sequences per step (a fresh batch every step).
        steps: optimizer steps.
        learning_rate: Adam's step size.
        use_positions: train the position table; if False it is frozen at zero.
        seed: seeds the initial weights and the batches.
    """

    batch_size: int = 32
    steps: int = 150
    learning_rate: float = 0.02
    use_positions: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("batch_size", self.batch_size)
        check_int("steps", self.steps, minimum=0)
        check_int("seed", self.seed, minimum=0)
        check_positive_float("learning_rate", self.learning_rate)


def named_arrays(model: Any) -> dict[str, NDArray[np.floating]]:
    """A dataclass model's arrays by name, not copies: its ``embedding``'s tables, then its own.

    ``model`` is a dataclass whose ``embedding`` field is a :class:`GPTStyleEmbedding`; its other
    fields that are arrays follow in order (a size such as a head count is skipped). An optimizer
    given this dict updates the model in place.
    """
    arrays = dict(model.embedding.parameters())
    for f in fields(model):
        value = getattr(model, f.name)
        if f.name != "embedding" and isinstance(value, np.ndarray):
            arrays[f.name] = value
    return arrays


Model = TypeVar("Model")
Config = TypeVar("Config")


@dataclass
class TrainResult(Generic[Model, Config]):
    """What a toy model's ``train`` returns.

    Attributes:
        model: the trained model.
        losses: ``(steps,)`` training loss (nats) of each step's batch, before its update.
        initial_positions: ``(T, D)`` copy of the position table before training.
        config: the configuration that produced the run.
    """

    model: Model
    losses: NDArray[np.float64]
    initial_positions: NDArray[np.floating]
    config: Config


Batch = tuple[NDArray[np.intp], NDArray[np.intp]]
"""``(inputs, targets)``, two ``(B, T)`` arrays of ids."""


def fit(
    params: dict[str, NDArray[np.floating]],
    loss_and_grads: Callable[[NDArray[np.intp], NDArray[np.intp]], tuple[float, dict]],
    next_batch: Callable[[], Batch],
    steps: int,
    learning_rate: float,
    frozen: Collection[str] = (),
    schedule: Callable[[int], float] | None = None,
    after_step: Callable[[int], None] | None = None,
) -> NDArray[np.float64]:
    """Train ``params`` in place with a fresh :class:`Adam`, one new batch a step.

    Args:
        params: the model's arrays by name, updated in place.
        loss_and_grads: ``(inputs, targets) -> (loss, grads)``, ``grads`` keyed like ``params``.
        next_batch: draws the next ``(inputs, targets)``.
        steps: optimizer steps.
        learning_rate: Adam's step size.
        frozen: names of arrays that are never updated.
        schedule: ``step -> learning rate`` (0-based steps), replacing ``learning_rate`` at
            every step; by default the rate stays ``learning_rate``.
        after_step: called with the number of steps done after each update (to log progress).

    Returns:
        ``(steps,)`` losses (nats), each of its step's batch before the update.
    """
    optimizer = Adam(learning_rate)
    losses = np.empty(steps)
    for step in range(steps):
        if schedule is not None:
            optimizer.learning_rate = schedule(step)
        losses[step], grads = loss_and_grads(*next_batch())
        for name in frozen:
            del grads[name]
        optimizer.step(params, grads)
        if after_step is not None:
            after_step(step + 1)
    return losses
