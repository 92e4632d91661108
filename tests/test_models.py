"""MODELS and the parameter arithmetic, checked against the published sizes and known totals."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest

from gptembed import (
    MODELS,
    ModelConfig,
    ParameterCounts,
    attention_flops_parity,
    config_embedding_counts,
    embedding_parameter_counts,
    flops_per_token,
    gpt_parameter_count,
    model_label,
    transformer_parameter_count,
)

# (name, d_model, layers, heads, n_ctx), as published.
GPT2 = [  # openai/gpt-2's released configs
    ("gpt2-small", 768, 12, 12, 1024),
    ("gpt2-medium", 1024, 24, 16, 1024),
    ("gpt2-large", 1280, 36, 20, 1024),
    ("gpt2-xl", 1600, 48, 25, 1024),
]
GPT3 = [  # arXiv:2005.14165 Table 2.1 (13B's printed 5140 read as 5120; XL's 24 heads as 16 of 128)
    ("gpt3-small", 768, 12, 12, 2048),
    ("gpt3-medium", 1024, 24, 16, 2048),
    ("gpt3-large", 1536, 24, 16, 2048),
    ("gpt3-xl", 2048, 24, 16, 2048),
    ("gpt3-2.7b", 2560, 32, 32, 2048),
    ("gpt3-6.7b", 4096, 32, 32, 2048),
    ("gpt3-13b", 5120, 40, 40, 2048),
    ("gpt3-175b", 12288, 96, 96, 2048),
]
PUBLISHED = GPT2 + GPT3


def test_counts_made_by_hand_are_checked() -> None:
    """A ParameterCounts whose total is not its sum, or with no parameters, is refused (a share
    of zero parameters divided by zero before)."""
    with pytest.raises(ValueError, match="token must be an integer >= 1, got 0"):
        ParameterCounts(token=0, position=0, total=0)
    with pytest.raises(ValueError, match="total must be token \\+ position = 5, got 6"):
        ParameterCounts(token=3, position=2, total=6)
    assert ParameterCounts(token=3, position=1, total=4).position_share == 0.25


def test_models_has_exactly_the_twelve_names() -> None:
    assert list(MODELS) == [row[0] for row in PUBLISHED]


@pytest.mark.parametrize(("name", "d", "layers", "heads", "n_ctx"), PUBLISHED)
def test_sizes_and_exact_embedding_counts(
    name: str, d: int, layers: int, heads: int, n_ctx: int
) -> None:
    cfg = MODELS[name]
    assert (cfg.vocab_size, cfg.max_seq_len, cfg.embed_dim, cfg.n_layers, cfg.n_heads) == (
        50257,
        n_ctx,
        d,
        layers,
        heads,
    )
    assert cfg.source
    counts = config_embedding_counts(cfg)
    assert counts.token == 50257 * d
    assert counts.position == n_ctx * d
    assert counts.total == (50257 + n_ctx) * d
    assert counts.position_share == pytest.approx(n_ctx / (50257 + n_ctx), rel=1e-12)


def test_gpt2_small_numbers_from_the_section() -> None:
    counts = config_embedding_counts(MODELS["gpt2-small"])
    assert (counts.token, counts.position, counts.total) == (38_597_376, 786_432, 39_383_808)
    assert round(100 * counts.position_share, 3) == 1.997


def test_share_does_not_depend_on_width() -> None:
    shares = {config_embedding_counts(MODELS[n]).position_share for n in ("gpt2-small", "gpt2-xl")}
    assert len(shares) == 1


# d_head as Table 2.1 prints it, for every GPT-3 size.
TABLE_2_1_D_HEAD = {
    "gpt3-small": 64,
    "gpt3-medium": 64,
    "gpt3-large": 96,
    "gpt3-xl": 128,
    "gpt3-2.7b": 80,
    "gpt3-6.7b": 128,
    "gpt3-13b": 128,
    "gpt3-175b": 128,
}


def test_head_dim_is_whole_and_matches_the_printed_d_head() -> None:
    for name, cfg in MODELS.items():
        assert cfg.head_dim * cfg.n_heads == cfg.embed_dim, name
        assert type(cfg.head_dim) is int
    assert {n: MODELS[n].head_dim for n in TABLE_2_1_D_HEAD} == TABLE_2_1_D_HEAD
    assert {MODELS[n].head_dim for n in MODELS if n.startswith("gpt2")} == {64}


def test_the_two_table_2_1_readings_carry_a_note() -> None:
    noted = {name: cfg.note for name, cfg in MODELS.items() if cfg.note}
    assert sorted(noted) == ["gpt3-13b", "gpt3-xl"]
    assert "16 heads" in noted["gpt3-xl"] and "85.33" in noted["gpt3-xl"]
    assert "5140" in noted["gpt3-13b"] and "5120" in noted["gpt3-13b"]


def test_gpt3_xl_reading_fits_the_stated_size_and_the_other_does_not() -> None:
    """d_model 2048 gives 1.3B; an inner attention width of 24 x 128 = 3072 would give 1.5B."""
    cfg = MODELS["gpt3-xl"]
    d, inner, layers = cfg.embed_dim, 24 * 128, cfg.n_layers
    embeddings = config_embedding_counts(cfg).total
    ours = transformer_parameter_count(cfg)
    wide = gpt_parameter_count(cfg.vocab_size, cfg.max_seq_len, d, layers, attention_width=inner)
    # Only the QKV (d x 3a, 3a biases) and output (a x d) weights grow with the width.
    assert wide - ours == layers * (4 * d + 3) * (inner - d)
    assert round(ours / 1e9, 1) == 1.3
    assert round(wide / 1e9, 1) == 1.5
    assert embeddings < ours


def _count_by_shapes(
    vocab: int, ctx: int, d: int, layers: int, a: int, k: int | None = None
) -> int:
    """Every array of a GPT-2 block listed by shape (nanoGPT's names), then counted; ``k`` is
    the keys' and values' width (``a`` unless given: grouped-query attention narrows it)."""
    k = a if k is None else k
    block = [
        (d,), (d,),  # ln_1 weight and bias
        (d, a + 2 * k), (a + 2 * k,),  # c_attn: queries, keys, values
        (a, d), (d,),  # attention c_proj
        (d,), (d,),  # ln_2
        (d, 4 * d), (4 * d,),  # mlp c_fc
        (4 * d, d), (d,),  # mlp c_proj
    ]  # fmt: skip
    model = [(vocab, d), (ctx, d)] + block * layers + [(d,), (d,)]  # wte, wpe, ..., ln_f
    return sum(math.prod(shape) for shape in model)


@pytest.mark.parametrize(("d", "a"), [(8, 8), (8, 12), (12, 4), (768, 768), (2048, 3072)])
def test_parameter_count_with_an_attention_width_counts_every_array(d: int, a: int) -> None:
    expected = _count_by_shapes(50, 16, d, 3, a)
    assert gpt_parameter_count(50, 16, d, 3, attention_width=a) == expected
    assert gpt_parameter_count(50, 16, d, 3, attention_width=np.int64(a)) == expected
    if a == d:
        assert gpt_parameter_count(50, 16, d, 3) == expected


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_parameter_count_refuses_a_bad_attention_width(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="attention_width must be an integer >= 1"):
        gpt_parameter_count(10, 10, 8, 2, attention_width=bad)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="kv_width must be an integer >= 1"):
        gpt_parameter_count(10, 10, 8, 2, kv_width=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("d", "a", "k"), [(8, 8, 2), (8, 12, 4), (768, 768, 64), (768, 768, 768)])
def test_parameter_count_with_grouped_keys_and_values_counts_every_array(
    d: int, a: int, k: int
) -> None:
    expected = _count_by_shapes(50, 16, d, 3, a, k)
    assert gpt_parameter_count(50, 16, d, 3, attention_width=a, kv_width=k) == expected


def test_gpt3_13b_count_cannot_choose_between_5120_and_5140() -> None:
    """The count needs no head number, so Table 2.1's 5140 can be priced as printed."""
    cfg = MODELS["gpt3-13b"]
    as_printed = gpt_parameter_count(cfg.vocab_size, cfg.max_seq_len, 5_140, cfg.n_layers)
    assert as_printed - transformer_parameter_count(cfg) == (
        cfg.n_layers * (12 * (5140**2 - 5120**2) + 13 * 20) + 2 * 20 + (50_257 + 2_048) * 20
    )
    assert transformer_parameter_count(cfg) == pytest.approx(13e9, rel=0.02)
    assert as_printed == pytest.approx(13e9, rel=0.02)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_gpt_parameter_count_refuses_bad_sizes(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="n_layers must be an integer >= 1"):
        gpt_parameter_count(10, 10, 8, bad)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="embed_dim must be an integer >= 1"):
        gpt_parameter_count(10, 10, bad, 2)  # type: ignore[arg-type]


def test_heads_must_divide_the_width() -> None:
    with pytest.raises(
        ValueError, match=r"n_heads 24 must divide embed_dim 2048: a head width of 85.33"
    ):
        ModelConfig(50257, 2048, 2048, 24, 24, "Table 2.1 as printed")


def test_numpy_integer_sizes_are_stored_as_python_ints() -> None:
    """np.int32 sizes once made GPT-3 175B's count overflow silently to -1,489,399,808."""
    sizes = [np.int32(v) for v in (50_257, 2_048, 12_288, 96, 96)]
    cfg = ModelConfig(*sizes, "test")  # type: ignore[arg-type]
    assert all(
        type(getattr(cfg, f)) is int
        for f in ("vocab_size", "max_seq_len", "embed_dim", "n_layers", "n_heads")
    )
    assert transformer_parameter_count(cfg) == 174_604_259_328
    assert cfg == ModelConfig(50_257, 2_048, 12_288, 96, 96, "test")


@pytest.mark.parametrize(
    ("name", "total"),
    [
        ("gpt2-small", 124_439_808),  # Hugging Face gpt2: 124,439,808 parameters
        ("gpt2-medium", 354_823_168),  # gpt2-medium
        ("gpt2-large", 774_030_080),  # gpt2-large
        ("gpt2-xl", 1_557_611_200),  # gpt2-xl
    ],
)
def test_whole_model_counts_match_released_gpt2(name: str, total: int) -> None:
    assert transformer_parameter_count(MODELS[name]) == total


@pytest.mark.parametrize(
    ("name", "paper_size"),
    [
        ("gpt3-small", 125e6),
        ("gpt3-medium", 350e6),
        ("gpt3-large", 760e6),
        ("gpt3-xl", 1.3e9),
        ("gpt3-2.7b", 2.7e9),
        ("gpt3-6.7b", 6.7e9),
        ("gpt3-13b", 13.0e9),
        ("gpt3-175b", 175.0e9),
    ],
)
def test_whole_model_counts_near_gpt3_paper(name: str, paper_size: float) -> None:
    assert transformer_parameter_count(MODELS[name]) == pytest.approx(paper_size, rel=0.03)


def test_configs_are_frozen_and_models_read_only() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        MODELS["gpt2-small"].embed_dim = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        MODELS["mine"] = MODELS["gpt2-small"]  # type: ignore[index]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_sizes_are_refused(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="embed_dim must be an integer >= 1"):
        embedding_parameter_counts(10, 10, bad)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="n_heads must be an integer >= 1"):
        ModelConfig(10, 10, 8, 2, bad, "test")  # type: ignore[arg-type]


COST_FUNCTIONS = {
    "config_embedding_counts": config_embedding_counts,
    "transformer_parameter_count": transformer_parameter_count,
    "flops_per_token": lambda config: flops_per_token(config, 1024),
    "attention_flops_parity": attention_flops_parity,
}


@pytest.mark.parametrize("fn", COST_FUNCTIONS.values(), ids=COST_FUNCTIONS.keys())
def test_a_model_name_instead_of_its_config_names_the_fix(fn: Callable[[object], object]) -> None:
    """A name once raised AttributeError: 'str' object has no attribute 'embed_dim'."""
    with pytest.raises(
        TypeError,
        match=r"^config must be a ModelConfig: pass MODELS\['gpt2-small'\], not the name "
        r"'gpt2-small'$",
    ):
        fn("gpt2-small")
    with pytest.raises(
        TypeError,
        match=r"^config must be a ModelConfig such as MODELS\['gpt2-small'\], got 'gpt2' of "
        r"type str \(MODELS' keys: gpt2-small, gpt2-medium, .*, gpt3-175b\)$",
    ):
        fn("gpt2")
    with pytest.raises(
        TypeError,
        match=r"^config must be a ModelConfig such as MODELS\['gpt2-small'\], got None of type "
        r"NoneType$",
    ):
        fn(None)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: model_label(3),
            r"^name must be a key of MODELS such as 'gpt2-small', got 3 \(keys: gpt2-small, ",
        ),
        (lambda: model_label("gpt4"), r"^name must be a key of MODELS such as 'gpt2-small', got"),
        (
            lambda: ModelConfig(10, 10, 8, 2, 2, source=None),
            r"^source must be a string, got None of type NoneType$",
        ),
        (
            lambda: ModelConfig(10, 10, 8, 2, 2, "test", note=1),
            r"^note must be a string, got 1 of type int$",
        ),
    ],
)
def test_names_and_notes_must_be_strings(call: Callable[[], object], message: str) -> None:
    """model_label(3) once raised AttributeError, and model_label("gpt4") returned "gpt4"."""
    with pytest.raises((TypeError, ValueError), match=message):
        call()
