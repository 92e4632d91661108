"""Array shapes the models' backward passes share."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

Float = TypeVar("Float", bound=np.floating)


def flat_rows(a: NDArray[Float]) -> NDArray[Float]:
    """``(B, T, N)`` as ``(B*T, N)``: a sum over batch and time becomes one matrix product."""
    return a.reshape(-1, a.shape[-1])
