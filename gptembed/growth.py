"""Growing the small GPT's position table past its trained length, then training it there.

Chapter 9 grows the stored model of :mod:`gptembed.gpt` from 128 to 256 rows with each of
:meth:`~gptembed.embedding.GPTStyleEmbedding.extended`'s methods and fine-tunes every array at the
new length, as position interpolation does for rotary models before it uses a longer context (Chen
et al. 2023, "Extending Context Window of Large Language Models via Positional Interpolation",
arXiv:2306.15595, section 3). ``tools/fine_tune_lm.py`` runs it for each stored seed and stores the
held-out curves (:func:`save_growth`); :func:`stored_growth` reads them back.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import as_real_array, check_int, check_integer_array, check_type
from ._npz import open_stored, read_stored, save_npz
from .embedding import EXTENSIONS, Extension
from .gpt import GPT, at_length, token_losses
from .gpt_config import GPTConfig

GROWN_LEN = 256
"""Rows of the grown table: twice the stored model's 128."""


def fine_tune_config(config: GPTConfig) -> GPTConfig:
    """The stored run's config made a fine-tuning run at :data:`GROWN_LEN`.

    Batches of 16 passages of 256 characters (the 4,096 characters a step of the original run's
    32 x 128), 400 steps of Adam at a peak rate of 3e-4, a tenth of the original's, after 20 steps
    of warmup (Chen et al. 2023 warm up for 20 steps too), then the half-cosine decay of
    :meth:`GPTConfig.learning_rate_at`.
    """
    return replace(
        config, seq_len=GROWN_LEN, batch_size=16, steps=400, learning_rate=3e-4, warmup=20
    )


def grown(model: GPT, method: Extension, seq_len: int = GROWN_LEN) -> GPT:
    """``model`` with its position table grown to ``seq_len`` rows by ``method`` (fresh rows are
    drawn with seed 1): :func:`~gptembed.gpt.at_length`; every other array is shared with
    ``model``, not copied."""
    return at_length(model, seq_len, method, seed=1)


def old_and_new(
    model: GPT, inputs: ArrayLike, targets: ArrayLike, trained_len: int
) -> tuple[float, float]:
    """Mean held-out loss (nats) at the trained positions ``[0, trained_len)`` and at the new
    ones ``[trained_len, T)`` of ``(B, T)`` passages."""
    trained_len = check_int("trained_len", trained_len)
    losses = token_losses(model, inputs, targets)  # (B, T)
    if not trained_len < losses.shape[1]:
        raise ValueError(
            f"trained_len must be below the passages' length {losses.shape[1]}, got {trained_len}"
        )
    return float(losses[:, :trained_len].mean()), float(losses[:, trained_len:].mean())


@dataclass
class GrowthCurves:
    """Fine-tuning curves of one stored model grown three ways, as :func:`save_growth` stores them.

    Attributes:
        config: the fine-tuning run's :class:`GPTConfig` (:func:`fine_tune_config` of the model's).
        trained_len: the rows the model was trained with, before growing.
        steps: ``(E,)`` the step counts at which the held-out loss was measured, 0 first.
        old, new: per method, ``(E,)`` held-out loss at the trained and at the new positions.
        losses: per method, ``(steps,)`` training loss of each step's batch, before its update.
        info: how the curves were made (command, windows, wall time, machine), as stored.
    """

    config: GPTConfig
    trained_len: int
    steps: NDArray[np.intp]
    old: dict[str, NDArray[np.float64]]
    new: dict[str, NDArray[np.float64]]
    losses: dict[str, NDArray[np.float64]]
    info: dict[str, Any]


def save_growth(path: str | os.PathLike[str], curves: GrowthCurves) -> None:
    """Write ``curves`` to one ``.npz`` file: a JSON header and one array per curve.

    As :func:`~gptembed.gpt.save`, the file is :func:`~gptembed._npz.npz_path` of ``path``,
    written whole or not at all, and only curves that :func:`load_growth` reads back as they are
    are written: a curve of each method of :data:`~gptembed.embedding.EXTENSIONS` in each of
    ``old``, ``new`` and ``losses``, and ``info`` that JSON keeps as it is. The curves may be
    empty (``E = 0``) and of any real dtype; they are read back as float64.

    Raises:
        ValueError: as :func:`~gptembed._npz.npz_path`; a method missing or not one of
            :data:`~gptembed.embedding.EXTENSIONS`; ``steps`` not 1-D, or ``old`` or ``new``
            curves not of its shape; ``info`` that JSON does not keep as it is (a tuple becomes a
            list, a number key a string).
        TypeError: ``config`` is not a :class:`GPTConfig`, ``trained_len`` not an integer,
            ``steps`` not integers, a curve not real numbers, or ``info`` not JSON data.
    """
    config = check_type("config", curves.config, GPTConfig)
    header = {
        "config": asdict(config),
        "trained_len": check_int("trained_len", curves.trained_len),
        "info": curves.info,
    }
    try:
        text = json.dumps(header, sort_keys=True)
    except TypeError as err:
        raise TypeError(
            f"info must hold JSON data (dicts with str keys, lists, str, int, float, bool, None): "
            f"{err}"
        ) from None
    if json.loads(text)["info"] != curves.info:
        raise ValueError(
            f"info must read back from JSON as it is (lists, not tuples; str keys), got "
            f"{curves.info!r}"
        )
    steps = check_integer_array("steps", curves.steps, None)
    if steps.ndim != 1:
        raise ValueError(f"steps must be a 1-D array (E,), got shape {steps.shape}")
    arrays: dict[str, Any] = {"header": np.array(text), "steps": steps}
    for name, shape in (("old", steps.shape), ("new", steps.shape), ("losses", None)):
        by_method = getattr(curves, name)
        if set(by_method) != set(EXTENSIONS):
            raise ValueError(
                f"{name} must hold a curve for each of {', '.join(EXTENSIONS)}, "
                f"got {', '.join(map(repr, by_method)) or 'none'}"
            )
        for method in EXTENSIONS:
            curve = as_real_array(f"{name}[{method!r}]", by_method[method], dtype=None)
            if curve.ndim != 1 or (shape is not None and curve.shape != shape):
                wanted = "a 1-D array" if shape is None else f"of the steps' shape {shape}"
                raise ValueError(f"{name}[{method!r}] must be {wanted}, got shape {curve.shape}")
            arrays[f"{name}_{method}"] = curve
    save_npz(path, arrays)


def load_growth(file: str | os.PathLike[str] | IO[bytes]) -> GrowthCurves:
    """Read curves that :func:`save_growth` wrote, from ``file`` or, if it is a path, from where
    :func:`save_growth` of that path wrote them (``.npz`` added if it does not end so).

    Raises:
        ValueError: the file is not stored curves (not a ``.npz``, no header or steps), or lacks
            a method's curves.
    """
    with open_stored(file, ("header", "steps"), "stored curves") as (data, _):
        header = json.loads(str(data["header"]))
        missing = [m for m in EXTENSIONS if f"new_{m}" not in data]
        if missing:
            raise ValueError(f"stored curves: no curves for {missing}")
        return GrowthCurves(
            GPTConfig.from_stored(header["config"]),
            header["trained_len"],
            data["steps"].astype(np.intp),
            {m: data[f"old_{m}"].astype(np.float64) for m in EXTENSIONS},
            {m: data[f"new_{m}"].astype(np.float64) for m in EXTENSIONS},
            {m: data[f"losses_{m}"].astype(np.float64) for m in EXTENSIONS},
            header["info"],
        )


def stored_growth(*, seed: int = 0) -> GrowthCurves:
    """The curves ``tools/fine_tune_lm.py --seed SEED`` stored for the stored model of that seed
    (``gptembed/data/grown_seedSEED.npz``; seeds 0, 1 and 2).

    Raises:
        ValueError: no curves are stored for ``seed``.
    """
    return read_stored("grown_seed", seed, "stored curves", load_growth)
