"""The GPT-2/GPT-3 input layer: a learned token table plus a learned position table.

``x = wte[ids] + wpe[positions]``, the positions ``start_pos .. start_pos + T - 1`` or given
position ids, and nothing else: no segment embeddings, no boundary tokens. Both tables are plain
numpy arrays a reader can inspect and overwrite.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from ._checks import check_fits_in_memory, check_float_dtype, check_int, check_seed
from ._kernels import draw_table, gather_add
from ._lookup import checked_lookup, table_grads
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
        return self._lookup(token_ids, start_pos, position_ids)[0]

    def _lookup(
        self, token_ids: ArrayLike, start_pos: int, position_ids: ArrayLike | None
    ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The checked ids and their positions (:func:`~gptembed._lookup.checked_lookup`)."""
        return checked_lookup(
            token_ids,
            start_pos,
            position_ids,
            vocab_size=self.vocab_size,
            max_seq_len=self.max_seq_len,
        )

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
        ids, positions = self._lookup(token_ids, start_pos, position_ids)
        wte, wpe = self.token_embeddings, self.position_embeddings  # (V, D), (L, D)
        # x = wte[ids] + wpe[positions], gathered and added one cache-sized block at a time
        return gather_add(wte, ids, wpe, positions)  # (..., T, D)

    __call__ = forward

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
        ids, positions = self._lookup(token_ids, start_pos, position_ids)
        return table_grads(
            grad_output, ids, positions, self.token_embeddings, self.position_embeddings
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
            ValueError: ``max_seq_len < L`` (shrinking), a table too large for the machine's
                memory, a negative ``seed``, or an unknown ``method``.
        """
        new_len = check_int("max_seq_len", max_seq_len, minimum=self.max_seq_len)
        check_fits_in_memory(
            f"the extended table's max_seq_len {new_len:,} rows of embed_dim {self.embed_dim:,} "
            f"in {self.dtype}",
            new_len * self.embed_dim * self.dtype.itemsize,
        )
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
