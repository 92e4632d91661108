"""The embedding layer's lookup checked once, and the tables' gradients from it.

:class:`~gptembed.embedding.GPTStyleEmbedding`'s ``forward`` and ``backward`` check their ids and
positions here; :mod:`gptembed.gpt`, which embeds the same ids forward and back in one step,
checks them once here and passes the result on (the lookup itself is
:func:`~gptembed._kernels.gather_add`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_real_array,
    check_in_range,
    check_int_in_range,
    check_integer_array,
)
from ._kernels import consecutive_run


def checked_lookup(
    token_ids: ArrayLike,
    start_pos: int,
    position_ids: ArrayLike | None,
    *,
    vocab_size: int,
    max_seq_len: int,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The checked ids ``(T,)``/``(B, T)`` of a layer with ``vocab_size`` token rows and
    ``max_seq_len`` position rows, and their ``intp`` position ids: ``(T,)``, shared by every
    sequence (``start_pos .. start_pos + T - 1``, or ``position_ids`` of that shape), or the
    ids' shape.

    Raises:
        TypeError, ValueError: as :meth:`~gptembed.embedding.GPTStyleEmbedding.check_ids`.
    """
    ids = check_integer_array("token_ids", token_ids, vocab_size)
    if ids.ndim not in (1, 2):
        raise ValueError(
            f"token_ids must have shape (T,) or (B, T), got {ids.ndim} dimensions "
            f"with shape {ids.shape}"
        )
    seq_len = ids.shape[-1]
    length = max_seq_len
    # an int: a numpy scalar would overflow or upcast in the sums below
    start_pos = check_int_in_range("start_pos", start_pos, 0, length)
    check_in_range("token id", ids, vocab_size, "ids")
    if position_ids is None:
        if start_pos + seq_len > length:
            raise ValueError(
                f"sequence length {seq_len} at start_pos {start_pos} exceeds max_seq_len "
                f"{length}: positions must lie in [0, {length})"
            )
        positions = np.arange(start_pos, start_pos + seq_len, dtype=np.intp)  # (T,)
        return ids.astype(np.intp, copy=False), positions
    if start_pos != 0:
        raise ValueError(
            f"pass start_pos or position_ids, not both: got start_pos {start_pos} "
            "with position_ids (position_ids already say where every id sits)"
        )
    pos = check_integer_array("position_ids", position_ids, length)
    if pos.shape not in (ids.shape, (seq_len,)):
        raise ValueError(
            f"position_ids must have the ids' shape {ids.shape} or ({seq_len},), got {pos.shape}"
        )
    check_in_range("position id", pos, length, "positions")
    return ids.astype(np.intp, copy=False), pos.astype(np.intp, copy=False)


def table_grads(
    grad_output: ArrayLike,
    ids: NDArray[np.intp],
    positions: NDArray[np.intp],
    token_table: NDArray[np.floating],
    position_table: NDArray[np.floating],
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """Gradients ``(grad_token, grad_position)`` of the ``(V, D)`` and ``(L, D)`` tables given
    ``dLoss/d(output)`` of the ids and positions :func:`checked_lookup` returned: scatter-adds,
    a repeated id or position summing its gradients.

    Raises:
        TypeError: ``grad_output`` does not hold real numbers.
        ValueError: ``grad_output`` does not have the output's shape ``(..., T, D)``.
    """
    dtype, dim = token_table.dtype, token_table.shape[1]
    # Sums run in float32 at least: in float16, 2,048 + 1 rounds back to 2,048, so 4,096
    # gradients of 1 would sum to 2,048. The results are cast to the tables' dtype at the end.
    total = np.promote_types(dtype, np.float32)
    grad = as_real_array("grad_output", grad_output, dtype=total)
    if grad.shape != (*ids.shape, dim):
        raise ValueError(
            f"grad_output must have the output's shape {(*ids.shape, dim)}, got {grad.shape}"
        )
    # np.zeros (calloc) lets the OS zero a large table page by page as rows are written;
    # np.zeros_like would first write all V*D zeros itself.
    grad_token = np.zeros(token_table.shape, dtype=total)
    grad_position = np.zeros(position_table.shape, dtype=total)
    if ids.size:
        rows = grad.reshape(-1, dim)  # (B*T, D)
        # Scatter-add: a repeated index sums its rows (np.add.at, unlike +=, keeps repeats).
        np.add.at(grad_token, ids.reshape(-1), rows)
        run = consecutive_run(positions)
        if run is None:
            np.add.at(grad_position, np.broadcast_to(positions, ids.shape).reshape(-1), rows)
        else:  # every sequence at the rows `run`: sum the batch, then write them as a slice
            grad_position[run] = grad.reshape(-1, ids.shape[-1], dim).sum(0)
    return grad_token.astype(dtype, copy=False), grad_position.astype(dtype, copy=False)
