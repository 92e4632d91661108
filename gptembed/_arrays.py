"""Array helpers the models share: flattened rows, and a model's arrays copied into a fresh one."""

from __future__ import annotations

from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from ._checks import check_type

Float = TypeVar("Float", bound=np.floating)


def flat_rows(a: NDArray[Float]) -> NDArray[Float]:
    """``(B, T, N)`` as ``(B*T, N)``: a sum over batch and time becomes one matrix product."""
    return a.reshape(-1, a.shape[-1])


class HasParameters(Protocol):
    """A model whose ``parameters()`` are its arrays by name, not copies."""

    def parameters(self) -> dict[str, NDArray[np.floating]]: ...


Model = TypeVar("Model", bound=HasParameters)


def start_from(fresh: Model, model: Model | None) -> Model:
    """``fresh``, holding a copy of ``model``'s values if one is given.

    Raises:
        TypeError: ``model`` is not of ``fresh``'s type.
        ValueError: an array of ``model`` does not have the shape of ``fresh``'s.
    """
    if model is None:
        return fresh
    given = check_type("model", model, type(fresh)).parameters()
    arrays = fresh.parameters()
    wrong = [
        f"{name} {given[name].shape} (the config's: {array.shape})"
        for name, array in arrays.items()
        if given[name].shape != array.shape
    ]
    if wrong:
        raise ValueError(f"model's arrays do not have the config's sizes: {', '.join(wrong)}")
    for name, array in arrays.items():
        array[...] = given[name]
    return fresh
