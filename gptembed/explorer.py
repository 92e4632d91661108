"""What chapter 4's cost explorer shows: a model's costs at a context length, on a grid.

The explorer on the book's page is plain JavaScript that looks values up and shows them; every
value comes from here. :func:`context_costs` computes one setting (a model, a context length, a
number format, a batch size and a kind of attention) from the package's arithmetic, and
:func:`explorer_grid` computes every setting the explorer's controls can reach, as plain data
that the book's build writes next to the page (``_ext/cost_explorer.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from ._checks import check_int
from .attention_cost import (
    attention_scores_bytes,
    flops_per_token,
    kv_cache_bytes,
    softmax_statistics_bytes,
)
from .measure import format_bytes
from .models import MODELS, ModelConfig, check_config, gpt_parameter_count, model_label

GIB = 2**30

ACCELERATORS: Mapping[str, int] = MappingProxyType(
    {
        "V100 16 GB": 16 * GIB,
        "RTX 4090 24 GB": 24 * GIB,
        "A100 40 GB": 40 * GIB,
        "A100/H100 80 GB": 80 * GIB,
    }
)
"""The book's accelerators, smallest first: memory from the vendors' datasheets (NVIDIA Tesla
V100: 16 or 32 GB; GeForce RTX 4090: 24 GB; A100: 40 or 80 GB; H100: 80 GB), in GB drawn as
that many GiB (a program can allocate slightly less in practice)."""

AttentionMode = Literal["eager", "fused", "decode"]


@dataclass(frozen=True)
class ModeText:
    """How the explorer names one kind of attention and what its memory counts.

    Attributes:
        label: its name in the picker.
        held: what one layer holds in place of (or as) its scores, as the result table's
            heading (followed by "one layer" or "all layers").
        note: one or two sentences on what the numbers count.
    """

    label: str
    held: str
    note: str


ATTENTION_MODES: Mapping[AttentionMode, ModeText] = MappingProxyType(
    {
        "eager": ModeText(
            "eager attention",
            "Score matrices",
            "Eager attention stores every head's n \u00d7 n scores, and training keeps every "
            "layer's for the backward pass.",
        ),
        "fused": ModeText(
            "fused (flash-style) kernel",
            "Row statistics (no score matrix)",
            "A fused kernel computes the scores tile by tile and never stores the n \u00d7 n "
            "matrix: for the backward pass it keeps one fp32 number per query row and head. "
            "The arithmetic is the same as eager attention's.",
        ),
        "decode": ModeText(
            "one decoding step with a KV cache",
            "The new token's scores",
            "A decoding step scores one new token against the n cached keys: one row of n "
            "scores per head, one layer at a time, beside the KV cache of every layer.",
        ),
    }
)
"""The three ways to run attention the explorer compares. The fused kernel's row statistics
are :func:`~gptembed.attention_cost.softmax_statistics_bytes`."""

EXPLORER_LENGTHS = tuple(2**p for p in range(8, 21))
"""The context lengths on the explorer's slider: every power of two from 256 to 1,048,576."""
EXPLORER_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
EXPLORER_DTYPES: Mapping[str, int] = MappingProxyType({"fp32": 4, "fp16 or bf16": 2})
"""Number formats the explorer offers, with their bytes per number."""


@dataclass(frozen=True)
class ContextCosts:
    """A model's costs at one context length, batch size, number format and kind of attention.

    Attributes:
        position_params: ``n * d``, the rows a position table needs for a context of ``n``.
        params: all parameters of the model with that position table.
        weight_bytes: ``params`` in the number format.
        scores_layer_bytes: what one layer holds of its attention scores: the ``n x n`` matrices
            (eager), one fp32 number per query row (fused), or one row of ``n`` (decode).
        scores_all_bytes: the same for every layer at once.
        kv_cache_bytes: keys and values of every layer for ``n`` tokens (what decoding keeps).
        kept_bytes: what attention keeps at once: every layer's scores (eager) or row
            statistics (fused), as training keeps them for the backward pass; or the KV cache
            plus one layer's row of scores (decode, which runs the layers one after another).
        attention_share: attention's share of a token's FLOPs, nanoGPT's and PaLM's count.
        attention_share_kaplan: the same by Kaplan et al.'s count.
        holds: the :data:`ACCELERATORS` whose memory holds ``kept_bytes`` (the weights and
            everything else a model needs not counted), smallest first.
    """

    position_params: int
    params: int
    weight_bytes: int
    scores_layer_bytes: int
    scores_all_bytes: int
    kv_cache_bytes: int
    kept_bytes: int
    attention_share: float
    attention_share_kaplan: float
    holds: tuple[str, ...]

    @property
    def position_share(self) -> float:
        """The position table's share of all parameters, ``position_params / params``."""
        return self.position_params / self.params


def context_costs(
    config: ModelConfig,
    seq_len: int,
    *,
    batch_size: int = 1,
    bytes_per_element: int = 4,
    mode: AttentionMode = "eager",
) -> ContextCosts:
    """``config``'s costs at a context of ``seq_len`` tokens (see :class:`ContextCosts`).

    The position table is taken to have ``seq_len`` rows, as a model trained at that length has.

    >>> costs = context_costs(MODELS["gpt2-small"], 1024)
    >>> costs.scores_all_bytes // 2**20, costs.holds[0], f"{costs.attention_share:.1%}"
    (576, 'V100 16 GB', '13.3%')

    Raises:
        TypeError: ``config`` is not a :class:`ModelConfig` (a name of one is refused saying
            to pass ``MODELS[name]``, as :func:`~gptembed.models.check_config`).
        TypeError, ValueError: ``seq_len``, ``batch_size`` or ``bytes_per_element`` is not a
            positive integer, or ``mode`` is not one of :data:`ATTENTION_MODES`.
    """
    config = check_config(config)
    seq_len = check_int("seq_len", seq_len)
    size = check_int("bytes_per_element", bytes_per_element)
    heads, layers, width = config.n_heads, config.n_layers, config.embed_dim
    if mode == "eager":
        layer = attention_scores_bytes(seq_len, heads, 1, batch_size, size)
    elif mode == "fused":
        layer = softmax_statistics_bytes(seq_len, heads, 1, batch_size)
    elif mode == "decode":
        layer = attention_scores_bytes(1, heads, 1, batch_size, size) * seq_len  # one 1 x n row
    else:
        raise ValueError(
            f"mode must be one of {', '.join(map(repr, ATTENTION_MODES))}, got {mode!r}"
        )
    cache = kv_cache_bytes(seq_len, layers, width, batch_size, size)
    kept = cache + layer if mode == "decode" else layers * layer
    params = gpt_parameter_count(config.vocab_size, seq_len, width, layers)
    return ContextCosts(
        position_params=seq_len * width,
        params=params,
        weight_bytes=params * size,
        scores_layer_bytes=layer,
        scores_all_bytes=layers * layer,
        kv_cache_bytes=cache,
        kept_bytes=kept,
        attention_share=flops_per_token(config, seq_len).attention_share,
        attention_share_kaplan=flops_per_token(
            config, seq_len, convention="kaplan"
        ).attention_share,
        holds=tuple(name for name, memory in ACCELERATORS.items() if kept <= memory),
    )


def format_share(share: float) -> str:
    """A fraction as a percentage with three significant digits, never in scientific notation.

    >>> format_share(0.8667), format_share(0.0000176), format_share(1.0)
    ('86.7%', '0.00176%', '100%')
    """
    text = np.format_float_positional(100 * share, precision=3, fractional=False, trim="-")
    return f"{text}%"


class _Values:
    """Every distinct value the explorer shows, once, with the text it shows it as."""

    def __init__(self) -> None:
        self.table: list[list[Any]] = []
        self.index: dict[str, int] = {}

    def add(self, exact: Any, shown: str) -> int:
        """The index of ``[exact, shown]`` in the table (added if new)."""
        key = f"{exact!r}|{shown}"
        if key not in self.index:
            self.index[key] = len(self.table)
            self.table.append([exact, shown])
        return self.index[key]

    def count(self, n: int) -> int:
        """An integer, kept exact as a string (JavaScript's numbers stop at 2**53)."""
        return self.add(str(n), f"{n:,}")

    def nbytes(self, n_bytes: int) -> int:
        """A size in bytes, exact as a string, shown by :func:`~gptembed.measure.format_bytes`."""
        return self.add(str(n_bytes), format_bytes(n_bytes))


def explorer_grid() -> dict[str, Any]:
    """Every value the explorer can show, as JSON-ready data the page only looks up.

    ``values`` holds each distinct value once as ``[exact, shown]``: bytes and counts as exact
    integers written as strings, shares as floats, and the accelerators that hold a setting as
    a list of names; ``shown`` is the text the page shows (:func:`~gptembed.measure.format_bytes`,
    :func:`format_share`). The settings index into it by the position of each control's choice
    (``models``, ``lengths``, ``dtypes``, ``batch_sizes``, ``modes``):

    - ``by_length[model][length]``: ``[position_params, params, position_share,
      attention_share, attention_share_kaplan]``, which depend on nothing else;
    - ``by_setting[model][length][dtype][batch][mode]``: ``[weight_bytes, kv_cache_bytes,
      scores_layer_bytes, scores_all_bytes, kept_bytes, holds]``.
    """
    values = _Values()
    by_length, by_setting = [], []
    for config in MODELS.values():
        model_lengths, model_settings = [], []
        for n in EXPLORER_LENGTHS:
            base = context_costs(config, n)
            model_lengths.append(
                [
                    values.count(base.position_params),
                    values.count(base.params),
                    values.add(base.position_share, format_share(base.position_share)),
                    values.add(base.attention_share, f"{base.attention_share:.1%}"),
                    values.add(base.attention_share_kaplan, f"{base.attention_share_kaplan:.1%}"),
                ]
            )
            dtypes = []
            for size in EXPLORER_DTYPES.values():
                batches = []
                for batch in EXPLORER_BATCH_SIZES:
                    modes = []
                    for mode in ATTENTION_MODES:
                        costs = context_costs(
                            config, n, batch_size=batch, bytes_per_element=size, mode=mode
                        )
                        modes.append(
                            [
                                values.nbytes(costs.weight_bytes),
                                values.nbytes(costs.kv_cache_bytes),
                                values.nbytes(costs.scores_layer_bytes),
                                values.nbytes(costs.scores_all_bytes),
                                values.nbytes(costs.kept_bytes),
                                values.add(list(costs.holds), ", ".join(costs.holds) or "none"),
                            ]
                        )
                    batches.append(modes)
                dtypes.append(batches)
            model_settings.append(dtypes)
        by_length.append(model_lengths)
        by_setting.append(model_settings)
    return {
        "models": [
            {
                "key": key,
                "label": model_label(key),
                "sizes": f"{c.n_layers} layers of {c.n_heads} heads, width {c.embed_dim:,}",
            }
            for key, c in MODELS.items()
        ],
        "lengths": [{"tokens": n, "label": f"{n:,} tokens"} for n in EXPLORER_LENGTHS],
        "dtypes": [{"label": name, "bytes": size} for name, size in EXPLORER_DTYPES.items()],
        "batch_sizes": list(EXPLORER_BATCH_SIZES),
        "modes": [
            {"key": key, "label": text.label, "held": text.held, "note": text.note}
            for key, text in ATTENTION_MODES.items()
        ],
        "accelerators": list(ACCELERATORS),
        "values": values.table,
        "by_length": by_length,
        "by_setting": by_setting,
    }
