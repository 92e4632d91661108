"""Published GPT-2 and GPT-3 sizes, and exact parameter arithmetic for them.

Every count here is integer arithmetic on the sizes, so it can be checked to the last digit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ._checks import check_int

_GPT2_SOURCE = "openai/gpt-2, src/model.py default hparams and the four released model configs"
_GPT3_SOURCE = "Brown et al., 'Language Models are Few-Shot Learners', arXiv:2005.14165, Table 2.1"


@dataclass(frozen=True)
class ParameterCounts:
    """Parameters of a token-plus-position embedding layer.

    Attributes:
        token: ``vocab_size * embed_dim``, the token table.
        position: ``max_seq_len * embed_dim``, the position table.
        total: ``token + position``.
    """

    token: int
    position: int
    total: int

    def __post_init__(self) -> None:
        token = check_int("token", self.token)
        position = check_int("position", self.position)
        if self.total != token + position:
            raise ValueError(
                f"total must be token + position = {token + position:,}, got {self.total!r}"
            )

    @property
    def position_share(self) -> float:
        """Fraction of the layer's parameters in the position table, ``position / total``."""
        return self.position / self.total


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of one published model that matter for its input embeddings and attention.

    Sizes are stored as plain Python ints whatever integer type they arrive as (numpy's int32
    would overflow silently in the parameter arithmetic).

    Attributes:
        vocab_size: rows of the token table (GPT-2's BPE: 50,257).
        max_seq_len: rows of the position table, the context length ``n_ctx``.
        embed_dim: width of both tables, ``d_model``.
        n_layers: transformer blocks.
        n_heads: attention heads per block; they split ``embed_dim`` into equal widths.
        source: where the numbers come from.
        note: how an ambiguous or misprinted published number was read (empty if none was).

    Raises:
        TypeError, ValueError: a size is not a positive integer, ``n_heads`` does not divide
            ``embed_dim``, or ``source`` or ``note`` is not a string.
    """

    vocab_size: int
    max_seq_len: int
    embed_dim: int
    n_layers: int
    n_heads: int
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_seq_len", "embed_dim", "n_layers", "n_heads"):
            object.__setattr__(self, name, check_int(name, getattr(self, name)))
        for name in ("source", "note"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(
                    f"{name} must be a string, got {value!r} of type {type(value).__name__}"
                )
        if self.embed_dim % self.n_heads:
            raise ValueError(
                f"n_heads {self.n_heads} must divide embed_dim {self.embed_dim}: a head width "
                f"of {self.embed_dim / self.n_heads:.2f} is not whole"
            )

    @property
    def head_dim(self) -> int:
        """Width of one attention head, ``embed_dim // n_heads`` (whole: checked when built)."""
        return self.embed_dim // self.n_heads


def embedding_parameter_counts(
    vocab_size: int, max_seq_len: int, embed_dim: int
) -> ParameterCounts:
    """Exact parameter counts of the token and position tables.

    >>> embedding_parameter_counts(50_257, 1_024, 768).total
    39383808
    """
    vocab_size = check_int("vocab_size", vocab_size)
    max_seq_len = check_int("max_seq_len", max_seq_len)
    embed_dim = check_int("embed_dim", embed_dim)
    token = vocab_size * embed_dim
    position = max_seq_len * embed_dim
    return ParameterCounts(token=token, position=position, total=token + position)


def check_config(config: object) -> ModelConfig:
    """Return ``config`` if it is a :class:`ModelConfig`; a name of one is refused, saying so.

    Raises:
        TypeError: anything else; for a key of :data:`MODELS`, the message says to pass
            ``MODELS[key]``.
    """
    if isinstance(config, ModelConfig):
        return config
    if isinstance(config, str) and config in MODELS:
        raise TypeError(
            f"config must be a ModelConfig: pass MODELS[{config!r}], not the name {config!r}"
        )
    keys = f" (MODELS' keys: {', '.join(MODELS)})" if isinstance(config, str) else ""
    raise TypeError(
        "config must be a ModelConfig such as MODELS['gpt2-small'], got "
        f"{config!r} of type {type(config).__name__}{keys}"
    )


def config_embedding_counts(config: ModelConfig) -> ParameterCounts:
    """:func:`embedding_parameter_counts` for a :class:`ModelConfig`.

    Raises:
        TypeError: as :func:`check_config`.
    """
    config = check_config(config)
    return embedding_parameter_counts(config.vocab_size, config.max_seq_len, config.embed_dim)


def gpt_parameter_count(
    vocab_size: int,
    max_seq_len: int,
    embed_dim: int,
    n_layers: int,
    attention_width: int | None = None,
    *,
    kv_width: int | None = None,
) -> int:
    """All parameters of a GPT-2-architecture model with these sizes (output head tied to wte).

    Per block, with ``d = embed_dim``, ``a = attention_width`` (the query heads' widths added up;
    ``d`` unless given) and ``k = kv_width`` (the key heads' widths added up, and the value
    heads'; ``a`` unless given): two LayerNorms (``4d``), the fused QKV projection, ``d x (a +
    2k)`` weights and ``a + 2k`` biases, the attention output projection, ``a x d`` weights and
    ``d`` biases, and the 4x MLP (``8d^2 + 5d``); so ``2ad + 2kd + a + 2k + 8d^2 + 10d``, which
    is ``12d^2 + 13d`` when ``a = k = d``. Then a final LayerNorm (``2d``) and the two embedding
    tables. The head count does not enter: the heads split the attention width, they do not add
    to it. GPT-3 uses the same blocks (with alternating sparse attention, which adds no
    parameters), so its totals land within 1% of the paper's rounded sizes. Grouped-query
    attention (Ainslie et al. 2023, arXiv:2305.13245) shares each key and value head among a
    group of query heads, so ``k`` is the number of groups times the head width.

    >>> gpt_parameter_count(50_257, 1_024, 768, 12)  # GPT-2 small
    124439808
    >>> gpt_parameter_count(50_257, 2_048, 2_048, 24, attention_width=3_072)  # 24 heads of 128
    1517123584
    >>> gpt_parameter_count(50_257, 1_024, 768, 12, kv_width=64)  # one key and value head
    111446784

    Raises:
        TypeError, ValueError: a size is not a positive integer.
    """
    n_layers = check_int("n_layers", n_layers)
    tables = embedding_parameter_counts(vocab_size, max_seq_len, embed_dim).total
    d = int(embed_dim)  # checked just above, by embedding_parameter_counts
    a = d if attention_width is None else check_int("attention_width", attention_width)
    k = a if kv_width is None else check_int("kv_width", kv_width)
    per_block = 2 * a * d + 2 * k * d + a + 2 * k + 8 * d * d + 10 * d
    return n_layers * per_block + 2 * d + tables


def transformer_parameter_count(config: ModelConfig) -> int:
    """:func:`gpt_parameter_count` for a :class:`ModelConfig`.

    Raises:
        TypeError: as :func:`check_config`.
    """
    config = check_config(config)
    return gpt_parameter_count(
        config.vocab_size, config.max_seq_len, config.embed_dim, config.n_layers
    )


def model_label(name: str) -> str:
    """Display name of a ``MODELS`` key: ``"gpt3-2.7b"`` -> ``"GPT-3 2.7B"``.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is not a key of :data:`MODELS`.
    """
    if not isinstance(name, str) or name not in MODELS:
        error = ValueError if isinstance(name, str) else TypeError
        raise error(
            f"name must be a key of MODELS such as 'gpt2-small', got {name!r} "
            f"(keys: {', '.join(MODELS)})"
        )
    family, _, size = name.partition("-")
    family = {"gpt2": "GPT-2", "gpt3": "GPT-3"}.get(family, family)
    if size[:1].isdigit() or size == "xl":
        size = size.upper()
    return f"{family} {size}".strip()


def _gpt2(embed_dim: int, n_layers: int, n_heads: int) -> ModelConfig:
    return ModelConfig(50_257, 1_024, embed_dim, n_layers, n_heads, _GPT2_SOURCE)


def _gpt3(embed_dim: int, n_layers: int, n_heads: int, note: str = "") -> ModelConfig:
    return ModelConfig(50_257, 2_048, embed_dim, n_layers, n_heads, _GPT3_SOURCE, note)


_GPT3_XL_NOTE = (
    "Table 2.1 prints d_model 2048, 24 heads and d_head 128, which cannot all hold: 24 x 128 = "
    "3072, not 2048, and 2048 / 24 = 85.33 is not a whole head width. We keep d_model 2048 and "
    "d_head 128, so 16 heads: with d_model 2048 the parameter count is the stated 1.3B, while an "
    "inner attention width of 24 x 128 = 3072 would give about 1.5B."
)
_GPT3_13B_NOTE = (
    "Table 2.1 prints d_model 5140 with 40 heads and d_head 128; 5140 / 40 = 128.5 is not a whole "
    "head width, while 40 x 128 = 5120, so we read 5120. The parameter count cannot decide it: "
    "both widths give about 13B."
)


MODELS: Mapping[str, ModelConfig] = MappingProxyType(
    {
        "gpt2-small": _gpt2(768, 12, 12),
        "gpt2-medium": _gpt2(1_024, 24, 16),
        "gpt2-large": _gpt2(1_280, 36, 20),
        "gpt2-xl": _gpt2(1_600, 48, 25),
        "gpt3-small": _gpt3(768, 12, 12),
        "gpt3-medium": _gpt3(1_024, 24, 16),
        "gpt3-large": _gpt3(1_536, 24, 16),
        "gpt3-xl": _gpt3(2_048, 24, 16, _GPT3_XL_NOTE),
        "gpt3-2.7b": _gpt3(2_560, 32, 32),
        "gpt3-6.7b": _gpt3(4_096, 32, 32),
        "gpt3-13b": _gpt3(5_120, 40, 40, _GPT3_13B_NOTE),
        "gpt3-175b": _gpt3(12_288, 96, 96),
    }
)
"""Published sizes by name. All share GPT-2's 50,257-token BPE vocabulary.

Two rows of the GPT-3 paper's Table 2.1 cannot be taken as printed; each config's ``note`` says
how it is read. 13B's d_model 5140 is read as 5120 (40 heads of 128). XL's row (d_model 2048,
24 heads, d_head 128) is inconsistent whichever number is the slip; we keep d_model 2048 and
d_head 128, so 16 heads.
"""
