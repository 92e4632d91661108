"""The GPT-2/GPT-3 input layer: a learned token table plus a learned position table.

``x = wte[ids] + wpe[positions]``, the positions ``start_pos .. start_pos + T - 1`` or given
position ids, and nothing else: no segment embeddings, no boundary tokens. Both tables are plain
numpy arrays a reader can inspect and overwrite.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import (
    as_real_array,
    check_fits_in_memory,
    check_float_dtype,
    check_in_range,
    check_int,
    check_int_in_range,
    check_integer_array,
    check_seed,
)
from ._kernels import consecutive_run, draw_table, gather_add
from .models import ParameterCounts, embedding_parameter_counts

INIT_STD = 0.02
"""Standard deviation of both tables at initialisation, as in the section (and nanoGPT)."""

Extension = Literal["fresh", "tile", "interpolate"]
"""How :meth:`GPTStyleEmbedding.extended` grows a table past its rows."""

EXTENSIONS: tuple[Extension, ...] = ("fresh", "tile", "interpolate")
"""The three ways of growing a table, in the order the book shows them."""


class _Table:
    """A table of :class:`GPTStyleEmbedding`, checked whenever it is set (then used as it is).

    A table must be a non-empty 2-D floating array; once the other table is set, it must also
    match that one's width and dtype (its number of rows is free).
    """

    def __init__(self, other: str) -> None:
        self.other = other  # the name of the other table

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, layer: None, owner: type) -> _Table: ...

    @overload
    def __get__(self, layer: object, owner: type | None = None) -> NDArray[np.floating]: ...

    def __get__(self, layer: object, owner: type | None = None) -> _Table | NDArray[np.floating]:
        return self if layer is None else vars(layer)[self.name]

    def __set__(self, layer: object, table: ArrayLike) -> None:
        """Set the table to ``table`` as an array (no copy).

        Raises:
            ValueError: not a non-empty 2-D array, or not as wide as the other table.
            TypeError: not floating point, or not of the other table's dtype.
        """
        array = np.asarray(table)
        name, other_name, other = self.name, self.other, vars(layer).get(self.other)
        if array.ndim != 2 or 0 in array.shape:
            raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
        if array.dtype.kind != "f":
            raise TypeError(f"{name} must be floating point, got dtype {array.dtype}")
        if other is not None and array.shape[1] != other.shape[1]:
            raise ValueError(
                f"{name} must be {other.shape[1]} wide, as {other_name} is, got shape "
                f"{array.shape}: GPTStyleEmbedding.from_tables replaces both tables at once"
            )
        if other is not None and array.dtype != other.dtype:
            raise TypeError(
                f"{name} must have {other_name}' dtype {other.dtype}, got {array.dtype}: "
                "GPTStyleEmbedding.from_tables replaces both tables at once"
            )
        vars(layer)[name] = array


class GPTStyleEmbedding:
    """Learned token embeddings plus learned absolute position embeddings (GPT-2, GPT-3).

    Args:
        vocab_size: rows ``V`` of the token table.
        max_seq_len: rows ``L`` of the position table: the longest sequence the layer accepts.
        embed_dim: width ``D`` of both tables.
        seed: an integer >= 0 seeding the layer's own ``np.random.default_rng``, or None for fresh
            entropy; numpy's global state is untouched.
        dtype: floating dtype of both tables and of the output.

    Attributes:
        token_embeddings: ``(V, D)`` array, drawn from N(0, 0.02**2).
        position_embeddings: ``(L, D)`` array, drawn from N(0, 0.02**2) after the token table.

    Either table may be written in place, or replaced by another array (used as it is, not
    copied) of the same width and dtype, with any number of rows; a replacement is checked when
    it is set. :meth:`from_tables` replaces both at once.

    Raises:
        TypeError: a size or the seed is not an integer, or ``dtype`` is not floating.
        ValueError: a size is not positive, the seed is negative, or the tables would not fit in
            the machine's memory.
    """

    def __init__(
        self,
        vocab_size: int,
        max_seq_len: int,
        embed_dim: int,
        *,
        seed: int | None = None,
        dtype: DTypeLike = np.float32,
    ) -> None:
        vocab_size = check_int("vocab_size", vocab_size)
        max_seq_len = check_int("max_seq_len", max_seq_len)
        embed_dim = check_int("embed_dim", embed_dim)
        resolved = check_float_dtype(dtype)
        check_fits_in_memory(
            f"vocab_size {vocab_size:,} and max_seq_len {max_seq_len:,} rows of embed_dim "
            f"{embed_dim:,} in {resolved}",
            (vocab_size + max_seq_len) * embed_dim * resolved.itemsize,
        )
        rng = np.random.default_rng(check_seed(seed))
        self.token_embeddings = draw_table(
            rng, (vocab_size, embed_dim), std=INIT_STD, dtype=resolved
        )
        self.position_embeddings = draw_table(
            rng, (max_seq_len, embed_dim), std=INIT_STD, dtype=resolved
        )

    token_embeddings = _Table(other="position_embeddings")  # (V, D)
    position_embeddings = _Table(other="token_embeddings")  # (L, D)

    @classmethod
    def from_tables(
        cls, token_embeddings: ArrayLike, position_embeddings: ArrayLike
    ) -> GPTStyleEmbedding:
        """A layer that uses the given ``(V, D)`` and ``(L, D)`` tables as they are (no copy).

        Raises:
            ValueError: a table is not 2-D or empty, or the widths differ.
            TypeError: a table is not floating point, or the dtypes differ.
        """
        layer = cls.__new__(cls)
        layer.token_embeddings = token_embeddings
        layer.position_embeddings = position_embeddings
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

    def parameters(self) -> dict[str, NDArray[np.floating]]:
        """Both tables by name (``token_embeddings``, ``position_embeddings``), not copies.

        A model's ``parameters()`` starts from these, so an optimizer updates them in place.
        """
        return {
            "token_embeddings": self.token_embeddings,
            "position_embeddings": self.position_embeddings,
        }

    def parameter_counts(self) -> ParameterCounts:
        """Exact parameter counts: ``V*D`` token, ``L*D`` position, and their total."""
        return embedding_parameter_counts(self.vocab_size, self.max_seq_len, self.embed_dim)

    def check_ids(
        self, token_ids: ArrayLike, start_pos: int = 0, *, position_ids: ArrayLike | None = None
    ) -> NDArray[np.intp]:
        """The ids of a :meth:`forward` call with these arguments, checked: ``intp``, ``(T,)`` or
        ``(B, T)``. :meth:`forward` and :meth:`backward` check their ids and positions here.

        Raises:
            TypeError: ids or position ids that are not integers (floats, bools, strings,
                objects), or a ``start_pos`` that is not an integer.
            ValueError: ids with 0 or more than 2 dimensions, an id outside ``[0, V)``, a
                ``start_pos`` outside ``[0, L]``, ``start_pos + T > L``, position ids of another
                shape or outside ``[0, L)``, or both a nonzero ``start_pos`` and position ids.
        """
        return self.checked_lookup(token_ids, start_pos, position_ids)[0]

    def checked_lookup(
        self, token_ids: ArrayLike, start_pos: int = 0, position_ids: ArrayLike | None = None
    ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The checked ids ``(T,)``/``(B, T)`` and their ``intp`` position ids: ``(T,)``, shared by
        every sequence (``start_pos .. start_pos + T - 1``, or ``position_ids`` of that shape), or
        the ids' shape.

        :meth:`forward` and :meth:`backward` check their ids here; a model that embeds the same
        ids forward and back in one step checks them once, here, and passes the result to
        :meth:`embed_checked` and :meth:`backward_checked`.

        Raises:
            TypeError, ValueError: as :meth:`check_ids`.
        """
        ids = check_integer_array("token_ids", token_ids, self.vocab_size)
        if ids.ndim not in (1, 2):
            raise ValueError(
                f"token_ids must have shape (T,) or (B, T), got {ids.ndim} dimensions "
                f"with shape {ids.shape}"
            )
        seq_len = ids.shape[-1]
        length = self.max_seq_len
        # an int: a numpy scalar would overflow or upcast in the sums below
        start_pos = check_int_in_range("start_pos", start_pos, 0, length)
        check_in_range("token id", ids, self.vocab_size, "ids")
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
                f"position_ids must have the ids' shape {ids.shape} or ({seq_len},), "
                f"got {pos.shape}"
            )
        check_in_range("position id", pos, length, "positions")
        return ids.astype(np.intp, copy=False), pos.astype(np.intp, copy=False)

    def forward(
        self, token_ids: ArrayLike, start_pos: int = 0, *, position_ids: ArrayLike | None = None
    ) -> NDArray[np.floating]:
        """Embed ids: ``token_embeddings[ids] + position_embeddings[positions]``.

        Args:
            token_ids: integer ids in ``[0, V)``, shape ``(T,)`` or ``(B, T)``.
            start_pos: position of the first id, so positions are ``start_pos .. start_pos+T-1``;
                a continuation (as with a KV cache) passes the number of tokens already seen.
            position_ids: instead of ``start_pos``, each id's position in ``[0, L)``: the ids'
                shape, or ``(T,)`` shared by the batch (a left-padded batch passes
                :func:`~gptembed.positions.position_ids_from_mask` of its mask).

        Returns:
            A new array of shape ``(T, D)`` or ``(B, T, D)`` in the tables' dtype.

        Raises:
            TypeError, ValueError: as :meth:`check_ids`.
        """
        return self.embed_checked(*self.checked_lookup(token_ids, start_pos, position_ids))

    __call__ = forward

    def embed_checked(
        self, ids: NDArray[np.intp], positions: NDArray[np.intp]
    ) -> NDArray[np.floating]:
        """:meth:`forward` of ids and positions that :meth:`checked_lookup` returned (a model that
        checked its ids once passes them here, not through another check)."""
        wte, wpe = self.token_embeddings, self.position_embeddings  # (V, D), (L, D)
        # x = wte[ids] + wpe[positions], gathered and added one cache-sized block at a time
        return gather_add(wte, ids, wpe, positions)  # (..., T, D)

    def backward(
        self,
        grad_output: ArrayLike,
        token_ids: ArrayLike,
        start_pos: int = 0,
        *,
        position_ids: ArrayLike | None = None,
    ) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Gradients of a loss with respect to both tables, given ``dLoss/dforward(token_ids)``.

        A token row receives the sum of the output gradients at every place its id occurs, and a
        position row the sum at every place its position occurs (scatter-adds: a repeated id or
        position sums its gradients).

        Args:
            grad_output: ``(T, D)`` or ``(B, T, D)``, the same shape as ``forward``'s output.
            token_ids, start_pos, position_ids: the inputs of that ``forward`` call.

        Returns:
            ``(grad_token, grad_position)`` with the shapes ``(V, D)`` and ``(L, D)`` of the tables.

        Sums run in float32 for float16 tables (in float16, 2,048 + 1 is 2,048), then are cast
        back to the tables' dtype.

        Raises:
            TypeError: ``grad_output`` does not hold real numbers; and as :meth:`check_ids`.
            ValueError: ``grad_output`` does not have the output's shape; and as :meth:`check_ids`.
        """
        return self.backward_checked(
            grad_output, *self.checked_lookup(token_ids, start_pos, position_ids)
        )

    def backward_checked(
        self, grad_output: ArrayLike, ids: NDArray[np.intp], positions: NDArray[np.intp]
    ) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """:meth:`backward` of ids and positions that :meth:`checked_lookup` returned."""
        # Sums run in float32 at least: in float16, 2,048 + 1 rounds back to 2,048, so 4,096
        # gradients of 1 would sum to 2,048. The results are cast to the tables' dtype at the end.
        total = np.promote_types(self.dtype, np.float32)
        grad = as_real_array("grad_output", grad_output, dtype=total)
        if grad.shape != (*ids.shape, self.embed_dim):
            raise ValueError(
                f"grad_output must have the output's shape {(*ids.shape, self.embed_dim)}, "
                f"got {grad.shape}"
            )
        # np.zeros (calloc) lets the OS zero a large table page by page as rows are written;
        # np.zeros_like would first write all V*D zeros itself.
        grad_token = np.zeros(self.token_embeddings.shape, dtype=total)
        grad_position = np.zeros(self.position_embeddings.shape, dtype=total)
        if ids.size:
            rows = grad.reshape(-1, self.embed_dim)  # (B*T, D)
            # Scatter-add: a repeated index sums its rows (np.add.at, unlike +=, keeps repeats).
            np.add.at(grad_token, ids.reshape(-1), rows)
            run = consecutive_run(positions)
            if run is None:
                np.add.at(grad_position, np.broadcast_to(positions, ids.shape).reshape(-1), rows)
            else:  # every sequence at the rows `run`: sum the batch, then write them as a slice
                grad_position[run] = grad.reshape(-1, ids.shape[-1], self.embed_dim).sum(0)
        return grad_token.astype(self.dtype, copy=False), grad_position.astype(
            self.dtype, copy=False
        )

    def extended(
        self,
        max_seq_len: int,
        method: Extension = "fresh",
        *,
        seed: int | None = None,
    ) -> GPTStyleEmbedding:
        """A new layer with a longer position table; the token table is shared, not copied.

        Args:
            max_seq_len: the new ``L'``, at least the current ``L``.
            method: ``"fresh"`` keeps the ``L`` learned rows exactly and draws ``L' - L`` new rows
                from N(0, 0.02**2); ``"interpolate"`` resamples the learned rows linearly along the
                position axis so that row ``j`` of the new table sits at old position
                ``j * (L - 1) / (L' - 1)`` (the first and last rows are kept); ``"tile"`` makes
                new row ``j`` a copy of learned row ``j mod L``, repeating the table, as Longformer
                grew RoBERTa's 512 positions to 4,096 (Beltagy, Peters & Cohan 2020,
                "Longformer: The Long-Document Transformer", arXiv:2004.05150, section 5).
            seed: an integer >= 0 seeding the fresh rows, or None. They come from a child of the
                seed's ``np.random.SeedSequence``, a stream independent of the one a layer made
                with the same seed draws its tables from: otherwise they would repeat that
                layer's token rows ``0, 1, ...``.

        Returns:
            A :class:`GPTStyleEmbedding` with a ``(L', D)`` position table.

        Raises:
            TypeError: ``max_seq_len`` or ``seed`` is not an integer.
            ValueError: ``max_seq_len < L`` (shrinking), a negative ``seed``, or an unknown
                ``method``.
        """
        new_len = check_int("max_seq_len", max_seq_len, minimum=self.max_seq_len)
        stream = np.random.SeedSequence(check_seed(seed)).spawn(1)[0]
        old = self.position_embeddings
        if method == "fresh":
            rng = np.random.default_rng(stream)
            extra = draw_table(
                rng, (new_len - len(old), self.embed_dim), std=INIT_STD, dtype=self.dtype
            )
            table = np.concatenate([old, extra])
        elif method == "interpolate":
            where = np.linspace(0.0, len(old) - 1, new_len)  # (L',) fractional old positions
            left = np.clip(where.astype(np.intp), 0, max(len(old) - 2, 0))  # (L',)
            right = np.minimum(left + 1, len(old) - 1)  # (L',)
            frac = (where - left)[:, None]  # (L', 1), in [0, 1]
            table = ((1.0 - frac) * old[left] + frac * old[right]).astype(self.dtype)
        elif method == "tile":
            table = old[np.arange(new_len) % len(old)]  # (L', D): row j is old row j mod L
        else:
            raise ValueError(f"method must be 'fresh', 'interpolate' or 'tile', got {method!r}")
        return GPTStyleEmbedding.from_tables(self.token_embeddings, table)
