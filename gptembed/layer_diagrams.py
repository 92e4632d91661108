"""Diagrams of the input layer at work: its sum, a padded batch's position ids, a KV cache.

Pictures of the ideas, drawn from the package's own arithmetic in the idiom of
:mod:`gptembed.plotting` (:func:`plot_embedding_sum`, :func:`plot_padded_batch`,
:func:`plot_kv_cache`). Each ``plot_<idea>`` has a ``describe_<idea>`` taking the same data: the
same picture in words, one paragraph for a figure's alt text (``mystnb.image.alt``), its numbers
computed as the picture's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

try:
    from matplotlib.axes import Axes
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle
except ImportError as err:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"{__name__} draws with matplotlib, which is not installed: install the plot extra with "
        'pip install "gptembed[plot]"'
    ) from err

from ._checks import check_int, check_integer_array, check_real_array
from ._figures import (
    DIAGRAM_FONTSIZE,
    DIAGRAM_MAX_COLUMNS,
    DIAGRAM_MAX_ROWS,
    DIAGRAM_WIDTH,
    DIVERGING_CMAP,
    FRAME,
    GREY,
    MINUS,
    PALETTE,
    canvas,
    cells,
    centred_limit,
    put_text,
    word_list,
)
from .embedding import GPTStyleEmbedding
from .positions import PAD_POSITION, position_ids_from_mask

_DARK_GREY = "#595959"  # text on GREY (contrast 4.9:1)

_W_TOKEN, _W_POSITION = r"$W_{\mathrm{token}}$", r"$W_{\mathrm{position}}$"
"""The two tables' symbols, as the book's formulas write them."""
_TOKEN_TABLE, _POSITION_TABLE = f"token table {_W_TOKEN}", f"position table {_W_POSITION}"
_TIMES = "\u00d7"  # the times sign, for labels


def _text_width(text: str, fontsize: float = DIAGRAM_FONTSIZE) -> float:
    """About how many inches ``text`` takes in DejaVu Sans: 0.6 em a character, on the wide side
    (digits are 0.64 em, most lower-case letters less)."""
    return 0.6 * fontsize / 72.0 * len(text)


def _token_label(token: object) -> str:
    """A token as a label: as it is, or quoted if blank or unprintable (a space, ``\\n``)."""
    text = str(token)
    return text if text.strip() and text.isprintable() else repr(text)


def _check_diagram_size(name: str, shape: tuple[int, ...], hint: str) -> None:
    """Refuse what a diagram cannot draw legibly: more than :data:`DIAGRAM_MAX_ROWS` rows or
    :data:`DIAGRAM_MAX_COLUMNS` columns."""
    rows, cols = shape
    if rows > DIAGRAM_MAX_ROWS or cols > DIAGRAM_MAX_COLUMNS:
        raise ValueError(
            f"{name} has shape {shape}: a diagram draws at most {DIAGRAM_MAX_ROWS} rows of "
            f"{DIAGRAM_MAX_COLUMNS} columns, so that every label stays legible; {hint}"
        )


def _rows_from_0(count: int) -> str:
    """``row 0``, ``rows 0 and 1``, ``rows 0 to 4``."""
    return {1: "row 0", 2: "rows 0 and 1"}.get(count, f"rows 0 to {count - 1}")


# The input layer: two tables, the rows a sequence picks, and their sum.


@dataclass(frozen=True)
class _EmbeddingSum:
    """:func:`plot_embedding_sum`'s inputs, checked, and the sum the layer computes."""

    wte: NDArray[np.float64]  # (V, D)
    wpe: NDArray[np.float64]  # (L, D)
    ids: NDArray[np.intp]  # (T,)
    total: NDArray[np.float64]  # (T, D)
    tokens: list[str]  # V token names, as given

    @property
    def names(self) -> list[str]:
        """The tokens as labels (:func:`_token_label`: a blank one quoted)."""
        return [_token_label(token) for token in self.tokens]

    @property
    def token_rows(self) -> NDArray[np.float64]:
        """``(T, D)``: ``wte[ids]``."""
        return self.wte[self.ids]

    @property
    def position_rows(self) -> NDArray[np.float64]:
        """``(T, D)``: ``wpe[0:T]``."""
        return self.wpe[: self.ids.size]

    def picks(self, row: int) -> list[int]:
        """The positions whose token is row ``row`` of the token table."""
        return [int(t) for t in np.flatnonzero(self.ids == row)]


def _embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    tokens: Sequence[object] | None,
) -> _EmbeddingSum:
    """The inputs of :func:`plot_embedding_sum`, checked; the sum is
    :meth:`~gptembed.embedding.GPTStyleEmbedding.forward` of a layer with those tables."""
    wte = check_real_array("token_table", token_table)
    wpe = check_real_array("position_table", position_table)
    if wte.ndim != 2 or wpe.ndim != 2 or wte.shape[1] != wpe.shape[1] or 0 in wte.shape + wpe.shape:
        raise ValueError(
            "token_table and position_table must be non-empty 2-D arrays (V, D) and (L, D) of "
            f"one width D, got shapes {wte.shape} and {wpe.shape}"
        )
    hint = "draw a small layer's tables: every row of both is drawn"
    _check_diagram_size("token_table", wte.shape, hint)
    _check_diagram_size("position_table", wpe.shape, hint)
    ids = check_integer_array("token_ids", token_ids, wte.shape[0])
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"token_ids must have shape (T,) with T >= 1, got shape {ids.shape}")
    # the layer's own forward: it refuses an id outside [0, V) and a sequence longer than L
    total = GPTStyleEmbedding.from_tables(wte, wpe).forward(ids)
    names = [f"id {v}" for v in range(wte.shape[0])] if tokens is None else list(tokens)
    if len(names) != wte.shape[0]:
        raise ValueError(
            f"tokens must name each of the token table's {wte.shape[0]} rows, got {len(names)}"
        )
    named = [str(name) for name in names]
    return _EmbeddingSum(wte, wpe, ids.astype(np.intp), np.asarray(total, np.float64), named)


def plot_embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    *,
    tokens: Sequence[object] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """The input layer as matrices: both tables, the rows a sequence picks, and their sum.

    Top: the token table ``(V, D)`` and the position table ``(L, D)``, the rows the sequence
    picks outlined (a token's row noted with the positions that pick it) and the rows it does not
    pick faded. Below: ``W_token[ids] + W_position[0:T] = x``, three ``(T, D)`` matrices, each row
    labelled with its position and token. One colour scale, :data:`DIVERGING_CMAP` centred on 0,
    for all five; the sum is the layer's own :meth:`~gptembed.embedding.GPTStyleEmbedding.forward`.
    :func:`describe_embedding_sum` says the same in words.

    >>> from gptembed import GPTStyleEmbedding
    >>> layer = GPTStyleEmbedding(vocab_size=6, max_seq_len=5, embed_dim=4, seed=10)
    >>> words = ["the", "cat", "sat", "on", "mat", "."]
    >>> fig = plot_embedding_sum(
    ...     layer.token_embeddings, layer.position_embeddings, [0, 1, 2, 3, 0], tokens=words
    ... )
    >>> fig.axes[0].get_images()[-1].get_array().shape  # the sum x: (T, D)
    (5, 4)

    Args:
        token_table: ``(V, D)``, a token table (``layer.token_embeddings``), at most
            :data:`DIAGRAM_MAX_ROWS` by :data:`DIAGRAM_MAX_COLUMNS`.
        position_table: ``(L, D)``, a position table of the same width.
        token_ids: ``(T,)`` ids in ``[0, V)``, ``T <= L``: the sequence.
        tokens: ``V`` names of the token table's rows (the vocabulary); by default the ids.
        ax: axes to draw on (a blank canvas); by default a new figure at most
            :data:`DIAGRAM_WIDTH` wide, as tall as the tables need.

    Returns:
        The figure. Its five images carry the labels ``"token table"``, ``"position table"``,
        ``"token rows"``, ``"position rows"`` and ``"sum"``.

    Raises:
        TypeError: a table that is not real numbers, or ids that are not integers.
        ValueError: tables that are not 2-D of one width, hold a NaN or inf, or are larger than a
            diagram draws; ids that are not ``(T,)``, lie outside ``[0, V)`` or are more than
            ``L``; ``tokens`` of the wrong length.
    """
    parts = _embedding_sum(token_table, position_table, token_ids, tokens)
    (vocab, dim), n_pos, seq_len = parts.wte.shape, parts.wpe.shape[0], parts.ids.size
    row_labels = [f"{t} {parts.names[i]}" for t, i in enumerate(parts.ids)]
    label_w = 0.12 + max(_text_width(s) for s in [*row_labels, *parts.names])
    plus_gap, equals_gap, margin, overhang = 1.05, 0.6, 0.15, 0.3  # overhang: x's wide title
    room = DIAGRAM_WIDTH - label_w - plus_gap - equals_gap - 2 * margin - overhang
    cell = min(0.3, room / (3 * dim))
    width = dim * cell
    x_tok = margin + label_w
    x_pos = x_tok + width + plus_gap
    x_sum = x_pos + width + equals_gap
    y_tables = 0.55
    y_arrows = y_tables + max(vocab, n_pos) * cell + 0.08
    y_rows = y_arrows + 0.95
    size = (x_sum + width + margin + overhang, y_rows + seq_len * cell + margin)
    fig, ax = canvas(size, ax)
    limit = centred_limit((parts.wte, parts.wpe, parts.total))
    norm = Normalize(-limit, limit)
    square = (cell, cell)

    def matrix(values: NDArray[np.float64], left: float, top: float, label: str) -> None:
        cells(ax, values, left, top, square, cmap=DIVERGING_CMAP, norm=norm, label=label)

    def title(x: float, y: float, first: str, second: str) -> None:
        put_text(ax, x + width / 2, y - 0.06, first, ha="center", va="bottom", fontsize=10)
        put_text(ax, x + width / 2, y - 0.06, second, ha="center", va="top", color=_DARK_GREY)

    def veil(left: float, top: float, rows: int) -> None:  # fades rows the sequence skips
        ax.add_patch(Rectangle((left, top), width, rows * cell, color="white", alpha=0.7, lw=0))

    def outline(left: float, top: float, rows: int) -> None:
        box = Rectangle((left, top), width, rows * cell, fill=False, edgecolor="black", lw=2.0)
        ax.add_patch(box)

    # the two tables, the picked rows outlined, the others faded
    matrix(parts.wte, x_tok, y_tables, "token table")
    title(x_tok, y_tables - 0.22, _TOKEN_TABLE, f"{vocab} {_TIMES} {dim}, a row per token")
    for row, name in enumerate(parts.names):
        y = y_tables + (row + 0.5) * cell
        put_text(ax, x_tok - 0.06, y, name, ha="right", va="center")
        picks = parts.picks(row)
        if not picks:
            veil(x_tok, y_tables + row * cell, 1)
            continue
        outline(x_tok, y_tables + row * cell, 1)
        shown = ", ".join(str(t) for t in picks[:3]) + (", …" if len(picks) > 3 else "")
        put_text(ax, x_tok + width + 0.06, y, f"t = {shown}", va="center")
    matrix(parts.wpe, x_pos, y_tables, "position table")
    position_title = f"{n_pos} {_TIMES} {dim}, a row per position"
    title(x_pos, y_tables - 0.22, _POSITION_TABLE, position_title)
    for row in range(n_pos):
        put_text(ax, x_pos + width + 0.06, y_tables + (row + 0.5) * cell, str(row), va="center")
    outline(x_pos, y_tables, seq_len)
    if n_pos > seq_len:
        veil(x_pos, y_tables + seq_len * cell, n_pos - seq_len)

    # the picked rows, added
    for x, text in ((x_tok, "pick rows ids"), (x_pos, f"pick {_rows_from_0(seq_len)}")):
        middle = x + width / 2
        ax.annotate(
            "",
            xy=(middle, y_rows - 0.45),
            xytext=(middle, y_arrows),
            arrowprops={"arrowstyle": "-|>", "color": FRAME, "lw": 1.2},
        )
        put_text(ax, middle + 0.08, y_arrows + 0.22, text, va="center", color=_DARK_GREY)
    matrix(parts.token_rows, x_tok, y_rows, "token rows")
    matrix(parts.position_rows, x_pos, y_rows, "position rows")
    matrix(parts.total, x_sum, y_rows, "sum")
    title(x_tok, y_rows - 0.22, f"{_W_TOKEN}[ids]", "the tokens' rows")
    title(x_pos, y_rows - 0.22, f"{_W_POSITION}[0:{seq_len}]", "the positions' rows")
    title(x_sum, y_rows - 0.22, "x, the sum", f"{seq_len} {_TIMES} {dim}, the layer's output")
    for t, text in enumerate(row_labels):
        put_text(ax, x_tok - 0.06, y_rows + (t + 0.5) * cell, text, ha="right", va="center")
    middle_y = y_rows + seq_len * cell / 2
    for x, sign in ((x_tok + width + plus_gap / 2, "+"), (x_pos + width + equals_gap / 2, "=")):
        put_text(ax, x, middle_y, sign, ha="center", va="center", fontsize=18)

    # the colour scale, in the empty corner above the sum
    bar = ax.inset_axes(
        (x_sum / size[0], 1 - (y_tables + 0.55) / size[1], width / size[0], 0.12 / size[1])
    )
    colorbar = fig.colorbar(ScalarMappable(norm, DIVERGING_CMAP), cax=bar, orientation="horizontal")
    colorbar.set_label("value", fontsize=DIAGRAM_FONTSIZE)
    bar.xaxis.set_label_position("top")
    bar.tick_params(labelsize=DIAGRAM_FONTSIZE)
    bar.set_xticks([-limit, 0.0, limit], [f"{MINUS}{limit:.2g}", "0", f"{limit:.2g}"])
    return fig


def describe_embedding_sum(
    token_table: ArrayLike,
    position_table: ArrayLike,
    token_ids: ArrayLike,
    *,
    tokens: Sequence[object] | None = None,
) -> str:
    """:func:`plot_embedding_sum` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_embedding_sum(np.ones((3, 2)), np.ones((4, 2)), [2, 0], tokens="abc"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Two grids of coloured cells (blue negative, red positive, white zero): the token table,
    3 rows (one per token: 'a', 'b' and 'c') by 2 columns, and the position table, 4 rows by
    2 columns. The sequence 'c' 'a' (ids 2 and 0) picks its tokens' rows from the token table and
    rows 0 and 1 from the position table, outlined; the rows it skips are faded. Below, the 2
    picked token rows plus the 2 position rows equal x, 2 rows by 2 columns: each position's
    token row plus its position row.

    Raises:
        TypeError, ValueError: as :func:`plot_embedding_sum`.
    """
    parts = _embedding_sum(token_table, position_table, token_ids, tokens)
    (vocab, dim), n_pos, seq_len = parts.wte.shape, parts.wpe.shape[0], parts.ids.size
    quoted = [repr(token) for token in parts.tokens]  # 'the', and a blank token visible: ' '
    words = " ".join(quoted[i] for i in parts.ids)
    repeated = [(quoted[row], parts.picks(row)) for row in np.unique(parts.ids)]
    repeated = [(name, picks) for name, picks in repeated if len(picks) > 1]
    unpicked = n_pos > seq_len or len(np.unique(parts.ids)) < vocab
    text = (
        "Two grids of coloured cells (blue negative, red positive, white zero): the token table, "
        f"{vocab} rows (one per token: {word_list(quoted)}) by {dim} columns, and the "
        f"position table, {n_pos} rows by {dim} columns. The sequence {words} "
        f"(ids {word_list(parts.ids.tolist())}) picks its tokens' rows from the token table and "
        f"{_rows_from_0(seq_len)} from the position table, outlined; "
        + ("the rows it skips are faded. " if unpicked else "it skips no row. ")
        + f"Below, the {seq_len} picked token rows plus the {seq_len} position rows equal x, "
        f"{seq_len} rows by {dim} columns: each position's token row plus its position row."
    )
    for name, picks in repeated:
        text += (
            f" The token {name} sits at positions {word_list(picks)}: the same token row each "
            "time, but different rows of x."
        )
    return text


# A KV cache over decoding steps: the keys kept, and the position each new token gets.

_KV_EMPTY, _KV_CACHED, _KV_NEW, _KV_DROPPED = 0, 1, 2, 3
"""The states of a cell of :func:`plot_kv_cache` (a step, a position): no token there yet, a
key and value in the cache, the step's new token, a key the window dropped."""

_KV_COLOURS = ("#ffffff", PALETTE["sky"], PALETTE["orange"], GREY)  # by state


@dataclass(frozen=True)
class _KVCache:
    """What :func:`plot_kv_cache` draws: a state per (step, position), and per step the
    position of its first new token and the keys the cache holds after it."""

    prompt_len: int
    window: int | None
    states: NDArray[np.intp]  # (steps + 1, prompt_len + steps)
    start_pos: list[int]
    cached: list[int]


def _kv_cache(n_steps: int, prompt_len: int, window: int | None) -> _KVCache:
    """:func:`plot_kv_cache`'s arguments, checked, and what it draws.

    Step 0 embeds the prompt at ``start_pos = 0``; step ``s`` embeds one token at ``start_pos``
    = the tokens seen (:attr:`~gptembed.attention_model.KVCache.length`). A window keeps the
    last ``window`` keys, the new one included (as :func:`gptembed.gpt.forward`'s ``window``).
    """
    n_steps = check_int("n_steps", n_steps)
    prompt_len = check_int("prompt_len", prompt_len)
    n_pos = prompt_len + n_steps
    if n_steps + 1 > DIAGRAM_MAX_ROWS or n_pos > DIAGRAM_MAX_ROWS:
        raise ValueError(
            f"a diagram draws at most {DIAGRAM_MAX_ROWS} positions, so that every label stays "
            f"legible, got prompt_len {prompt_len} + n_steps {n_steps} = {n_pos}"
        )
    if window is not None:
        window = check_int("window", window)
        if window < prompt_len:
            raise ValueError(
                f"window must hold the prompt, >= prompt_len {prompt_len}, got {window}: the "
                "diagram starts from a cache of the whole prompt"
            )
    states = np.full((n_steps + 1, n_pos), _KV_EMPTY, dtype=np.intp)
    start_pos, cached = [], []
    for step in range(n_steps + 1):
        start = 0 if step == 0 else prompt_len + step - 1  # the tokens seen so far
        end = prompt_len if step == 0 else start + 1  # one past the newest position
        first_kept = 0 if window is None else max(0, end - window)
        states[step, :first_kept] = _KV_DROPPED
        states[step, first_kept:start] = _KV_CACHED
        states[step, start:end] = _KV_NEW
        start_pos.append(start)
        cached.append(end - first_kept)
    return _KVCache(prompt_len, window, states, start_pos, cached)


def plot_kv_cache(
    n_steps: int = 5, *, prompt_len: int = 3, window: int | None = None, ax: Axes | None = None
) -> Figure:
    """A KV cache over decoding steps: a row per step, a column per position.

    Step 0 (the prompt) embeds ``prompt_len`` tokens at positions ``0 ..``; each later step
    embeds one new token at ``start_pos``, the number of tokens already seen, which is the
    cache's length (:attr:`~gptembed.attention_model.KVCache.length`), and adds its key and
    value: the cache grows by one a step. The new tokens' cells hold their position ids. With a
    ``window`` the cache keeps only the last ``window`` keys, the new one included, as
    :func:`gptembed.gpt.forward`'s ``window`` does: the oldest is dropped each step while the
    position ids go on counting. :func:`describe_kv_cache` says the same in words.

    >>> fig = plot_kv_cache(3, prompt_len=2, window=3)
    >>> fig.axes[0].get_images()[0].get_array().tolist()  # 0 empty, 1 cached, 2 new, 3 dropped
    [[2, 2, 0, 0, 0], [1, 1, 2, 0, 0], [3, 1, 1, 2, 0], [3, 3, 1, 1, 2]]

    Args:
        n_steps: decoding steps after the prompt, each one new token.
        prompt_len: tokens of the prompt, embedded at step 0; with ``n_steps`` at most
            :data:`DIAGRAM_MAX_ROWS` positions in all.
        window: if given, the most keys the cache holds (at least ``prompt_len``).
        ax: axes to draw on (a blank canvas); by default a new figure
            :data:`DIAGRAM_WIDTH` wide, as tall as the steps need.

    Returns:
        The figure. Its image (label ``"cache"``) holds a state per step and position:
        :data:`_KV_EMPTY`, :data:`_KV_CACHED`, :data:`_KV_NEW` or :data:`_KV_DROPPED`.

    Raises:
        TypeError, ValueError: a size that is not an integer >= 1, more positions than a
            diagram draws, or a window smaller than the prompt.
    """
    kv = _kv_cache(n_steps, prompt_len, window)
    n_rows, n_pos = kv.states.shape
    label_w, margin, right_w = 0.75, 0.12, 2.05
    cell = min(0.42, (DIAGRAM_WIDTH - 2 * margin - label_w - right_w) / n_pos)
    row_h = min(0.36, cell + 0.06)
    x0, y0 = margin + label_w, 0.5
    y_legend = y0 + n_rows * row_h + 0.1
    size = (x0 + n_pos * cell + right_w + margin, y_legend + 0.35)
    fig, ax = canvas(size, ax)
    cmap = ListedColormap(list(_KV_COLOURS))
    cells(ax, kv.states, x0, y0, (cell, row_h), cmap=cmap, norm=Normalize(-0.5, 3.5), label="cache")
    ax.hlines(y0 + row_h * np.arange(1, n_rows), x0, x0 + n_pos * cell, colors="#bbbbbb", lw=0.6)
    put_text(ax, x0 - 0.06, y0 - 0.12, "position", ha="right", va="center", color=_DARK_GREY)
    for p in range(n_pos):
        put_text(ax, x0 + (p + 0.5) * cell, y0 - 0.12, str(p), ha="center", va="center")
    x_start, x_cached = x0 + n_pos * cell + 0.55, x0 + n_pos * cell + 1.5
    put_text(ax, x_start, y0 - 0.12, "start_pos", ha="center", va="center", color=_DARK_GREY)
    put_text(ax, x_cached, y0 - 0.12, "keys in cache", ha="center", va="center", color=_DARK_GREY)
    for step in range(n_rows):
        y = y0 + (step + 0.5) * row_h
        put_text(
            ax, x0 - 0.06, y, "prompt" if step == 0 else f"step {step}", ha="right", va="center"
        )
        for new in np.flatnonzero(kv.states[step] == _KV_NEW):
            x = x0 + (new + 0.5) * cell
            put_text(ax, x, y, str(new), ha="center", va="center", fontweight="bold")
        put_text(ax, x_start, y, str(kv.start_pos[step]), ha="center", va="center")
        put_text(ax, x_cached, y, str(kv.cached[step]), ha="center", va="center")
    states = [_KV_CACHED, _KV_NEW] + ([_KV_DROPPED] if window is not None else [])
    names = {
        _KV_CACHED: "key and value in the cache",
        _KV_NEW: "new token, at its position id",
        _KV_DROPPED: "dropped by the window",
    }
    handles = [Patch(facecolor=_KV_COLOURS[s], edgecolor=FRAME, label=names[s]) for s in states]
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(size[0] / 2, y_legend),
        bbox_transform=ax.transData, ncols=len(handles), fontsize=DIAGRAM_FONTSIZE,
        frameon=False, handlelength=1.2, columnspacing=1.2, borderaxespad=0.0,
    )  # fmt: skip
    return fig


def describe_kv_cache(n_steps: int = 5, *, prompt_len: int = 3, window: int | None = None) -> str:
    """:func:`plot_kv_cache` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_kv_cache(2, prompt_len=3))  # doctest: +NORMALIZE_WHITESPACE
    A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the prompt's 3
    tokens at positions 0 to 2 and caches their keys and values. At each of the next 2 steps one
    new token is embedded at position start_pos, the number of tokens already seen (3 and 4),
    and its key and value join the cache, which grows by one key a step, to 5.

    Raises:
        TypeError, ValueError: as :func:`plot_kv_cache`.
    """
    kv = _kv_cache(n_steps, prompt_len, window)
    steps = kv.states.shape[0] - 1
    text = (
        "A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the "
        f"prompt's {_plural(kv.prompt_len, 'token')} at position"
        + (f"s 0 to {kv.prompt_len - 1}" if kv.prompt_len > 1 else " 0")
        + (
            " and caches its key and value. At "
            if kv.prompt_len == 1
            else " and caches their keys and values. At "
        )
        + ("the next step" if steps == 1 else f"each of the next {steps} steps")
        + " one new token is embedded at position start_pos, the number of tokens already seen "
        f"({word_list(kv.start_pos[1:])}), and its key and value join the cache"
    )
    dropping = [step for step in range(1, steps + 1) if kv.states[step, 0] == _KV_DROPPED]
    if not dropping:
        return text + f", which grows by one key a step, to {kv.cached[-1]}."
    return text + (
        f". A window of {kv.window} keeps only the last {kv.window} keys, the new one included: "
        f"from step {dropping[0]} on, the oldest key is dropped (grey) at each step, so the "
        f"cache stays at {kv.window} keys while start_pos goes on counting, to "
        f"{kv.start_pos[-1]}."
    )


def _plural(count: int, noun: str) -> str:
    """``1 token``, ``3 tokens``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


# A padded batch: its ids, its attention mask, and the position ids the mask gives.


@dataclass(frozen=True)
class _PaddedBatch:
    """:func:`plot_padded_batch`'s inputs, checked, and
    :func:`~gptembed.positions.position_ids_from_mask` of the mask."""

    ids: NDArray[np.integer]  # (B, T)
    real: NDArray[np.bool_]  # (B, T): the mask, True for a real token
    positions: NDArray[np.intp]  # (B, T)


def _padded_batch(token_ids: ArrayLike, attention_mask: ArrayLike) -> _PaddedBatch:
    """The inputs of :func:`plot_padded_batch`, checked, and their position ids."""
    ids = check_integer_array("token_ids", token_ids, None)
    if ids.ndim != 2 or 0 in ids.shape:
        raise ValueError(f"token_ids must have shape (B, T) with B, T >= 1, got {ids.shape}")
    if ids.min() < 0:
        raise ValueError(f"token ids must be >= 0, got {ids.min()}")
    positions = position_ids_from_mask(attention_mask)  # refuses a mask that is not 0/1, 2-D
    if positions.shape != ids.shape:
        raise ValueError(
            f"attention_mask must have the ids' shape {ids.shape}, got {positions.shape}"
        )
    if ids.shape[0] > 8 or ids.shape[1] > DIAGRAM_MAX_COLUMNS:
        raise ValueError(
            f"a diagram draws at most 8 sequences of {DIAGRAM_MAX_COLUMNS} slots, so that every "
            f"number stays legible, got token_ids of shape {ids.shape}"
        )
    return _PaddedBatch(ids, np.asarray(attention_mask).astype(bool), positions)


def plot_padded_batch(
    token_ids: ArrayLike, attention_mask: ArrayLike, *, ax: Axes | None = None
) -> Figure:
    """A padded batch as three aligned grids, the numbers in their cells: ids, mask, positions.

    Top to bottom, a row per sequence and a column per slot: the token ids, padding greyed;
    the attention mask (1 a real token, 0 padding); and the position ids of
    :func:`~gptembed.positions.position_ids_from_mask`, which count from 0 at each sequence's
    first real token (so a left-padded sequence reads the rows it reads unpadded) and give
    padding :data:`~gptembed.positions.PAD_POSITION`. :func:`describe_padded_batch` says the
    same in words.

    >>> fig = plot_padded_batch([[9, 9, 5, 7], [4, 6, 5, 7]], [[0, 0, 1, 1], [1, 1, 1, 1]])
    >>> fig.axes[0].get_images()[2].get_array().data.tolist()  # the position ids
    [[0, 0, 0, 1], [0, 1, 2, 3]]

    Args:
        token_ids: ``(B, T)`` ids ``>= 0``, at most 8 sequences of
            :data:`DIAGRAM_MAX_COLUMNS` slots.
        attention_mask: ``(B, T)`` of 0/1 integers or bools, 1 for a real token.
        ax: axes to draw on (a blank canvas); by default a new figure :data:`DIAGRAM_WIDTH`
            wide at most, as tall as the batch needs.

    Returns:
        The figure. Its three images, labelled ``"token ids"``, ``"attention mask"`` and
        ``"position ids"``, are masked arrays of those numbers, padding masked.

    Raises:
        TypeError: ids that are not integers, or a mask that is not integers or bools.
        ValueError: ids that are not ``(B, T)`` or are negative, a mask that is not 0/1 or not
            of the ids' shape, or a batch larger than a diagram draws.
    """
    batch = _padded_batch(token_ids, attention_mask)
    n_seq, n_slots = batch.ids.shape
    digits = max(len(str(int(batch.ids.max()))), 2)
    label_w, margin = _text_width("sequence 0") + 0.1, 0.12
    cell_w = min(0.55, (DIAGRAM_WIDTH - 2 * margin - label_w) / n_slots)
    cell_w = max(cell_w, _text_width("0" * digits) + 0.06)
    cell_h, title_h = 0.3, 0.62
    x0 = margin + label_w
    grids = [
        ("token ids", batch.ids, "padding greyed", "#ffffff"),
        ("attention mask", batch.real.astype(np.intp), "1: a real token, 0: padding", "#d5ede4"),
        (
            "position ids",
            batch.positions,
            f"position_ids_from_mask(mask); padding at PAD_POSITION = {PAD_POSITION}",
            "#fbe6bd",
        ),
    ]
    widest = max(n_slots * cell_w, *(_text_width(note) for _, _, note, _ in grids))
    size = (x0 + widest + margin, 3 * (title_h + n_seq * cell_h) + 0.15)
    fig, ax = canvas(size, ax)
    padding = ~batch.real
    top = 0.0
    for name, values, note, tint in grids:
        top += title_h
        put_text(ax, x0, top - 0.3, name, va="bottom", fontsize=10)
        put_text(ax, x0, top - 0.28, note, va="top", color=_DARK_GREY)
        width, height = n_slots * cell_w, n_seq * cell_h
        under = Rectangle((x0, top), width, height, color=GREY, lw=0, zorder=-1)
        ax.add_patch(under)  # shows through the padding, masked in the image
        cells(
            ax, np.ma.masked_where(padding, values), x0, top, (cell_w, cell_h),
            cmap=ListedColormap([tint]), norm=Normalize(0, 1), label=name,
        )  # fmt: skip
        for b in range(n_seq):
            y = top + (b + 0.5) * cell_h
            put_text(ax, x0 - 0.06, y, f"sequence {b}", ha="right", va="center")
            for t in range(n_slots):
                put_text(
                    ax, x0 + (t + 0.5) * cell_w, y, str(int(values[b, t])), ha="center",
                    va="center", color=_DARK_GREY if padding[b, t] else "black",
                )  # fmt: skip
        top += height
    return fig


def describe_padded_batch(token_ids: ArrayLike, attention_mask: ArrayLike) -> str:
    """:func:`plot_padded_batch` in words, one paragraph for its alt text (same arguments).

    >>> print(describe_padded_batch([[9, 9, 5, 7], [4, 6, 5, 7]], [[0, 0, 1, 1], [1, 1, 1, 1]]))
    ... # doctest: +NORMALIZE_WHITESPACE
    Three aligned grids of numbers for a batch of 2 sequences of 4 slots, a row per sequence:
    the token ids, with padding greyed; the attention mask, 1 for a real token and 0 for
    padding; and the position ids from position_ids_from_mask, which count 0, 1, 2 and on from
    each sequence's first real token, so a padded sequence reads the same positions as it would
    unpadded, and give every padded slot position 0 (PAD_POSITION), which the mask hides.
    Sequence 0 is left-padded with 2 slots: its positions read 0, 0, 0, 1. Sequence 1 has no
    padding: its positions read 0, 1, 2, 3.

    Raises:
        TypeError, ValueError: as :func:`plot_padded_batch`.
    """
    batch = _padded_batch(token_ids, attention_mask)
    n_seq, n_slots = batch.ids.shape
    text = (
        f"Three aligned grids of numbers for a batch of {_plural(n_seq, 'sequence')} of "
        f"{_plural(n_slots, 'slot')}, a row per sequence: the token ids, with padding greyed; "
        "the attention mask, 1 for a real token and 0 for padding; and the position ids from "
        "position_ids_from_mask, which count 0, 1, 2 and on from each sequence's first real "
        "token, so a padded sequence reads the same positions as it would unpadded, and give "
        f"every padded slot position {PAD_POSITION} (PAD_POSITION), which the mask hides."
    )
    for b, (real, positions) in enumerate(zip(batch.real, batch.positions, strict=True)):
        reads = ", ".join(str(int(p)) for p in positions)
        pads = int((~real).sum())
        if pads == 0:
            text += f" Sequence {b} has no padding: its positions read {reads}."
            continue
        if pads == n_slots:
            text += f" Sequence {b} is all padding: its positions read {reads}."
            continue
        n_real = n_slots - pads
        side = (
            "left-padded" if real[pads:].all() else "right-padded" if real[:n_real].all()
            else "padded"
        )  # fmt: skip
        text += f" Sequence {b} is {side} with {_plural(pads, 'slot')}: its positions read {reads}."
    return text
