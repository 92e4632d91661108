"""The small GPT's trained runs: saved, loaded, and the runs the package ships.

:func:`save` writes a :class:`StoredRun` (the model, its config, its loss curves and how it was
made) whole or not at all; :func:`load` reads it back exactly. :func:`stored_run` is chapter 7's
model (``tools/train_lm.py --seed SEED``), :func:`stored_scheme_run` chapter 10's runs of the five
position schemes. The model itself is :mod:`gptembed.gpt`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from typing import IO, Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from ._checks import check_float_dtype
from ._npz import READ_ERRORS, array_header, open_stored, read_stored, save_npz
from .embedding import INIT_STD
from .gpt import GPT, check_model, init_model
from .gpt_config import GPTConfig
from .positions import SCHEMES, Scheme


@dataclass
class StoredRun:
    """A trained model as :func:`save` stores it and :func:`load` reads it back.

    Attributes:
        model: the trained :class:`GPT`.
        config: the :class:`GPTConfig` it was trained with.
        losses: ``(steps,)`` training loss of each step's batch, before its update.
        held_out_steps, held_out_losses: held-out loss after those numbers of steps.
        info: how the run was made (command, wall time, machine, versions), as stored.
    """

    model: GPT
    config: GPTConfig
    losses: NDArray[np.float64]
    held_out_steps: NDArray[np.intp]
    held_out_losses: NDArray[np.float64]
    info: dict[str, Any]


def save(
    path: str | os.PathLike[str], run: StoredRun, *, weights_dtype: DTypeLike | None = None
) -> None:
    """Write ``run`` to one ``.npz`` file: every array by name, the curves, and a JSON header.

    The file is :func:`~gptembed._npz.npz_path` of ``path``, written whole or not at all (a
    failed save leaves the file stored before as it was). Only a run that :func:`load` reads
    back is written.

    Args:
        path: where to write.
        run: the run.
        weights_dtype: the floating dtype the weights are stored in; by default the model's.
            float16 halves the file, rounding each weight to 11 significant bits (the schemes'
            runs are stored so, to keep the package small).

    Raises:
        ValueError: as :func:`~gptembed._npz.npz_path`; or a model that ``run.config`` did
            not make (:func:`~gptembed.gpt.check_model`: a grown position table,
            another head count, scheme or dtype...), which :func:`load` could not rebuild.
        TypeError: ``run.model`` is not a :class:`GPT`, or ``weights_dtype`` is not floating.
    """
    model = check_model(run.model, run.config)
    stored = model.embedding.dtype if weights_dtype is None else check_float_dtype(weights_dtype)
    header = {"config": asdict(run.config), "info": run.info}
    arrays: dict[str, Any] = {
        "header": np.array(json.dumps(header, sort_keys=True)),
        "losses": run.losses.astype(np.float32),
        "held_out_steps": run.held_out_steps,
        "held_out_losses": run.held_out_losses,
        **{name: array.astype(stored) for name, array in model.parameters().items()},
    }
    save_npz(path, arrays)


_CURVES = ("losses", "held_out_steps", "held_out_losses")
"""The curves a stored run holds beside its header and weights."""


def load(file: str | os.PathLike[str] | IO[bytes], *, dtype: DTypeLike | None = None) -> StoredRun:
    """Read a run that :func:`save` wrote.

    Every array's name, shape and dtype is checked against the header's config, from the file's
    own ``.npy`` headers, before the model is made: a small file whose header claims a large
    model is refused without allocating it.

    Args:
        file: the ``.npz`` file (a path without ``.npz`` gets it, as :func:`save` adds it), or
            an open binary file.
        dtype: the model's dtype; by default the run's own (``config.dtype``). The stored values
            are kept exactly either way (float16 or float32 to float64 is exact); ``config``
            stays the run's.

    Raises:
        FileNotFoundError: no such file.
        ValueError: naming the file: it is not a stored run (empty, cut short, damaged, a
            ``.npy``, no header or curve), its header is not a run's (not JSON, no config, a
            config that is not a :class:`GPTConfig`'s), or an array the model needs is missing,
            of another shape, or not floating point.
        TypeError: ``dtype`` is not float32 or float64.
    """
    as_dtype = None if dtype is None else check_float_dtype(dtype).name
    with open_stored(file, ("header", *_CURVES), "a stored run") as (data, label):
        try:
            header = json.loads(str(data["header"]))
        except (*READ_ERRORS, json.JSONDecodeError) as error:
            raise ValueError(f"{label}: its header is not JSON: {error}") from error
        config = _header_config(header, label)
        for name, shape in config.parameter_shapes().items():  # before the model is made
            got, kind = array_header(data, name, label) if name in data else ("nothing", None)
            if got != shape:
                raise ValueError(f"{label}: {name} must have shape {shape}, got {got}")
            if kind is None or kind.kind != "f":
                raise ValueError(f"{label}: {name} must be floating point, got {kind}")
        model = init_model(replace(config, dtype=as_dtype or config.dtype))
        try:
            for name, array in model.parameters().items():
                array[...] = data[name]
            curves = [data[name] for name in _CURVES]
        except READ_ERRORS as error:
            raise ValueError(f"{label}: not a stored run, damaged: {error}") from error
        return StoredRun(
            model,
            config,
            curves[0].astype(np.float64),
            curves[1].astype(np.intp),
            curves[2].astype(np.float64),
            header["info"],
        )


def _header_config(header: object, label: str) -> GPTConfig:
    """The config of a stored run's ``header``, refused as a ValueError naming ``label``."""
    if not isinstance(header, dict) or not {"config", "info"} <= header.keys():
        held = sorted(header) if isinstance(header, dict) else type(header).__name__
        raise ValueError(f"{label}: its header lacks 'config' or 'info' (it holds {held})")
    try:
        return GPTConfig.from_stored(header["config"])
    except (TypeError, ValueError, AttributeError) as error:
        raise ValueError(f"{label}: its header's config is not a GPTConfig's: {error}") from error


def stored_run(*, seed: int = 0, dtype: DTypeLike | None = None) -> StoredRun:
    """The model trained on :mod:`gptembed.corpus` by ``tools/train_lm.py --seed SEED``, as
    stored in the package (``gptembed/data/gpt_seedSEED.npz``; seeds 0, 1 and 2).

    ``dtype`` as in :func:`load`: the chapters read the float32 weights into a float64 model, so
    that what they print does not depend on how a CPU rounds float32 sums.

    Raises:
        ValueError: no run is stored for ``seed``, or the file stored for it holds another run.
    """
    run = read_stored("gpt_seed", seed, "stored run", lambda file: load(file, dtype=dtype))
    return _checked(run, "learned", seed, "the stored run")


_CONTROLS = ("bos", "scaled", "interpolated", "shifted")
"""The runs chapter 10 reads beside its five: two controls, ``"bos"``, every window starting with
``<bos>`` (:attr:`GPTConfig.bos <gptembed.gpt_config.GPTConfig>`; stored for ``"none"``), and
``"scaled"``, the sinusoidal table added at 0.1 (``sinusoidal_scale``; stored for
``"sinusoidal"``); and two of the field's ways past the trained length, ``"interpolated"``, the
rotary run fine-tuned at four times its length with position interpolation
(``rotary_interpolation``; stored for ``"rotary"``), and ``"shifted"``, the learned table
trained with each window at a random start row (``max_start``; stored for ``"learned"``)."""


def stored_scheme_run(
    scheme: Scheme, *, seed: int = 0, dtype: DTypeLike | None = None, control: str | None = None
) -> StoredRun:
    """The model with position scheme ``scheme`` trained on :mod:`gptembed.corpus` at 64
    characters by ``tools/train_lm.py --scheme SCHEME --seed SEED``, as stored in the package
    (``gptembed/data/scheme_SCHEME_seedSEED.npz``; the five schemes of
    :data:`~gptembed.positions.SCHEMES`, seeds 0, 1 and 2; weights stored in float16). With
    ``control``, one of the four, that run (``--bos``, ``--scaled``, ``--interpolated`` or
    ``--shifted`` on the command line, ``gptembed/data/scheme_CONTROL_SCHEME_seedSEED.npz``):
    ``stored_scheme_run("rotary", control="interpolated")`` is the rotary run fine-tuned 200 steps
    at 256 characters with ``rotary_interpolation`` 4, ``stored_scheme_run("learned",
    control="shifted")`` the learned run whose 64-character windows start at rows 0 to 192 of a
    table of 256.

    ``dtype`` as in :func:`load`.

    Raises:
        ValueError: ``scheme`` is not one of the five, ``control`` not one of the four, no run is
            stored for them and ``seed``, or the file stored for them holds another run.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if control is not None and control not in _CONTROLS:
        raise ValueError(f"control must be None or one of {_CONTROLS}, got {control!r}")
    stem = "scheme" if control is None else f"scheme_{control}"
    what = f"stored {scheme} run" + ("" if control is None else f" with control {control!r}")
    run = read_stored(f"{stem}_{scheme}_seed", seed, what, lambda file: load(file, dtype=dtype))
    run = _checked(run, scheme, seed, f"the {what}")
    controlled = {
        "bos": run.config.bos,
        "scaled": run.config.sinusoidal_scale != INIT_STD,
        "interpolated": run.config.rotary_interpolation != 1,
        "shifted": run.config.max_start > 0,
    }
    if any(controlled[name] != (name == control) for name in _CONTROLS):
        raise ValueError(f"the {what} for seed {seed} holds another control's run")
    return run


def _checked(run: StoredRun, scheme: Scheme, seed: int, what: str) -> StoredRun:
    """``run``, if it is the ``scheme`` run of ``seed`` that its file name says it is."""
    if run.config.scheme != scheme:
        raise ValueError(f"{what} for seed {seed} holds a {run.config.scheme!r} run")
    if run.config.seed != seed:
        raise ValueError(f"{what} for seed {seed} holds seed {run.config.seed}'s")
    return run
