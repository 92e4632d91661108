"""What chapter 4's cost explorer shows: a model's costs at any context length, and turns.

The explorer on the book's page is plain JavaScript (``_ext/cost_explorer.js``) that computes
each value it shows with this module's formulas, mirrored line for line in exact integers, and
the browser tests hold it to them at random settings. :func:`context_costs` computes one setting
(a model, a context length, a number format, a batch size, a kind of attention and the options
of :func:`_layer_windows` and grouped-query attention); :func:`explorer_values` is every value the
page shows for it, exact and as text; :func:`turning_points` finds the lengths where the costs
pass the weights; and :func:`explorer_data` is what the page is given: the controls' choices,
the models' sizes and the constants of the formulas, which the book's build writes next to the
page (``_ext/cost_explorer.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from ._checks import check_bool, check_float, check_int
from .attention_cost import (
    ACTIVATION_WIDTHS,
    MODEL_STATE_BYTES_PER_PARAMETER,
    FlopsPerToken,
    activation_bytes,
    attention_scores_bytes,
    flops_per_token,
    kv_cache_bytes,
    kv_width,
    logits_bytes,
    softmax_statistics_bytes,
)
from .measure import format_bytes
from .models import MODELS, ModelConfig, check_config, gpt_parameter_count, model_label

_GIB = 2**30

ACCELERATORS: Mapping[str, int] = MappingProxyType(
    {
        "V100 16 GB": 16 * _GIB,
        "RTX 4090 24 GB": 24 * _GIB,
        "A100 40 GB": 40 * _GIB,
        "A100/H100 80 GB": 80 * _GIB,
    }
)
"""The book's accelerators, smallest first: memory from the vendors' datasheets (NVIDIA Tesla
V100: 16 or 32 GB; GeForce RTX 4090: 24 GB; A100: 40 or 80 GB; H100: 80 GB), in GB drawn as
that many GiB (a program can allocate slightly less in practice)."""

AttentionMode = Literal["eager", "fused", "decode"]


@dataclass(frozen=True)
class _ModeText:
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


_ATTENTION_MODES: Mapping[AttentionMode, _ModeText] = MappingProxyType(
    {
        "eager": _ModeText(
            "eager attention",
            "Score matrices",
            "Eager attention stores every head's n \u00d7 n scores, and a training step keeps "
            "every layer's for the backward pass, beside the layers' other activations.",
        ),
        "fused": _ModeText(
            "fused (flash-style) kernel",
            "Row statistics (no score matrix)",
            "A fused kernel computes the scores tile by tile and never stores the n \u00d7 n "
            "matrix: for the backward pass it keeps one fp32 number per query row and head. "
            "Its backward pass still needs each layer's queries, keys, values and output, so "
            "the activations are the same as eager attention's, and so is the arithmetic.",
        ),
        "decode": _ModeText(
            "one decoding step with a KV cache",
            "The new token's scores",
            "A decoding step scores one new token against the n cached keys: one row of n "
            "scores per head, one layer at a time, beside the KV cache of every layer and the "
            "weights. There is no backward pass, so no activations are kept.",
        ),
    }
)
"""The three ways to run attention the explorer compares. The fused kernel's row statistics
are :func:`~gptembed.attention_cost.softmax_statistics_bytes`."""

MEMORY_RULE = (
    "An accelerator holds a setting if its memory holds everything the step keeps at once. "
    "A training step (eager or fused) keeps the weights, their gradients and Adam's two "
    "moments, 16 bytes a parameter in fp32 and in mixed precision alike (Rajbhandari et al. "
    '2020, "ZeRO", arXiv:1910.02054, section 3.1); each layer\'s activations for the backward '
    "pass, 16 numbers of the model's width a token (Korthikanti et al. 2022, arXiv:2205.05198, "
    "section 4.1, without dropout: the layer norms' inputs, the queries, keys and values, "
    "attention's output, the MLP's input and its hidden layer before and after GELU); the "
    "logits, one number per vocabulary entry a token; and what attention keeps. A decoding "
    "step keeps the weights, the KV cache and one layer's new row of scores. Nothing else "
    "is counted (no dropout masks, buffers or framework), so the total is a floor."
)
"""The rule by which :attr:`ContextCosts.holds` judges a setting, as the explorer states it."""

_EXPLORER_MAX_TOKENS = 2**20
"""The longest context the explorer takes (typed, or on its slider of powers of two from 1)."""
_EXPLORER_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
_EXPLORER_DTYPES: Mapping[str, int] = MappingProxyType({"fp32": 4, "fp16 or bf16": 2})
"""Number formats the explorer offers, with their bytes per number."""
_EXPLORER_WINDOWS = (1_024, 4_096, 16_384)
"""The sliding windows the explorer offers; Mistral 7B's is 4,096 tokens."""

_GPT3_BAND = 256
"""The keys a query meets in GPT-3's locally banded layers, as this book assumes it: Brown et
al. 2020 (arXiv:2005.14165, section 2.1) alternate dense and banded layers "similar to the
Sparse Transformer" and do not publish the band's width (chapter 4 takes 256 too)."""

OPTION_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "banded": (
            "GPT-3 alternates dense layers with locally banded sparse attention layers "
            '(Brown et al. 2020, "Language Models are Few-Shot Learners", arXiv:2005.14165, '
            f"section 2.1). The band's width is not published: the explorer uses {_GPT3_BAND} "
            "keys, this chapter's assumption, and starts with a dense layer."
        ),
        "kv_heads": (
            'Grouped-query attention (Ainslie et al. 2023, "GQA", arXiv:2305.13245) shares '
            "one key head and one value head among each group of query heads: the KV cache, "
            "the key and value projections and their activations shrink with the groups; one "
            "group is multi-query attention."
        ),
        "window": (
            "A sliding window lets each token attend to the last W tokens only, in every "
            "layer, so the KV cache is a rolling buffer of W tokens and the scores are "
            'n \u00d7 W (Mistral 7B: W = 4,096; Jiang et al. 2023, "Mistral 7B", '
            "arXiv:2310.06825, section 2)."
        ),
    }
)
"""Where each option of the explorer comes from, as the explorer says it."""


def _layer_windows(
    config: ModelConfig, *, window: int | None = None, banded: bool = False
) -> tuple[tuple[int | None, int], ...]:
    """The kinds of layer of ``config``: ``(keys a query meets at most, how many layers)``.

    ``None`` is a dense layer, whose queries meet every earlier key. ``window`` limits every
    layer to the last ``window`` keys (a sliding window); ``banded`` makes every second layer,
    from the second, a locally banded one of :data:`_GPT3_BAND` keys (within the window, if
    there is one), as in GPT-3.

    >>> _layer_windows(MODELS["gpt3-175b"], banded=True)
    ((None, 48), (256, 48))

    Raises:
        TypeError: ``config`` is not a :class:`~gptembed.models.ModelConfig`.
        TypeError, ValueError: ``window`` is not a positive integer, or ``banded`` not a bool.
    """
    config = check_config(config)
    layers = config.n_layers
    if window is not None:
        window = check_int("window", window)
    if not check_bool("banded", banded):
        return ((window, layers),)
    band = _GPT3_BAND if window is None else min(_GPT3_BAND, window)
    return ((window, layers - layers // 2), (band, layers // 2))


def _keys(seq_len: int, window: int | None) -> int:
    return seq_len if window is None else min(seq_len, window)


@dataclass(frozen=True)
class ContextCosts:
    """A model's costs at one context length, batch size, number format and kind of attention.

    Attributes:
        position_params: ``n * d``, the rows a position table needs for a context of ``n``.
        params: all parameters of the model with that position table.
        weight_bytes: ``params`` in the number format.
        scores_layer_bytes: what one layer holds of its attention scores: the ``n x n`` matrices
            (eager), one fp32 number per query row (fused), or one row of ``n`` (decode); of a
            dense layer, the largest, where layers differ.
        scores_all_bytes: the same for every layer at once.
        kv_cache_bytes: keys and values of every layer for ``n`` tokens (what decoding keeps).
        activations_layer_bytes: what one layer of a training step keeps for the backward pass
            besides the scores (:func:`~gptembed.attention_cost.activation_bytes`); 0 when
            decoding.
        activations_all_bytes: the same for every layer.
        logits_bytes: the output layer's logits that the loss keeps; 0 when decoding.
        state_bytes: what the parameters take: weights, gradients and Adam's moments in a
            training step (``16 * params``), the weights alone when decoding.
        kept_bytes: what attention keeps at once: every layer's scores (eager) or row
            statistics (fused), as training keeps them for the backward pass; or the KV cache
            plus one layer's row of scores (decode, which runs the layers one after another).
        step_bytes: everything the step keeps at once, by :data:`MEMORY_RULE`: ``state_bytes +
            activations_all_bytes + logits_bytes + kept_bytes``.
        attention_share: attention's share of a token's FLOPs, nanoGPT's and PaLM's count.
        attention_share_kaplan: the same by Kaplan et al.'s count.
        holds: the :data:`ACCELERATORS` whose memory holds ``step_bytes``, smallest first.
    """

    position_params: int
    params: int
    weight_bytes: int
    scores_layer_bytes: int
    scores_all_bytes: int
    kv_cache_bytes: int
    activations_layer_bytes: int
    activations_all_bytes: int
    logits_bytes: int
    state_bytes: int
    kept_bytes: int
    step_bytes: int
    attention_share: float
    attention_share_kaplan: float
    holds: tuple[str, ...]

    @property
    def position_share(self) -> float:
        """The position table's share of all parameters, ``position_params / params``."""
        return self.position_params / self.params


def _parameters(config: ModelConfig, seq_len: int, kv_heads: int | None) -> int:
    """All parameters with a table of ``seq_len`` rows and ``kv_heads`` key and value heads."""
    return gpt_parameter_count(
        config.vocab_size,
        seq_len,
        config.embed_dim,
        config.n_layers,
        kv_width=kv_width(config, kv_heads),
    )


def _scores_bytes(
    config: ModelConfig,
    seq_len: int,
    kinds: tuple[tuple[int | None, int], ...],
    batch: int,
    size: int,
) -> int:
    """Eager attention's scores in every layer, each kind of layer with its window."""
    return sum(
        attention_scores_bytes(seq_len, config.n_heads, count, batch, size, window=window)
        for window, count in kinds
    )


def _kv_bytes(
    config: ModelConfig,
    seq_len: int,
    kinds: tuple[tuple[int | None, int], ...],
    batch: int,
    size: int,
    kv_heads: int | None,
) -> int:
    """The KV cache of every layer: a layer that meets at most ``w`` keys keeps ``w`` tokens."""
    width = kv_width(config, kv_heads)
    return sum(
        kv_cache_bytes(_keys(seq_len, window), count, width, batch, size) for window, count in kinds
    )


def _flops(
    config: ModelConfig,
    seq_len: int,
    kinds: tuple[tuple[int | None, int], ...],
    convention: Literal["palm", "kaplan"],
    kv_heads: int | None,
) -> FlopsPerToken:
    """:func:`~gptembed.attention_cost.flops_per_token` added up over the kinds of layer."""
    layers = config.n_layers
    each = [
        (flops_per_token(config, seq_len, convention=convention, window=w, kv_heads=kv_heads), k)
        for w, k in kinds
    ]
    attention = sum(count * (flops.attention // layers) for flops, count in each)
    return FlopsPerToken(weights=each[0][0].weights, attention=attention)


def context_costs(
    config: ModelConfig,
    seq_len: int,
    *,
    batch_size: int = 1,
    bytes_per_element: int = 4,
    mode: AttentionMode = "eager",
    kv_heads: int | None = None,
    window: int | None = None,
    banded: bool = False,
) -> ContextCosts:
    """``config``'s costs at a context of ``seq_len`` tokens (see :class:`ContextCosts`).

    The position table is taken to have ``seq_len`` rows, as a model trained at that length has.
    ``kv_heads`` groups of key and value heads (grouped-query attention:
    :func:`~gptembed.attention_cost.kv_width`), a sliding ``window`` and GPT-3's ``banded``
    layers (:func:`_layer_windows`) are the explorer's options; none of them by default.

    >>> costs = context_costs(MODELS["gpt2-small"], 1024)
    >>> costs.scores_all_bytes // 2**20, format_bytes(costs.step_bytes), costs.holds[0]
    (576, '3.17 GiB', 'V100 16 GB')

    Raises:
        TypeError: ``config`` is not a :class:`ModelConfig` (a name of one is refused saying
            to pass ``MODELS[name]``, as :func:`~gptembed.models.check_config`).
        TypeError, ValueError: ``seq_len``, ``batch_size`` or ``bytes_per_element`` is not a
            positive integer, ``mode`` is not one of :data:`_ATTENTION_MODES`, ``kv_heads`` does
            not divide the heads, ``window`` is not positive or ``banded`` not a bool.
    """
    config = check_config(config)
    seq_len = check_int("seq_len", seq_len)
    batch = check_int("batch_size", batch_size)
    size = check_int("bytes_per_element", bytes_per_element)
    if mode not in _ATTENTION_MODES:
        raise ValueError(
            f"mode must be one of {', '.join(map(repr, _ATTENTION_MODES))}, got {mode!r}"
        )
    kinds = _layer_windows(config, window=window, banded=banded)
    heads, layers, width = config.n_heads, config.n_layers, config.embed_dim
    if mode == "eager":
        layer = attention_scores_bytes(seq_len, heads, 1, batch, size, window=kinds[0][0])
        scores = _scores_bytes(config, seq_len, kinds, batch, size)
    elif mode == "fused":
        layer = softmax_statistics_bytes(seq_len, heads, 1, batch)
        scores = layers * layer
    else:  # decode: one 1 x keys row per head, in each layer
        rows = [
            (attention_scores_bytes(1, heads, 1, batch, size, window=w), w, k) for w, k in kinds
        ]
        layer = max(row * _keys(seq_len, w) for row, w, _ in rows)
        scores = sum(row * _keys(seq_len, w) * k for row, w, k in rows)
    cache = _kv_bytes(config, seq_len, kinds, batch, size, kv_heads)
    params = _parameters(config, seq_len, kv_heads)
    if mode == "decode":
        act_layer = logits = 0
        state = params * size
        kept = cache + layer
    else:
        act_layer = activation_bytes(
            seq_len, width, 1, batch, size, kv_width=kv_width(config, kv_heads)
        )
        logits = logits_bytes(seq_len, config.vocab_size, batch, size)
        state = params * MODEL_STATE_BYTES_PER_PARAMETER
        kept = scores
    step = state + layers * act_layer + logits + kept
    return ContextCosts(
        position_params=seq_len * width,
        params=params,
        weight_bytes=params * size,
        scores_layer_bytes=layer,
        scores_all_bytes=scores,
        kv_cache_bytes=cache,
        activations_layer_bytes=act_layer,
        activations_all_bytes=layers * act_layer,
        logits_bytes=logits,
        state_bytes=state,
        kept_bytes=kept,
        step_bytes=step,
        attention_share=_flops(config, seq_len, kinds, "palm", kv_heads).attention_share,
        attention_share_kaplan=_flops(config, seq_len, kinds, "kaplan", kv_heads).attention_share,
        holds=tuple(name for name, memory in ACCELERATORS.items() if step <= memory),
    )


@dataclass(frozen=True)
class TurningPoints:
    """The shortest contexts at which one cost passes another (``None``: at no length).

    Attributes:
        position: the position table has more parameters than the rest of the model together
            (its share passes one half); the same in every number format and batch.
        scores: eager attention's scores in every layer take more memory than the weights.
        kv_cache: the KV cache takes more memory than the weights.

    The weights are those of the model with a table of ``n`` rows, as :func:`context_costs`
    counts them; both sides are in one number format, which cancels.
    """

    position: int
    scores: int | None
    kv_cache: int | None


def _first_passing(excess: Callable[[int], int], up_to: int | None) -> int | None:
    """The smallest ``n >= 1`` with ``excess(n) > 0``, where ``excess`` does not fall until
    ``up_to`` (``None``: it never falls, and grows without bound if it ever rises)."""
    if up_to is None:
        high = 1
        while excess(high) <= 0:
            high *= 2  # excess rises for ever: some power of two passes
    else:
        high = up_to
        if excess(high) <= 0:
            return None
    low = 0  # excess(low) <= 0 (or low = 0), excess(high) > 0
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if excess(middle) > 0 else (middle, high)
    return high


def _peak(excess: Callable[[int], int], up_to: int) -> int:
    """Where a concave ``excess`` is largest in ``[1, up_to]`` (the first such ``n``)."""
    low, high = 1, up_to
    while low < high:  # excess(n + 1) - excess(n) does not rise: find where it stops > 0
        middle = (low + high) // 2
        low, high = (middle + 1, high) if excess(middle + 1) > excess(middle) else (low, middle)
    return low


def turning_points(
    config: ModelConfig,
    batch_size: int = 1,
    *,
    kv_heads: int | None = None,
    window: int | None = None,
    banded: bool = False,
) -> TurningPoints:
    """Where the costs pass the weights, exactly (see :class:`TurningPoints`).

    With ``P(n) = R + n d`` parameters (``R`` the rest of the model, constant in ``n``): the
    position table passes the rest when ``n d > R``, so at ``n = R // d + 1``. The scores
    ``S(n)`` (a sum of ``b h n min(n, w)`` over the layers) pass the weights at the first ``n``
    with ``S(n) > P(n)``: ``S(n) / n`` never falls and ``P(n) / n`` always does, so once past,
    they stay past, and a binary search finds the point. The KV cache ``C(n)`` (a sum of ``2 b k
    min(n, w)``) less ``P(n)`` is concave: with no window it rises or falls for ever; with a
    window it rises to a peak at one of the windows, and the point, if any, lies before it.

    >>> turning_points(MODELS["gpt2-small"])
    TurningPoints(position=161008, scores=930, kv_cache=7001)

    Raises:
        TypeError, ValueError: as :func:`context_costs`.
    """
    config = check_config(config)
    batch = check_int("batch_size", batch_size)
    kinds = _layer_windows(config, window=window, banded=banded)
    d = config.embed_dim
    rest = _parameters(config, 1, kv_heads) - d

    def scores_excess(n: int) -> int:
        return _scores_bytes(config, n, kinds, batch, 1) - (rest + n * d)

    def cache_excess(n: int) -> int:
        return _kv_bytes(config, n, kinds, batch, 1, kv_heads) - (rest + n * d)

    windows = [w for w, _ in kinds if w is not None]
    dense = sum(count for w, count in kinds if w is None)
    # Past the widest window each finite layer's cost grows by b h w (scores) or stops (cache).
    scores_tail = batch * config.n_heads * sum(w * c for w, c in kinds if w is not None)
    if dense or scores_tail > d:
        scores: int | None = _first_passing(scores_excess, None)
    else:
        scores = None  # S(n) <= scores_tail * n <= d n < P(n) at every n
    width = kv_width(config, kv_heads)
    if 2 * batch * width * dense > d:  # the cache outgrows the weights' n d for ever
        cache = _first_passing(cache_excess, None)
    elif windows:
        cache = _first_passing(cache_excess, _peak(cache_excess, max(windows)))
    else:
        cache = None  # both grow linearly, the cache no faster: never past
    return TurningPoints(position=rest // d + 1, scores=scores, kv_cache=cache)


def format_share(share: float) -> str:
    """A fraction as a percentage with three significant digits, never in scientific notation.

    >>> format_share(0.8667), format_share(0.0000176), format_share(1.0)
    ('86.7%', '0.00176%', '100%')

    Raises:
        TypeError: ``share`` is not a real number (a bool, a string).
        ValueError: ``share`` is NaN or outside ``[0, 1]``.
    """
    share = check_float("share", share, minimum=0, maximum=1) + 0.0  # -0.0 + 0.0 is 0.0
    text = np.format_float_positional(100 * share, precision=3, fractional=False, trim="-")
    return f"{text}%"


def explorer_values(costs: ContextCosts) -> dict[str, tuple[Any, str]]:
    """Every value the explorer shows for ``costs``: ``{slot: (exact, text)}``.

    Counts and bytes are exact integers, shown with thousands separators or by
    :func:`~gptembed.measure.format_bytes`; shares are floats, shown by :func:`format_share` or
    to one decimal place; ``holds`` is a list of names, shown joined (or ``"none"``). The page
    writes the exact value of each into its element's ``value`` attribute.
    """
    in_bytes = {
        "weights": costs.weight_bytes,
        "scores-layer": costs.scores_layer_bytes,
        "scores-all": costs.scores_all_bytes,
        "kv-cache": costs.kv_cache_bytes,
        "activations-layer": costs.activations_layer_bytes,
        "activations-all": costs.activations_all_bytes,
        "logits": costs.logits_bytes,
        "states": costs.state_bytes,
        "kept": costs.kept_bytes,
        "total": costs.step_bytes,
    }
    return {
        "position-params": (costs.position_params, f"{costs.position_params:,}"),
        "params": (costs.params, f"{costs.params:,}"),
        "position-share": (costs.position_share, format_share(costs.position_share)),
        **{slot: (value, format_bytes(value)) for slot, value in in_bytes.items()},
        "holds": (list(costs.holds), ", ".join(costs.holds) or "none"),
        "share": (costs.attention_share, f"{costs.attention_share:.1%}"),
        "share-kaplan": (costs.attention_share_kaplan, f"{costs.attention_share_kaplan:.1%}"),
    }


def explorer_data() -> dict[str, Any]:
    """What the explorer's page is given, as JSON-ready data (the build writes it as a script).

    The choices of its controls (``models`` with their sizes, ``dtypes``, ``batch_sizes``,
    ``modes`` with their texts, ``windows``), the longest context, the constants of the formulas
    (``band``: :data:`_GPT3_BAND`; ``activations``: how many numbers of width ``d`` and of width
    ``k`` :data:`~gptembed.attention_cost.ACTIVATION_WIDTHS` keeps a token;
    ``state_bytes_per_parameter``), the ``accelerators`` with their bytes, and ``units``, the
    binary units of :func:`~gptembed.measure.format_bytes`. Byte counts that may pass 2**53 are
    strings: JavaScript's numbers are exact only that far, and the page computes in BigInt.
    """
    activations = {"d": 0, "k": 0}
    for _, count, width in ACTIVATION_WIDTHS:
        activations[width] += count
    return {
        "models": [
            {
                "key": key,
                "label": model_label(key),
                "sizes": f"{c.n_layers} layers of {c.n_heads} heads, width {c.embed_dim:,}",
                "vocab_size": c.vocab_size,
                "embed_dim": c.embed_dim,
                "n_layers": c.n_layers,
                "n_heads": c.n_heads,
            }
            for key, c in MODELS.items()
        ],
        "max_tokens": _EXPLORER_MAX_TOKENS,
        "dtypes": [
            {"key": name.split()[0], "label": name, "bytes": size}
            for name, size in _EXPLORER_DTYPES.items()
        ],
        "batch_sizes": list(_EXPLORER_BATCH_SIZES),
        "modes": [
            {"key": key, "label": text.label, "held": text.held, "note": text.note}
            for key, text in _ATTENTION_MODES.items()
        ],
        "windows": list(_EXPLORER_WINDOWS),
        "band": _GPT3_BAND,
        "activations": activations,
        "state_bytes_per_parameter": MODEL_STATE_BYTES_PER_PARAMETER,
        "accelerators": [{"name": name, "bytes": str(size)} for name, size in ACCELERATORS.items()],
        "units": [format_bytes(1024**power).split()[1] for power in range(6)],
    }
