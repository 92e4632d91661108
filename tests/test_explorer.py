"""The cost explorer's numbers (gptembed.explorer): a setting, its turning points, the page's data.

The explorer itself, in the browser, is tested in tests/book/test_explorer_in_browser.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import MODELS, format_bytes, gpt_parameter_count
from gptembed.attention_cost import ACTIVATION_WIDTHS, activation_bytes, logits_bytes
from gptembed.explorer import (
    _ATTENTION_MODES,
    _EXPLORER_BATCH_SIZES,
    _EXPLORER_MAX_TOKENS,
    _EXPLORER_WINDOWS,
    _GPT3_BAND,
    ACCELERATORS,
    MEMORY_RULE,
    OPTION_SOURCES,
    _layer_windows,
    context_costs,
    explorer_data,
    explorer_values,
    format_share,
    turning_points,
)

GIB, MIB = 2**30, 2**20
SMALL = MODELS["gpt2-small"]
SMALL_PARAMS = 124_439_808  # the released GPT-2 small, with its 1,024-row table


def test_gpt2_small_at_its_own_context_by_hand() -> None:
    costs = context_costs(SMALL, 1024)
    assert costs.position_params == 1024 * 768
    assert costs.params == SMALL_PARAMS
    assert costs.position_share == pytest.approx(786_432 / SMALL_PARAMS, rel=1e-15)
    assert costs.weight_bytes == 4 * SMALL_PARAMS
    assert costs.scores_layer_bytes == 12 * 1024**2 * 4 == 48 * MIB
    assert costs.scores_all_bytes == costs.kept_bytes == 576 * MIB
    assert costs.kv_cache_bytes == 2 * 12 * 1024 * 768 * 4
    # a training step: 16 numbers of width 768 a token and layer, the logits, Adam's states
    assert costs.activations_layer_bytes == 16 * 768 * 1024 * 4 == 48 * MIB
    assert costs.activations_all_bytes == 576 * MIB
    assert costs.logits_bytes == 1024 * 50_257 * 4 == 205_852_672
    assert costs.state_bytes == 16 * SMALL_PARAMS == 1_991_036_928
    assert costs.step_bytes == 1_991_036_928 + 576 * MIB + 205_852_672 + 576 * MIB
    assert costs.step_bytes == 3_404_849_152  # 3.17 GiB
    assert f"{costs.attention_share:.1%}" == "13.3%"
    assert f"{costs.attention_share_kaplan:.1%}" == "10.0%"
    assert costs.holds == tuple(ACCELERATORS)


def test_the_fused_kernel_at_a_million_tokens_needs_no_score_matrix_but_no_v100_holds_it() -> None:
    """The issue's case: the row statistics are 576 MiB, but the layers' activations alone are
    576 GiB (queries, keys, values and attention's output are 4 of the 16 numbers: 144 GiB)."""
    costs = context_costs(SMALL, 2**20, mode="fused")
    assert costs.kept_bytes == 12 * 12 * 2**20 * 4 == 576 * MIB
    assert costs.activations_layer_bytes == 16 * 768 * 2**20 * 4 == 48 * GIB
    assert costs.activations_all_bytes == 576 * GIB
    assert 4 * 768 * 2**20 * 4 * 12 == 144 * GIB
    assert costs.logits_bytes == 2**20 * 50_257 * 4
    params = gpt_parameter_count(50_257, 2**20, 768, 12)
    assert costs.state_bytes == 16 * params
    assert costs.step_bytes == 16 * params + 576 * GIB + 2**20 * 50_257 * 4 + 576 * MIB
    assert costs.holds == ()


def test_the_three_modes_keep_different_things() -> None:
    n, batch = 8192, 4
    eager, fused, decode = (
        context_costs(SMALL, n, batch_size=batch, bytes_per_element=2, mode=mode)
        for mode in ("eager", "fused", "decode")
    )
    assert eager.scores_layer_bytes == batch * 12 * n * n * 2
    assert fused.scores_layer_bytes == batch * 12 * n * 4  # one fp32 number per row
    assert decode.scores_layer_bytes == batch * 12 * n * 2  # one row of n per head
    assert eager.kept_bytes == 12 * eager.scores_layer_bytes
    assert fused.kept_bytes == 12 * fused.scores_layer_bytes
    assert decode.kept_bytes == decode.kv_cache_bytes + decode.scores_layer_bytes
    # training keeps the same activations, logits and states whatever attention keeps
    assert eager.activations_all_bytes == fused.activations_all_bytes == 12 * 16 * 768 * n * 4 * 2
    assert eager.state_bytes == fused.state_bytes == 16 * eager.params
    assert eager.step_bytes - eager.kept_bytes == fused.step_bytes - fused.kept_bytes
    # decoding keeps no activations, and its weights in the number format
    assert decode.activations_layer_bytes == decode.activations_all_bytes == 0
    assert decode.logits_bytes == 0
    assert decode.state_bytes == decode.weight_bytes == 2 * decode.params
    assert decode.step_bytes == decode.weight_bytes + decode.kept_bytes
    # the mode changes only what is kept: parameters and FLOPs are the same
    assert eager.params == fused.params == decode.params
    assert eager.attention_share == fused.attention_share == decode.attention_share
    assert eager.scores_all_bytes == 4 * 18 * GIB  # 18 GiB a sequence in fp16 (the chapter)
    assert eager.holds == ()  # 72 GiB of scores, beside 9 GiB of activations and more
    assert fused.holds == decode.holds == tuple(ACCELERATORS)  # 14 GiB, and 1.37 GiB


def test_holds_judges_the_whole_step_smallest_first() -> None:
    # eager, fp32, 4,096 tokens: 9 GiB of scores, 2.25 GiB of activations, 785 MiB of
    # logits and 1.85 GiB of states: 13.9 GiB, which a V100 holds
    costs = context_costs(SMALL, 4096)
    assert costs.step_bytes == 16 * costs.params + 9 * GIB + 27 * GIB // 12 + 4096 * 50_257 * 4
    assert costs.holds == tuple(ACCELERATORS)
    # one sequence more: 27.9 GiB, past 24 and under 40
    assert context_costs(SMALL, 4096, batch_size=2).holds == ("A100 40 GB", "A100/H100 80 GB")
    memory = dict(ACCELERATORS)
    assert list(memory.values()) == sorted(memory.values())


def test_decoding_counts_the_cache_with_the_weights() -> None:
    """GPT-2 XL, fp16, a million tokens: 150 GiB of cache beside 5.9 GiB of weights."""
    costs = context_costs(
        MODELS["gpt2-xl"], 2**20, batch_size=1, bytes_per_element=2, mode="decode"
    )
    assert costs.kv_cache_bytes == 2 * 48 * 2**20 * 1600 * 2 == 300 * GIB
    assert costs.step_bytes == costs.weight_bytes + 300 * GIB + 25 * 2**20 * 2
    assert costs.holds == ()


def test_the_position_table_grows_with_the_context() -> None:
    longest = context_costs(SMALL, 2**20)
    assert longest.position_params == 2**20 * 768
    assert longest.params == gpt_parameter_count(50_257, 2**20, 768, 12)
    assert format_share(longest.position_share) == "86.7%"  # the number


def test_grouped_query_attention_by_hand() -> None:
    """Four key and value heads of 64 for GPT-2 small's twelve query heads: k = 256."""
    costs = context_costs(SMALL, 1024, kv_heads=4, mode="decode")
    assert costs.kv_cache_bytes == 2 * 12 * 1024 * 256 * 4  # a third of the full cache
    # each block's key and value weights shrink from 768 x 768 to 768 x 256, with their biases
    assert costs.params == SMALL_PARAMS - 12 * 2 * (768 * 512 + 512)
    training = context_costs(SMALL, 1024, kv_heads=4)
    assert training.activations_layer_bytes == (14 * 768 + 2 * 256) * 1024 * 4
    assert context_costs(SMALL, 1024, kv_heads=12) == context_costs(SMALL, 1024)
    with pytest.raises(ValueError, match=r"kv_heads must divide n_heads 12 \(one of \[1, 2, 3"):
        context_costs(SMALL, 1024, kv_heads=5)


def test_a_sliding_window_caps_the_cache_and_the_scores() -> None:
    n, window = 8192, 4096
    costs = context_costs(SMALL, n, window=window, mode="decode")
    assert costs.kv_cache_bytes == 2 * 12 * window * 768 * 4  # a rolling buffer of W tokens
    assert costs.scores_layer_bytes == 12 * window * 4  # the new token meets W keys
    eager = context_costs(SMALL, n, window=window)
    assert eager.scores_layer_bytes == 12 * n * window * 4
    assert eager.scores_all_bytes == 12 * eager.scores_layer_bytes
    # FLOPs: each query meets 4,096 keys, not 8,192
    assert eager.attention_share < context_costs(SMALL, n).attention_share
    assert context_costs(SMALL, 100, window=window) == context_costs(SMALL, 100)


def test_gpt3_banded_layers_match_the_chapters_exercise() -> None:
    """Chapter 4's exercise prices GPT-3 175B, fp16, 8 sequences of 2,048: 576 GiB dense, 324
    GiB with half its layers banded to 256 keys."""
    gpt3 = MODELS["gpt3-175b"]
    dense = context_costs(gpt3, 2048, batch_size=8, bytes_per_element=2)
    banded = context_costs(gpt3, 2048, batch_size=8, bytes_per_element=2, banded=True)
    assert dense.scores_all_bytes == 576 * GIB
    assert banded.scores_all_bytes == 324 * GIB  # 48 layers of 2,048 keys, 48 of 256
    assert banded.scores_layer_bytes == dense.scores_layer_bytes  # a dense layer's
    assert _layer_windows(gpt3, banded=True) == ((None, 48), (_GPT3_BAND, 48))
    assert _layer_windows(gpt3, window=128, banded=True) == ((128, 48), (128, 48))
    assert _layer_windows(MODELS["gpt2-small"], window=4096) == ((4096, 12),)
    # FLOPs: the chapter's mixed share at 2,048 tokens, (dense + banded) / 2 of attention's
    from gptembed import flops_per_token

    full, band = flops_per_token(gpt3, 2048), flops_per_token(gpt3, 2048, window=256)
    mixed = (full.attention + band.attention) // 2
    assert banded.attention_share == mixed / (full.weights + mixed)


def test_turning_points_of_gpt2_small_by_hand() -> None:
    points = turning_points(SMALL)
    # the rest of the model is 123,653,376 = 768 x 161,007 parameters: a tie at 161,007
    assert SMALL_PARAMS - 1024 * 768 == 768 * 161_007
    assert points.position == 161_008
    # scores 144 n^2 against 123,653,376 + 768 n: 124,277,904 < 124,366,848 at 929
    assert 144 * 929**2 <= 123_653_376 + 768 * 929 < 123_653_376 + 768 * 930 < 144 * 930**2
    assert points.scores == 930
    # the cache 18,432 n against 123,653,376 + 768 n: 17,664 n > 123,653,376 from 7,001
    assert 17_664 * 7_000 <= 123_653_376 < 17_664 * 7_001
    assert points.kv_cache == 7_001


def test_turning_points_never_reached_are_none() -> None:
    # one key and value head: the cache grows by 2 x 12 x 64 = 1,536 a token, past the
    # table's 768 only by 768, yet the rest is 111M: it passes at 144,075 tokens
    assert turning_points(SMALL, kv_heads=1).kv_cache == 111_446_784 // 768 - 1024 + 1
    # a window of 1 key: the scores grow by 144 a token, the weights by 768: never
    assert turning_points(SMALL, window=1).scores is None
    # a window of 1,024 tokens: the cache stops at 18.9M numbers, under the weights
    assert turning_points(SMALL, window=1024).kv_cache is None
    # a batch of 64 with that window: past from 105 tokens on
    assert turning_points(SMALL, 64, window=1024).kv_cache == 105


@given(
    model=st.sampled_from(list(MODELS)),
    batch=st.sampled_from(_EXPLORER_BATCH_SIZES),
    kv=st.integers(0, 5),
    window=st.sampled_from([None, 1, 64, *_EXPLORER_WINDOWS]),
    banded=st.booleans(),
)
def test_turning_points_are_where_the_costs_pass(
    model: str, batch: int, kv: int, window: int | None, banded: bool
) -> None:
    """At each point the cost is past the weights, and one token before it is not; where there
    is none, no length the explorer takes is past (checked at the windows and at its ends)."""
    config = MODELS[model]
    divisors = [g for g in range(1, config.n_heads + 1) if config.n_heads % g == 0]
    kv_heads = divisors[kv % len(divisors)]
    options = {"kv_heads": kv_heads, "window": window, "banded": banded}
    points = turning_points(config, batch, **options)

    def at(n: int, mode: str) -> tuple[int, int, int, float]:
        costs = context_costs(config, n, batch_size=batch, mode=mode, **options)  # type: ignore[arg-type]
        return (
            costs.scores_all_bytes,
            costs.kv_cache_bytes,
            costs.weight_bytes,
            costs.position_share,
        )

    share = at(points.position, "eager")[3], at(points.position - 1, "eager")[3]
    assert share[0] > 0.5 >= share[1]
    if points.scores is not None:
        assert at(points.scores, "eager")[0] > at(points.scores, "eager")[2]
        if points.scores > 1:
            assert at(points.scores - 1, "eager")[0] <= at(points.scores - 1, "eager")[2]
    else:
        for n in (1, 64, 1024, 4096, 16_384, _EXPLORER_MAX_TOKENS):
            assert at(n, "eager")[0] <= at(n, "eager")[2]
    if points.kv_cache is not None:
        assert at(points.kv_cache, "decode")[1] > at(points.kv_cache, "decode")[2]
        if points.kv_cache > 1:
            before = at(points.kv_cache - 1, "decode")
            assert before[1] <= before[2]
    else:
        for n in (1, 64, 256, *_EXPLORER_WINDOWS, _EXPLORER_MAX_TOKENS):
            assert at(n, "decode")[1] <= at(n, "decode")[2]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seq_len": 0}, ValueError, r"seq_len must be an integer >= 1, got 0"),
        ({"seq_len": 1024.0}, TypeError, r"seq_len must be an integer >= 1, got 1024.0"),
        ({"batch_size": 0}, ValueError, r"batch_size must be an integer >= 1, got 0"),
        ({"bytes_per_element": 0}, ValueError, r"bytes_per_element must be an integer >= 1"),
        (
            {"mode": "lazy"},
            ValueError,
            r"mode must be one of 'eager', 'fused', 'decode', got 'lazy'",
        ),
        ({"kv_heads": 0}, ValueError, r"kv_heads must be in \[1, 12\], got 0"),
        ({"kv_heads": 24}, ValueError, r"kv_heads must be in \[1, 12\], got 24"),
        ({"window": 0}, ValueError, r"window must be an integer >= 1, got 0"),
        ({"banded": 1}, TypeError, r"banded must be True or False, got 1"),
    ],
)
def test_context_costs_refuse_bad_input(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        context_costs(SMALL, **({"seq_len": 1024} | kwargs))


def test_numpy_integers_are_taken_as_ints() -> None:
    costs = context_costs(
        SMALL, np.int32(1024), batch_size=np.int64(2), bytes_per_element=np.int8(2)
    )
    assert costs == context_costs(SMALL, 1024, batch_size=2, bytes_per_element=2)
    assert type(costs.kept_bytes) is int and type(costs.step_bytes) is int


def test_format_share_keeps_three_digits_without_exponents() -> None:
    assert format_share(0.133) == "13.3%"
    assert format_share(1.76e-7) == "0.0000176%"
    assert format_share(0.5) == "50%"
    assert format_share(0.99999) == "100%"
    assert format_share(0.1225) == "12.2%"  # 12.25 exactly: half to even, as numpy rounds


@pytest.mark.parametrize("kind", [float, np.float64, np.float32, np.float16])
def test_format_share_takes_every_float_kind_and_the_ends_alike(kind: type) -> None:
    assert [format_share(kind(s)) for s in (0.0, -0.0, 0.5, 1.0)] == ["0%", "0%", "50%", "100%"]
    assert format_share(0) == "0%" and format_share(np.int64(1)) == "100%"


@pytest.mark.parametrize(
    ("share", "error", "message"),
    [
        (True, TypeError, "share must be a number >= 0 and <= 1, got True of type bool"),
        (np.bool_(False), TypeError, "share must be a number >= 0 and <= 1, got "),
        ("0.5", TypeError, "share must be a number >= 0 and <= 1, got '0.5' of type str"),
        (0.5j, TypeError, "share must be a number >= 0 and <= 1, got 0.5j of type complex"),
        (float("nan"), ValueError, "share must be a finite number >= 0 and <= 1, got nan"),
        (np.float32("nan"), ValueError, "share must be a finite number >= 0 and <= 1, got nan"),
        (-0.5, ValueError, "share must be a finite number >= 0 and <= 1, got -0.5"),
        (2.0, ValueError, "share must be a finite number >= 0 and <= 1, got 2.0"),
        (np.float64(1.0000001), ValueError, "share must be a finite number >= 0 and <= 1"),
        (float("inf"), ValueError, "share must be a finite number >= 0 and <= 1, got inf"),
    ],
)
def test_format_share_refuses_what_is_not_a_share(share: object, error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        format_share(share)  # type: ignore[arg-type]


def test_explorer_values_are_exact_and_shown_by_hand() -> None:
    values = explorer_values(context_costs(SMALL, 1024))
    assert values["position-params"] == (786_432, "786,432")
    assert values["params"] == (SMALL_PARAMS, "124,439,808")
    assert values["position-share"] == (786_432 / SMALL_PARAMS, "0.632%")
    assert values["scores-all"] == (576 * MIB, "576 MiB")
    assert values["total"] == (3_404_849_152, "3.17 GiB")
    assert values["states"] == (1_991_036_928, "1.85 GiB")
    assert values["logits"] == (205_852_672, "196 MiB")
    assert values["holds"] == (list(ACCELERATORS), ", ".join(ACCELERATORS))
    assert values["share"][1] == "13.3%"
    none = explorer_values(context_costs(SMALL, 2**20, mode="fused"))["holds"]
    assert none == ([], "none")


def test_the_activation_count_is_korthikantis_without_dropout() -> None:
    """Korthikanti et al.'s 34 s b h bytes a layer in 16-bit numbers: 16 numbers of 2 bytes
    (32) plus two dropout masks of one byte (2)."""
    assert sum(count for _, count, _ in ACTIVATION_WIDTHS) == 16
    assert 2 * 16 + 2 == 34
    assert activation_bytes(1, embed_dim=10) == 16 * 10 * 4
    assert activation_bytes(3, embed_dim=10, n_layers=2, batch_size=5, bytes_per_element=2) == (
        5 * 2 * 3 * 16 * 10 * 2
    )
    assert activation_bytes(1, embed_dim=10, kv_width=2) == (14 * 10 + 2 * 2) * 4
    assert activation_bytes(0, embed_dim=10) == 0
    assert logits_bytes(3, vocab_size=7, batch_size=2, bytes_per_element=2) == 3 * 7 * 2 * 2
    with pytest.raises(ValueError, match="kv_width must be an integer >= 1, got 0"):
        activation_bytes(1, embed_dim=10, kv_width=0)


def test_the_page_data_holds_the_controls_and_the_constants() -> None:
    data = explorer_data()
    assert json.loads(json.dumps(data)) == data
    assert [m["key"] for m in data["models"]] == list(MODELS)
    small = data["models"][0]
    assert (small["embed_dim"], small["n_layers"], small["n_heads"]) == (768, 12, 12)
    assert small["vocab_size"] == 50_257 and small["label"] == "GPT-2 small"
    assert data["max_tokens"] == 2**20
    assert [(d["key"], d["bytes"]) for d in data["dtypes"]] == [("fp32", 4), ("fp16", 2)]
    assert data["batch_sizes"] == list(_EXPLORER_BATCH_SIZES)
    assert [mode["key"] for mode in data["modes"]] == list(_ATTENTION_MODES)
    assert data["activations"] == {"d": 14, "k": 2}
    assert data["state_bytes_per_parameter"] == 16
    assert data["band"] == _GPT3_BAND == 256
    assert data["windows"] == list(_EXPLORER_WINDOWS)
    assert [a["name"] for a in data["accelerators"]] == list(ACCELERATORS)
    assert [int(a["bytes"]) for a in data["accelerators"]] == list(ACCELERATORS.values())
    assert data["units"] == ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    assert format_bytes(2**50) == "1 PiB"


def test_every_source_is_cited_where_the_explorer_says_it() -> None:
    assert "arXiv:1910.02054" in MEMORY_RULE and "arXiv:2205.05198" in MEMORY_RULE
    assert "section 2.1" in OPTION_SOURCES["banded"] and "not published" in OPTION_SOURCES["banded"]
    assert "arXiv:2305.13245" in OPTION_SOURCES["kv_heads"]
    assert "arXiv:2310.06825" in OPTION_SOURCES["window"]


def test_every_control_at_its_far_end_by_hand() -> None:
    """GPT-3 175B, a million tokens, fp16, a batch of 64: integers far past 2**53, exact."""
    costs = context_costs(MODELS["gpt3-175b"], 2**20, batch_size=64, bytes_per_element=2)
    assert costs.scores_layer_bytes == 64 * 96 * 2**40 * 2  # 12 PiB a layer
    assert costs.scores_all_bytes == costs.kept_bytes == 96 * costs.scores_layer_bytes
    assert costs.kv_cache_bytes == 2 * 96 * 2**20 * 12_288 * 64 * 2
    assert costs.position_params == 2**20 * 12_288
    assert costs.step_bytes > 2**53
    assert costs.holds == ()


def test_a_model_name_for_a_config_is_refused_saying_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"pass MODELS\['gpt2-small'\], not the name 'gpt2-small'"):
        context_costs("gpt2-small", 1024)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MODELS' keys: gpt2-small, gpt2-medium"):
        context_costs("gpt-2", 1024)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pass MODELS\['gpt2-small'\]"):
        turning_points("gpt2-small")  # type: ignore[arg-type]
