"""The embedding layer's array kernels: drawing its tables, and a cache-blocked gather-add.

What :class:`~gptembed.embedding.GPTStyleEmbedding` runs underneath. The layer's arithmetic is
``wte[ids] + wpe[positions]``; this is how it is done fast and in little memory at GPT-2's sizes
(``benchmarks/bench_embedding.py`` measures it against the one-line version).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# Bytes gathered and added per step of ``forward``: a block small enough to still be in cache
# when the add reads it back, large enough that the Python steps cost little (benchmarks/README.md
# says how 768 KiB was chosen).
BLOCK_BYTES = 768 * 1024


# Draws per step when a table's dtype is not one numpy draws in (float16): float32 draws of this
# many bytes are cast into the table, so the extra memory is this, not a float32 copy of it all.
DRAW_BLOCK_BYTES = 1 << 20


def draw_table(
    rng: np.random.Generator, shape: tuple[int, int], *, std: float, dtype: np.dtype
) -> NDArray[np.floating]:
    """Draws of N(0, std**2) in ``dtype``: ``shape`` is ``(rows, D)``.

    numpy draws normals in float32 or float64 only. Those dtypes are drawn and scaled in place,
    in one array; any other (float16) is drawn in float32 a block of rows at a time and cast into
    the table. The generator hands out the same stream whether asked for all rows at once or a
    block at a time, so a seed gives the same values either way.
    """
    if dtype in (np.float32, np.float64):
        table = rng.standard_normal(shape, dtype=dtype)
        table *= std
        return table
    rows, dim = shape
    table = np.empty(shape, dtype=dtype)
    step = max(1, DRAW_BLOCK_BYTES // (4 * max(1, dim)))  # rows per block of float32 draws
    buffer = np.empty((min(step, rows), dim), dtype=np.float32)  # the one block of draws
    for start in range(0, rows, step):
        block = buffer[: min(step, rows - start)]
        rng.standard_normal(dtype=np.float32, out=block)
        block *= std
        table[start : start + step] = block
    return table


def consecutive_run(positions: NDArray[np.intp]) -> slice | None:
    """``slice(p, p + T)`` when position ids ``(T,)`` shared by every sequence (or a batch of
    one's ``(1, T)``) are ``p, p+1, ..., p+T-1``, as ``start_pos`` makes them; else None.

    Those rows of a table are a slice of it, read and written without a gather or a scatter-add.
    """
    if positions.ndim == 2 and len(positions) > 1:  # a (B, T) batch's own ids: not checked
        return None
    row = positions.reshape(-1)  # (T,)
    first = int(row[0])
    if (row == np.arange(first, first + len(row))).all():
        return slice(first, first + len(row))
    return None


def gather_add(
    wte: NDArray[np.floating],
    ids: NDArray[np.intp],
    wpe: NDArray[np.floating],
    positions: NDArray[np.intp],
) -> NDArray[np.floating]:
    """``wte[ids] + wpe[positions]``, one cache-sized block at a time, into a new array.

    Args:
        wte, wpe: the ``(V, D)`` token and ``(L, D)`` position tables.
        ids: checked ids, ``(T,)`` or ``(B, T)``.
        positions: checked position ids: the ids' shape, or ``(T,)`` shared by every sequence.

    A block is whole sequences when they fit (many short sequences: ``(8192, 1)`` takes 32
    steps, not 8192), else part of one. The token rows are gathered straight into the output
    (``mode="clip"`` lets ``np.take`` write into ``out`` unbuffered; the ids are checked, so
    nothing clips) and the position rows added while the block is still in cache, so nothing
    full-size is allocated but the output. Position rows are gathered into one block of scratch,
    except where every sequence reads the same consecutive rows (:func:`consecutive_run`): those
    are a slice of ``wpe``, added as they are.
    """
    dim = wte.shape[1]
    out = np.empty((*ids.shape, dim), dtype=wte.dtype)  # (..., T, D)
    if out.size == 0:
        return out
    seq_len = ids.shape[-1]
    ids = ids.reshape(-1, seq_len)  # (B, T)
    rows = out.reshape(-1, seq_len, dim)  # (B, T, D) view of `out`
    block = max(1, BLOCK_BYTES // (dim * out.itemsize))  # rows per block
    n_seqs = max(1, block // seq_len)  # whole sequences per block when they fit ...
    width = min(seq_len, block)  # ... else part of one
    run = consecutive_run(positions)  # the rows every sequence reads, if they are one slice of wpe
    if run is None:
        positions = np.broadcast_to(positions, out.shape[:-1]).reshape(-1, seq_len)  # (B, T)
        scratch = np.empty(n_seqs * width * dim, dtype=out.dtype)  # one block's position rows
    for b in range(0, len(rows), n_seqs):
        for t in range(0, seq_len, width):
            dst = rows[b : b + n_seqs, t : t + width]  # (n, w, D), contiguous
            np.take(wte, ids[b : b + n_seqs, t : t + width], axis=0, out=dst, mode="clip")
            if run is None:
                pos_rows = scratch[: dst.size].reshape(dst.shape)
                pos_idx = positions[b : b + n_seqs, t : t + width]
                np.take(wpe, pos_idx, axis=0, out=pos_rows, mode="clip")
                dst += pos_rows
            else:  # the same rows for every sequence: a view of wpe, broadcast
                dst += wpe[run][t : t + width]
    return out
