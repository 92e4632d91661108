"""The GPT-2/GPT-3 input layer: a learned token table plus a learned position table.

``x = wte[ids] + wpe[start_pos : start_pos + T]``, nothing else: no segment embeddings, no
boundary tokens. Both tables are plain numpy arrays a reader can inspect and overwrite.
"""

from __future__ import annotations

import numbers
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import check_int
from .models import ParameterCounts, embedding_parameter_counts

INIT_STD = 0.02
"""Standard deviation of both tables at initialisation, as in the section (and nanoGPT)."""

# Bytes gathered and added per step of ``forward``: 256 rows of 768 float32 are 768 KiB, so the
# block written by the gather is still in cache (L2 or L3) when the add reads it back. Measured
# with benchmarks/bench_embedding.py at GPT-2 small sizes: 128 KiB to 2 MiB are within a few
# percent of each other, 768 KiB was at or near the best for every batch and dtype, and smaller
# blocks cost more Python steps (a step per block, whatever the batch size).
_BLOCK_BYTES = 768 * 1024


def _draw_table(
    rng: np.random.Generator, shape: tuple[int, int], dtype: np.dtype
) -> NDArray[np.floating]:
    """Draws of N(0, INIT_STD**2) in ``dtype``, scaled in place (one full-size array)."""
    draw_dtype = np.float64 if dtype == np.float64 else np.float32
    table = rng.standard_normal(shape, dtype=draw_dtype)
    table *= INIT_STD
    return table.astype(dtype, copy=False)


def _check_float_dtype(dtype: DTypeLike) -> np.dtype:
    try:
        resolved = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(
            f"dtype must be a floating dtype such as np.float32, got {dtype!r}"
        ) from err
    if resolved.kind != "f":
        raise TypeError(f"dtype must be a floating dtype such as np.float32, got {resolved}")
    return resolved


class GPTStyleEmbedding:
    """Learned token embeddings plus learned absolute position embeddings (GPT-2, GPT-3).

    Args:
        vocab_size: rows ``V`` of the token table.
        max_seq_len: rows ``L`` of the position table: the longest sequence the layer accepts.
        embed_dim: width ``D`` of both tables.
        seed: seed of the layer's own ``np.random.default_rng``; numpy's global state is untouched.
        dtype: floating dtype of both tables and of the output.

    Attributes:
        token_embeddings: ``(V, D)`` array, drawn from N(0, 0.02**2).
        position_embeddings: ``(L, D)`` array, drawn from N(0, 0.02**2) after the token table.

    Raises:
        TypeError: a size is not an integer, or ``dtype`` is not floating.
        ValueError: a size is not positive.
    """

    def __init__(
        self,
        vocab_size: int,
        max_seq_len: int,
        embed_dim: int,
        seed: int | None = None,
        dtype: DTypeLike = np.float32,
    ) -> None:
        vocab_size = check_int("vocab_size", vocab_size)
        max_seq_len = check_int("max_seq_len", max_seq_len)
        embed_dim = check_int("embed_dim", embed_dim)
        resolved = _check_float_dtype(dtype)
        rng = np.random.default_rng(seed)
        self.token_embeddings: NDArray[np.floating] = _draw_table(
            rng, (vocab_size, embed_dim), resolved
        )
        self.position_embeddings: NDArray[np.floating] = _draw_table(
            rng, (max_seq_len, embed_dim), resolved
        )

    @classmethod
    def from_tables(
        cls, token_embeddings: ArrayLike, position_embeddings: ArrayLike
    ) -> GPTStyleEmbedding:
        """A layer that uses the given ``(V, D)`` and ``(L, D)`` tables as they are (no copy).

        Raises:
            ValueError: a table is not 2-D or empty, or the widths differ.
            TypeError: a table is not floating point, or the dtypes differ.
        """
        tok = np.asarray(token_embeddings)
        pos = np.asarray(position_embeddings)
        for name, table in (("token_embeddings", tok), ("position_embeddings", pos)):
            if table.ndim != 2 or 0 in table.shape:
                raise ValueError(f"{name} must be a non-empty 2-D array, got shape {table.shape}")
            _check_float_dtype(table.dtype)
        if tok.shape[1] != pos.shape[1]:
            raise ValueError(
                f"token and position tables must have the same width, got {tok.shape[1]} "
                f"and {pos.shape[1]}"
            )
        if tok.dtype != pos.dtype:
            raise TypeError(f"tables must share one dtype, got {tok.dtype} and {pos.dtype}")
        layer = cls.__new__(cls)
        layer.token_embeddings = tok
        layer.position_embeddings = pos
        return layer

    @property
    def vocab_size(self) -> int:
        """``V``, rows of the token table."""
        return self.token_embeddings.shape[0]

    @property
    def max_seq_len(self) -> int:
        """``L``, rows of the position table."""
        return self.position_embeddings.shape[0]

    @property
    def embed_dim(self) -> int:
        """``D``, the width of both tables."""
        return self.token_embeddings.shape[1]

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the tables and of ``forward``'s output."""
        return self.token_embeddings.dtype

    def parameter_counts(self) -> ParameterCounts:
        """Exact parameter counts: ``V*D`` token, ``L*D`` position, and their total."""
        return embedding_parameter_counts(self.vocab_size, self.max_seq_len, self.embed_dim)

    def check_ids(self, token_ids: ArrayLike, start_pos: int = 0) -> NDArray[np.intp]:
        """Validate a forward call's inputs; return the ids as ``intp``, ``(T,)`` or ``(B, T)``.

        Raises:
            TypeError: ids that are not integers (floats, bools, strings, objects), or a
                ``start_pos`` that is not an integer.
            ValueError: ids with 0 or more than 2 dimensions, an id outside ``[0, V)``, a negative
                ``start_pos``, or ``start_pos + T > L`` (the section's "Sequence length ... exceeds
                maximum ..." when ``start_pos`` is 0).
        """
        if isinstance(start_pos, bool) or not isinstance(start_pos, numbers.Integral):
            raise TypeError(
                f"start_pos must be an integer in [0, {self.max_seq_len}], got {start_pos!r} "
                f"of type {type(start_pos).__name__}"
            )
        if start_pos < 0:
            raise ValueError(f"start_pos must be in [0, {self.max_seq_len}], got {start_pos}")
        start_pos = int(start_pos)
        ids = np.asarray(token_ids)
        if ids.ndim not in (1, 2):
            raise ValueError(
                f"token_ids must have shape (T,) or (B, T), got {ids.ndim} dimensions "
                f"with shape {ids.shape}"
            )
        if ids.size == 0 and ids.dtype.kind == "f":
            ids = ids.astype(np.intp)  # an empty list arrives as float64: it holds no bad id
        if ids.dtype.kind not in "iu":
            raise TypeError(
                f"token_ids must be integers in [0, {self.vocab_size}), got dtype {ids.dtype}"
            )
        seq_len = ids.shape[-1]
        if start_pos == 0 and seq_len > self.max_seq_len:
            raise ValueError(f"Sequence length {seq_len} exceeds maximum {self.max_seq_len}")
        if start_pos + seq_len > self.max_seq_len:
            raise ValueError(
                f"start_pos {start_pos} + sequence length {seq_len} = {start_pos + seq_len} "
                f"exceeds maximum {self.max_seq_len}"
            )
        if ids.size:
            low, high = ids.min(), ids.max()
            if low < 0 or high >= self.vocab_size:
                bad = low if low < 0 else high
                where = tuple(int(i) for i in np.argwhere(ids == bad)[0])
                raise ValueError(
                    f"token id {bad} at index {where} is out of range: ids must be in "
                    f"[0, {self.vocab_size})"
                )
        return ids.astype(np.intp, copy=False)

    def forward(self, token_ids: ArrayLike, start_pos: int = 0) -> NDArray[np.floating]:
        """Embed ids: ``token_embeddings[ids] + position_embeddings[start_pos : start_pos + T]``.

        Args:
            token_ids: integer ids in ``[0, V)``, shape ``(T,)`` or ``(B, T)``.
            start_pos: position of the first id; a continuation (as with a KV cache) passes the
                number of tokens already seen.

        Returns:
            A new array of shape ``(T, D)`` or ``(B, T, D)`` in the tables' dtype.

        Raises:
            TypeError, ValueError: as :meth:`check_ids`.
        """
        ids = self.check_ids(token_ids, start_pos)
        seq_len = ids.shape[-1]
        out = np.empty((*ids.shape, self.embed_dim), dtype=self.dtype)
        if out.size == 0:
            return out
        positions = self.position_embeddings[start_pos : start_pos + seq_len]  # (T, D) view
        block = max(1, _BLOCK_BYTES // max(1, self.embed_dim * self.dtype.itemsize))
        # Gather then add one cache-sized block at a time, writing straight into `out`: no
        # full-size temporary. mode="clip" lets np.take write into `out` without buffering; the
        # ids are already checked, so it never clips.
        rows_out = out.reshape(-1, seq_len, self.embed_dim)  # (B, T, D) view of `out`
        for ids_row, out_row in zip(ids.reshape(-1, seq_len), rows_out, strict=True):
            for s in range(0, seq_len, block):
                dst = out_row[s : s + block]  # (block, D)
                np.take(self.token_embeddings, ids_row[s : s + block], axis=0, out=dst, mode="clip")
                dst += positions[s : s + block]
        return out

    __call__ = forward

    def backward(
        self, grad_output: ArrayLike, token_ids: ArrayLike, start_pos: int = 0
    ) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Gradients of a loss with respect to both tables, given ``dLoss/dforward(token_ids)``.

        A token row receives the sum of the output gradients at every place its id occurs (a
        scatter-add); a position row receives the sum over the batch at its position.

        Args:
            grad_output: ``(T, D)`` or ``(B, T, D)``, the same shape as ``forward``'s output.
            token_ids, start_pos: the inputs of that ``forward`` call.

        Returns:
            ``(grad_token, grad_position)`` with the shapes ``(V, D)`` and ``(L, D)`` of the tables.

        Raises:
            ValueError: ``grad_output`` does not have the output's shape; and as :meth:`check_ids`.
        """
        ids = self.check_ids(token_ids, start_pos)
        grad = np.asarray(grad_output, dtype=self.dtype)
        if grad.shape != (*ids.shape, self.embed_dim):
            raise ValueError(
                f"grad_output must have the output's shape {(*ids.shape, self.embed_dim)}, "
                f"got {grad.shape}"
            )
        seq_len = ids.shape[-1]
        # np.zeros (calloc) lets the OS zero a large table page by page as rows are written;
        # np.zeros_like would first write all V*D zeros itself.
        grad_token = np.zeros(self.token_embeddings.shape, dtype=self.dtype)
        grad_position = np.zeros(self.position_embeddings.shape, dtype=self.dtype)
        if ids.size == 0:
            return grad_token, grad_position
        # Scatter-add: a repeated id sums its rows (np.add.at, unlike +=, does not drop repeats).
        np.add.at(grad_token, ids.reshape(-1), grad.reshape(-1, self.embed_dim))
        per_position = grad.reshape(-1, seq_len, self.embed_dim).sum(axis=0)  # (T, D)
        grad_position[start_pos : start_pos + seq_len] = per_position
        return grad_token, grad_position

    def extended(
        self,
        max_seq_len: int,
        method: Literal["fresh", "interpolate"] = "fresh",
        seed: int | None = None,
    ) -> GPTStyleEmbedding:
        """A new layer with a longer position table; the token table is shared, not copied.

        Args:
            max_seq_len: the new ``L'``, at least the current ``L``.
            method: ``"fresh"`` keeps the ``L`` learned rows exactly and draws ``L' - L`` new rows
                from N(0, 0.02**2); ``"interpolate"`` resamples the learned rows linearly along the
                position axis so that row ``j`` of the new table sits at old position
                ``j * (L - 1) / (L' - 1)`` (the first and last rows are kept).
            seed: seed for the fresh rows.

        Returns:
            A :class:`GPTStyleEmbedding` with a ``(L', D)`` position table.

        Raises:
            TypeError: ``max_seq_len`` is not an integer.
            ValueError: ``max_seq_len < L`` (shrinking), or an unknown ``method``.
        """
        new_len = check_int("max_seq_len", max_seq_len, minimum=self.max_seq_len)
        old = self.position_embeddings
        if method == "fresh":
            rng = np.random.default_rng(seed)
            extra = _draw_table(rng, (new_len - len(old), self.embed_dim), self.dtype)
            table = np.concatenate([old, extra])
        elif method == "interpolate":
            where = np.linspace(0.0, len(old) - 1, new_len)  # (L',) fractional old positions
            left = np.clip(where.astype(np.intp), 0, max(len(old) - 2, 0))  # (L',)
            right = np.minimum(left + 1, len(old) - 1)  # (L',)
            frac = (where - left)[:, None]  # (L', 1), in [0, 1]
            table = ((1.0 - frac) * old[left] + frac * old[right]).astype(self.dtype)
        else:
            raise ValueError(f"method must be 'fresh' or 'interpolate', got {method!r}")
        return GPTStyleEmbedding.from_tables(self.token_embeddings, table)
