"""The small GPT's trained runs: saved, loaded, and the runs the package ships.

:func:`save` writes a :class:`StoredRun` (the model, its config, its loss curves and how it was
made) whole or not at all; :func:`load` reads it back exactly. :func:`stored_run` is chapter 9's
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
from ._npz import check_stored, read_stored, save_npz
from .gpt import GPT, GPTConfig, init_model
from .optim import start_from
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
        ValueError: as :func:`~gptembed._npz.npz_path`; or a model that does not match
            ``run.config`` (arrays of other shapes, such as a grown position table, or another
            head count or scheme), which :func:`load` could not rebuild.
        TypeError: ``run.model`` is not a :class:`GPT`, or ``weights_dtype`` is not floating.
    """
    start_from(init_model(run.config), run.model)  # refuses arrays of other shapes
    model, config = run.model, run.config
    for name in ("n_heads", "scheme", "rotary_base"):
        if getattr(model, name) != getattr(config, name):
            raise ValueError(
                f"the model has {name} {getattr(model, name)!r}, its config "
                f"{getattr(config, name)!r}: load would build the config's"
            )
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


def load(file: str | os.PathLike[str] | IO[bytes], *, dtype: DTypeLike | None = None) -> StoredRun:
    """Read a run that :func:`save` wrote.

    Args:
        file: the ``.npz`` file.
        dtype: the model's dtype; by default the run's own (``config.dtype``). The stored values
            are kept exactly either way (float16 or float32 to float64 is exact); ``config``
            stays the run's.

    Raises:
        ValueError: the file is not a stored run (it lacks the header or a curve), lacks an
            array the model needs, or one has the wrong shape.
        TypeError: ``dtype`` is not float32 or float64.
    """
    with np.load(file) as data:
        check_stored(
            data, ("header", "losses", "held_out_steps", "held_out_losses"), "a stored run"
        )
        header = json.loads(str(data["header"]))
        config = GPTConfig.from_stored(header["config"])
        as_dtype = config.dtype if dtype is None else check_float_dtype(dtype).name
        model = init_model(replace(config, dtype=as_dtype))
        for name, array in model.parameters().items():
            if name not in data or data[name].shape != array.shape:
                got = data[name].shape if name in data else "nothing"
                raise ValueError(f"stored run: {name} must have shape {array.shape}, got {got}")
            array[...] = data[name]
        return StoredRun(
            model,
            config,
            data["losses"].astype(np.float64),
            data["held_out_steps"].astype(np.intp),
            data["held_out_losses"].astype(np.float64),
            header["info"],
        )


def stored_run(*, seed: int = 0, dtype: DTypeLike | None = None) -> StoredRun:
    """The model trained on :mod:`gptembed.corpus` by ``tools/train_lm.py --seed SEED``, as
    stored in the package (``gptembed/data/gpt_seedSEED.npz``; seeds 0, 1 and 2).

    ``dtype`` as in :func:`load`: the chapters read the float32 weights into a float64 model, so
    that what they print does not depend on how a CPU rounds float32 sums.

    Raises:
        ValueError: no run is stored for ``seed``.
    """
    return read_stored("gpt_seed", seed, "stored run", lambda file: load(file, dtype=dtype))


def stored_scheme_run(
    scheme: Scheme, *, seed: int = 0, dtype: DTypeLike | None = None
) -> StoredRun:
    """The model with position scheme ``scheme`` trained on :mod:`gptembed.corpus` at 64
    characters by ``tools/train_lm.py --scheme SCHEME --seed SEED``, as stored in the package
    (``gptembed/data/scheme_SCHEME_seedSEED.npz``; the five schemes of
    :data:`~gptembed.positions.SCHEMES`, seeds 0, 1 and 2; weights stored in float16).

    ``dtype`` as in :func:`load`.

    Raises:
        ValueError: ``scheme`` is not one of the five, or no run is stored for ``seed``.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    return read_stored(
        f"scheme_{scheme}_seed", seed, f"stored {scheme} run", lambda file: load(file, dtype=dtype)
    )
