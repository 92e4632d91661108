"""Learning machinery shared by the book's models: cross-entropy, evaluation, Adam, training."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import start_from
from ._checks import (
    as_real_array,
    check_bool,
    check_float,
    check_int,
    check_targets,
)
from .embedding import GPTStyleEmbedding

IGNORE = -1
"""Target id of a position that has no target (the first ``offset`` positions); no loss there."""


def cross_entropy(logits: ArrayLike, targets: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """Mean cross-entropy (nats) of ``(..., V)`` logits against ``(...)`` ids, and its gradient.

    Returns:
        ``(loss, dloss_dlogits)``, the gradient with the logits' shape.

    Raises:
        TypeError: the logits are not real numbers, or the targets not integers.
        ValueError: no class axis, the shapes do not match, no targets, or a target outside
            ``[0, V)``.
    """
    z = as_real_array("logits", logits)
    if z.ndim < 1 or z.shape[-1] == 0:
        raise ValueError(f"logits must have a last axis of V >= 1 classes, got shape {z.shape}")
    n_classes = z.shape[-1]
    like = "the logits' shape without the last axis,"
    y = check_targets(targets, z.shape[:-1], n_classes, like=like)
    if y.size == 0:
        raise ValueError(
            f"cross_entropy needs at least one target, got shape {y.shape}: a mean over no "
            "targets is undefined"
        )
    rows = z.reshape(-1, n_classes)  # (N, V)
    flat = y.reshape(-1)  # (N,)
    shifted = rows - rows.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    sums = probs.sum(axis=1, keepdims=True)  # (N, 1)
    picked = shifted[np.arange(flat.size), flat] - np.log(sums[:, 0])  # (N,) log-probabilities
    probs /= sums
    probs[np.arange(flat.size), flat] -= 1.0
    n = flat.size
    probs /= n
    return float(-picked.sum() / n), probs.reshape(z.shape)


def losses_of_logits(
    logits: ArrayLike, targets: ArrayLike, *, ignore: int | None = None
) -> NDArray[np.float64]:
    """Cross-entropy (nats) of each row of ``(..., V)`` logits against ``(...)`` target ids: one
    loss per prediction, where :func:`cross_entropy` gives their mean. A target equal to
    ``ignore`` is not scored: its loss is ``nan``.

    Raises:
        TypeError: logits that are not real numbers (complex, bool, strings), or targets that
            are not integers.
        ValueError: logits with no class axis, targets of another shape than the logits
            without their last axis, or a target outside ``[0, V)`` that is not ``ignore``.
    """
    z = as_real_array("logits", logits)
    if z.ndim < 1 or z.shape[-1] == 0:
        raise ValueError(f"logits must have a last axis of V >= 1 classes, got shape {z.shape}")
    y = check_targets(targets, z.shape[:-1], z.shape[-1], like="the inputs' shape", ignore=ignore)
    picked = y if ignore is None else np.where(y == ignore, 0, y)
    top = z.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(z - top).sum(axis=-1)) + top[..., 0]  # (...)
    losses = log_norm - np.take_along_axis(z, picked[..., None], axis=-1)[..., 0]
    return losses if ignore is None else np.where(y == ignore, np.nan, losses)


class Evaluation(NamedTuple):
    """What a toy model's ``evaluate`` returns: how it does on held-out ids, with no update.

    Attributes:
        loss: mean cross-entropy (nats) over the scored positions.
        accuracy: the fraction of scored positions whose largest logit is the target's.
    """

    loss: float
    accuracy: float

    @classmethod
    def of(cls, logits: ArrayLike, targets: ArrayLike) -> Evaluation:
        """The evaluation of ``(..., V)`` logits against ``(...)`` target ids.

        Raises:
            TypeError, ValueError: as :func:`cross_entropy`.
        """
        loss, _ = cross_entropy(logits, targets)  # checks both
        right = np.asarray(logits).argmax(axis=-1) == np.asarray(targets)
        return cls(loss, float(right.mean()))


@dataclass
class Adam:
    """Adam (Kingma & Ba) with bias correction; :meth:`step` updates arrays in place.

    Attributes:
        learning_rate: step size, > 0.
        beta1, beta2: decay rates of the moment estimates, in ``[0, 1)``.
        eps: added to the root of the second moment, > 0.
        t: steps taken so far.

    Parameters must be float32 or float64. A float16 parameter is refused rather than given
    float32 moments: in float16 ``eps`` and the square of a gradient of 1e-4 round to 0, so the
    step divides by 0; float32 moments would avoid that, but the update of a float16 weight would
    still round away whenever it is below 2**-11 of the weight (float16 keeps 11 bits), so the
    run would stall without a word. Train in float32 and cast the result.

    Raises:
        TypeError, ValueError: a constant outside its range, NaN or infinite, or ``t`` that is
            not an integer >= 0.
    """

    learning_rate: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict[str, NDArray[np.floating]] = field(default_factory=dict)
    v: dict[str, NDArray[np.floating]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.learning_rate = check_float("learning_rate", self.learning_rate, above=0)
        self.beta1 = check_float("beta1", self.beta1, minimum=0, below=1)
        self.beta2 = check_float("beta2", self.beta2, minimum=0, below=1)
        self.eps = check_float("eps", self.eps, above=0)
        self.t = check_int("t", self.t, minimum=0)

    def step(self, params: dict[str, NDArray[np.floating]], grads: Mapping[str, ArrayLike]) -> None:
        """One update of every array in ``grads`` (arrays absent from ``grads`` stay frozen).

        Every gradient is checked before anything changes, so a refused step leaves the
        parameters and the optimizer's state as they were.

        Raises:
            TypeError: a gradient that is not real numbers, or a parameter that is not a
                float32 or float64 numpy array (it is updated in place).
            ValueError: a gradient whose name is not a parameter's, or whose shape is not its
                parameter's (or its moment estimates').
        """
        if not isinstance(grads, Mapping):
            raise TypeError(
                f"grads must be a mapping of parameter names to gradients, got "
                f"{type(grads).__name__}"
            )
        checked = {}
        for name, grad in grads.items():
            if name not in params:
                raise ValueError(
                    f"gradient {name!r} has no parameter: the parameters are {list(params)}"
                )
            param = params[name]
            if not isinstance(param, np.ndarray) or param.dtype.kind != "f":
                raise TypeError(
                    f"parameter {name!r} must be a floating numpy array (it is updated in "
                    f"place), got {type(param).__name__} of dtype {np.asarray(param).dtype}"
                )
            if param.dtype.itemsize < 4:
                raise TypeError(
                    f"parameter {name!r} is {param.dtype}: Adam needs float32 or float64 (in "
                    f"{param.dtype} eps = 1e-8 and the square of a gradient of 1e-4 round to 0, "
                    "and the step divides by them)"
                )
            g = as_real_array(f"gradient {name!r}", grad, dtype=None)
            shape = self.m[name].shape if name in self.m else param.shape
            if g.shape != param.shape or shape != param.shape:
                raise ValueError(
                    f"gradient {name!r} has shape {g.shape}, its parameter {param.shape}"
                    + (f" and its moment estimates {shape}" if shape != param.shape else "")
                )
            checked[name] = g
        self.t += 1
        for name, g in checked.items():
            m = self.m.setdefault(name, np.zeros_like(g))
            v = self.v.setdefault(name, np.zeros_like(g))
            m += (1 - self.beta1) * (g - m)
            v += (1 - self.beta2) * (g * g - v)
            m_hat = m / (1 - self.beta1**self.t)
            v_hat = v / (1 - self.beta2**self.t)
            params[name] -= self.learning_rate * m_hat / (np.sqrt(v_hat) + self.eps)


_WEIGHTS, _BATCHES = 1, 2
"""The two random streams a run's seed starts: its initial weights and its batches, apart, so that
a change to one (a bigger batch) leaves the other as it was."""


def weights_rng(*, seed: int) -> np.random.Generator:
    """The generator that draws the initial weights of the run seeded ``seed``."""
    return np.random.default_rng([seed, _WEIGHTS])


def batches_rng(*, seed: int) -> np.random.Generator:
    """The generator that draws the batches of the run seeded ``seed``."""
    return np.random.default_rng([seed, _BATCHES])


@dataclass(frozen=True, kw_only=True)
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
        self._check(check_int, "batch_size")
        self._check(check_int, "steps", "seed", minimum=0)
        self._check(check_float, "learning_rate", above=0)
        self._check(check_bool, "use_positions")

    def _check(self, check: Callable[..., object], *names: str, **limits: float) -> None:
        """Check each named field with ``check(name, value, **limits)`` (``check_int`` and its
        kin) and keep what it returns."""
        for name in names:
            self._keep(name, check(name, getattr(self, name), **limits))

    def _keep(self, name: str, value: object) -> None:
        """Store a checked field as the Python number it was checked as (the config is frozen):
        a numpy scalar would otherwise be kept, and overflow or upcast later."""
        object.__setattr__(self, name, value)


class ArrayModel:
    """The toy models' base: a dataclass whose ``embedding`` field is a :class:`GPTStyleEmbedding`
    and whose other fields that are arrays are its weights (a size such as a head count is not)."""

    def parameters(self) -> dict[str, NDArray[np.floating]]:
        """Every array by name, not copies: the embedding's two tables first, then the model's own
        in field order. An optimizer given this dict updates the model in place."""
        model: Any = self  # a dataclass, as every subclass is
        arrays = dict(model.embedding.parameters())
        for f in fields(model):
            value = getattr(model, f.name)
            if f.name != "embedding" and isinstance(value, np.ndarray):
                arrays[f.name] = value
        return arrays


class _ToyModel(Protocol):
    """What the training loop needs of a model: its embedding layer and its arrays by name."""

    @property
    def embedding(self) -> GPTStyleEmbedding: ...

    def parameters(self) -> dict[str, NDArray[np.floating]]: ...


Model = TypeVar("Model", bound=_ToyModel)
Config = TypeVar("Config", bound=RunConfig)


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


Batch = tuple[NDArray[np.intp], ...]
"""``(inputs, targets)``, two ``(B, T)`` arrays of ids; a model that moves its windows' rows in
training adds their ``(B, T)`` position ids (:func:`gptembed.gpt.train`)."""


def _fit(
    params: dict[str, NDArray[np.floating]],
    loss_and_grads: Callable[..., tuple[float, dict]],
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
        loss_and_grads: ``(*batch) -> (loss, grads)``, ``grads`` keyed like ``params``.
        next_batch: draws the next :data:`Batch`, ``(inputs, targets)`` or more.
        steps: optimizer steps, an integer >= 0.
        learning_rate: Adam's step size, > 0.
        frozen: names of arrays that are never updated: a collection of names, not one string.
        schedule: ``step -> learning rate`` (0-based steps), replacing ``learning_rate`` at
            every step; by default the rate stays ``learning_rate``.
        after_step: called with the number of steps done after each update (to log progress).

    Returns:
        ``(steps,)`` losses (nats), each of its step's batch before the update.

    Raises:
        TypeError, ValueError: ``steps`` is not an integer >= 0, ``learning_rate`` is not a
            finite number > 0, ``frozen`` is a string or names an array that is not in
            ``params``; and as :meth:`Adam.step`.
    """
    steps = check_int("steps", steps, minimum=0)
    optimizer = Adam(learning_rate)
    if isinstance(frozen, (str, bytes)):
        example = (next(iter(params), "name"),)
        raise TypeError(
            f"frozen must be a collection of parameter names such as {example}, "
            f"got the string {frozen!r}"
        )
    frozen = tuple(frozen)
    for name in frozen:
        if name not in params:
            raise ValueError(
                f"frozen name {name!r} is not a parameter: the parameters are {list(params)}"
            )
    losses = np.empty(steps)
    for step in range(steps):
        if schedule is not None:
            optimizer.learning_rate = check_float(f"schedule({step})", schedule(step), above=0)
        losses[step], grads = loss_and_grads(*next_batch())
        optimizer.step(params, {name: g for name, g in grads.items() if name not in frozen})
        if after_step is not None:
            after_step(step + 1)
    return losses


def run_training(
    config: Config,
    model: Model | None,
    init_model: Callable[[Config], Model],
    loss_and_grads: Callable[..., tuple[float, dict]],
    draw_batch: Callable[..., Batch],
    *,
    schedule: Callable[[int], float] | None = None,
    after_step: Callable[[int, Model], None] | None = None,
    frozen: Collection[str] = (),
) -> TrainResult[Model, Config]:
    """Train a toy model as ``config`` says: what every toy model's ``train`` does.

    Args:
        config: the run: ``steps`` steps of :func:`_fit` at ``learning_rate``; with
            ``use_positions=False`` the position table is not updated (all zeros for a fresh
            model).
        model: where training starts; None for ``init_model(config)``. A given model is copied
            first (into a fresh model of the config), so it is left as it was and so are tables
            it shares with other layers; training continues from its values with a fresh Adam.
            Starting from ``init_model(config)`` gives the same run as None, bit for bit.
        init_model: makes the fresh model of a config.
        loss_and_grads: ``(model, *batch) -> (loss, grads)``: ``(model, inputs, targets)``, and
            the batch's position ids if ``draw_batch`` gives them.
        draw_batch: ``draw_batch(seed=rng)`` draws a batch; ``rng`` is seeded by
            ``config.seed``, a stream of its own, apart from the weights'.
        schedule: ``step -> learning rate``, as in :func:`_fit`; by default ``learning_rate``.
        after_step: called as ``after_step(steps_done, model)`` after every update.
        frozen: names of more arrays never updated, beside the position table of a config
            with ``use_positions=False``.

    Deterministic: the same config and start give the same losses and weights on the same
    machine.

    Raises:
        TypeError: ``model`` is not of the type ``init_model`` makes.
        ValueError: an array of ``model`` does not have the shape the config gives.
    """
    model = start_from(init_model(config), model)
    initial = model.embedding.position_embeddings.copy()
    batches = batches_rng(seed=config.seed)
    losses = _fit(
        model.parameters(),
        lambda *batch: loss_and_grads(model, *batch),
        lambda: draw_batch(seed=batches),
        config.steps,
        config.learning_rate,
        frozen=(*frozen, *(() if config.use_positions else ("position_embeddings",))),
        schedule=schedule,
        after_step=None if after_step is None else (lambda done: after_step(done, model)),
    )
    return TrainResult(model, losses, initial, config)
