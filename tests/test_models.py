"""MODELS and the parameter arithmetic, checked against the published sizes and known totals."""

from __future__ import annotations

import dataclasses

import pytest

from gptembed import (
    MODELS,
    ModelConfig,
    config_embedding_counts,
    embedding_parameter_counts,
    transformer_parameter_count,
)

# (name, d_model, layers, heads, n_ctx): GPT-2 from openai/gpt-2's released configs, GPT-3 from
# arXiv:2005.14165 Table 2.1 (13B's printed 5140 corrected to 5120).
PUBLISHED = [
    ("gpt2-small", 768, 12, 12, 1024),
    ("gpt2-medium", 1024, 24, 16, 1024),
    ("gpt2-large", 1280, 36, 20, 1024),
    ("gpt2-xl", 1600, 48, 25, 1024),
    ("gpt3-small", 768, 12, 12, 2048),
    ("gpt3-medium", 1024, 24, 16, 2048),
    ("gpt3-large", 1536, 24, 16, 2048),
    ("gpt3-xl", 2048, 24, 24, 2048),
    ("gpt3-2.7b", 2560, 32, 32, 2048),
    ("gpt3-6.7b", 4096, 32, 32, 2048),
    ("gpt3-13b", 5120, 40, 40, 2048),
    ("gpt3-175b", 12288, 96, 96, 2048),
]


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


def test_heads_divide_width_except_gpt3_xl() -> None:
    """Table 2.1: GPT-3 XL has 24 heads of 128 on a 2048 width (24 x 128 = 3072), a misprint."""
    uneven = [name for name, cfg in MODELS.items() if cfg.embed_dim % cfg.n_heads]
    assert uneven == ["gpt3-xl"]


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
