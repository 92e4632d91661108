"""gptembed.attention_cost, imported as ``cost``: attention's memory and FLOPs by formula, and the
numpy measurement of score memory that should agree with the formula."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import MODELS, transformer_parameter_count
from gptembed import attention_cost as cost


def test_flops_made_by_hand_are_checked() -> None:
    """FlopsPerToken with no weight FLOPs (its share divided by zero) or negative ones: refused."""
    with pytest.raises(ValueError, match="weights must be an integer >= 1, got 0"):
        cost.FlopsPerToken(weights=0, attention=0)
    with pytest.raises(ValueError, match="attention must be an integer >= 0, got -1"):
        cost.FlopsPerToken(weights=1, attention=-1)
    assert cost.FlopsPerToken(weights=3, attention=1).attention_share == 0.25


def test_formula_at_gpt2_small() -> None:
    cfg = MODELS["gpt2-small"]
    mib, gib = 2**20, 2**30
    assert cost.attention_scores_bytes(1024, cfg.n_heads) == 48 * mib
    assert cost.attention_scores_bytes(1024, cfg.n_heads, n_layers=cfg.n_layers) == 576 * mib
    assert cost.attention_scores_bytes(8192, cfg.n_heads) == 3 * gib
    assert cost.attention_scores_bytes(1024, 12, bytes_per_element=2) == 24 * mib


def test_formula_is_quadratic_and_linear_in_the_rest() -> None:
    base = cost.attention_scores_bytes(1000, 3)
    assert cost.attention_scores_bytes(2000, 3) == 4 * base
    assert (
        cost.attention_scores_bytes(1000, 3, n_layers=5, batch_size=7, bytes_per_element=8)
        == base * 5 * 7 * 2
    )
    assert cost.attention_scores_bytes(0, 3) == 0


def test_formula_does_not_overflow() -> None:
    assert cost.attention_scores_bytes(2**31, 96, n_layers=96) == 96 * 96 * 2**62 * 4


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seq_len": -1}, ValueError, r"seq_len must be an integer >= 0, got -1"),
        ({"n_heads": 0}, ValueError, r"n_heads must be an integer >= 1, got 0"),
        ({"seq_len": 10.0}, TypeError, r"seq_len must be an integer >= 0, got 10.0 of type float"),
        ({"bytes_per_element": 0}, ValueError, r"bytes_per_element must be an integer >= 1"),
    ],
)
def test_formula_refuses_bad_input(kwargs: dict, error: type, message: str) -> None:
    args = {"seq_len": 10, "n_heads": 2} | kwargs
    with pytest.raises(error, match=message):
        cost.attention_scores_bytes(**args)


def test_probs_are_a_softmax_and_match_the_naive_version() -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 50, 16))
    probs = cost.attention_probs(q.copy(), k)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(probs, cost.naive_attention_probs(q, k), rtol=1e-12)
    scores = q @ k.T / 4.0
    np.testing.assert_allclose(
        probs, np.exp(scores) / np.exp(scores).sum(-1, keepdims=True), rtol=1e-10
    )


@pytest.mark.parametrize("n", [256, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_measured_peak_agrees_with_formula(dtype: type, n: int) -> None:
    formula = cost.attention_scores_bytes(n, n_heads=1, bytes_per_element=np.dtype(dtype).itemsize)
    measured = cost.measure_attention_scores_peak(n, dtype=dtype)
    assert formula <= measured <= 1.1 * formula
    # scores, exp(scores - max) and the normalised result are alive at once: three (n, n) arrays
    assert cost.measure_attention_scores_peak(n, dtype=dtype, naive=True) >= 3 * formula


@pytest.mark.parametrize("fn", [cost.attention_probs, cost.naive_attention_probs])
def test_probs_keep_the_input_dtype(fn: Callable[..., np.ndarray]) -> None:
    q = np.ones((4, 8), dtype=np.float32)
    assert fn(q, q).dtype == np.float32


@pytest.mark.parametrize(
    ("dtype", "message"),
    [
        (np.int32, r"dtype must be a floating dtype such as np.float32, got int32"),
        (np.complex64, r"dtype must be a floating dtype such as np.float32, got complex64"),
        ("banana", r"dtype must be a floating dtype such as np.float32, got 'banana'"),
    ],
)
def test_measured_peak_needs_a_floating_dtype(dtype: object, message: str) -> None:
    """int32 once failed inside numpy's in-place scaling, and complex64 returned a number."""
    with pytest.raises(TypeError, match=message):
        cost.measure_attention_scores_peak(64, dtype=dtype)  # type: ignore[arg-type]


@pytest.mark.parametrize("fn", [cost.attention_probs, cost.naive_attention_probs])
def test_probs_of_a_batch_are_each_heads_probs(fn: Callable[..., np.ndarray]) -> None:
    """3-D inputs once gave a wrong shape: k.T reversed every axis, not the last two."""
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 7, 8))  # (B, H, n|m, d)
    probs = fn(q, k)
    assert probs.shape == (2, 3, 5, 7)
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(probs[b, h], fn(q[b, h], k[b, h]), rtol=1e-12)


@pytest.mark.parametrize("fn", [cost.attention_probs, cost.naive_attention_probs])
def test_probs_of_no_queries_and_of_lists(fn: Callable[..., np.ndarray]) -> None:
    assert fn(np.ones((0, 4)), np.ones((3, 4))).shape == (0, 3)
    assert fn(np.ones((0, 4)), np.ones((0, 4))).shape == (0, 0)
    lists = fn([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(lists, fn(np.array([[1.0, 0.0]]), np.eye(2)))


@pytest.mark.parametrize("fn", [cost.attention_probs, cost.naive_attention_probs])
@pytest.mark.parametrize(
    ("q_shape", "k_shape", "message"),
    [
        ((4,), (4,), r"^q must have shape \(\.\.\., n, d\), got \(4,\)$"),
        ((2, 4), (4,), r"^k must have shape \(\.\.\., m, d\), got \(4,\)$"),
        (
            (2, 4),
            (2, 3),
            r"^q and k must have one width d and one batch shape: got \(2, 4\) and \(2, 3\)$",
        ),
        ((2, 2, 4), (3, 2, 4), r"one batch shape: got \(2, 2, 4\) and \(3, 2, 4\)$"),
        ((2, 0), (2, 0), r"^q and k must be at least 1 wide, got d = 0$"),
        ((2, 4), (0, 4), r"^k must hold at least one key for 2 queries"),
    ],
)
def test_probs_refuse_bad_shapes(
    fn: Callable[..., np.ndarray], q_shape: tuple, k_shape: tuple, message: str
) -> None:
    """Empty and 1-D inputs once crashed with numpy's errors."""
    with pytest.raises(ValueError, match=message):
        fn(np.ones(q_shape), np.ones(k_shape))


@pytest.mark.parametrize("fn", [cost.attention_probs, cost.naive_attention_probs])
@pytest.mark.parametrize(
    ("q", "k", "message"),
    [
        (
            np.ones((2, 4), dtype=int),
            np.ones((2, 4)),
            r"^q must be floating point, got dtype int64$",
        ),
        ([[1, 2]], [[1, 2]], r"^q must be floating point, got dtype int64$"),
        (np.ones((2, 4), dtype=np.float32), np.ones((2, 4)), r"^q and k must share one dtype"),
    ],
)
def test_probs_refuse_bad_dtypes(
    fn: Callable[..., np.ndarray], q: object, k: object, message: str
) -> None:
    """Int and list inputs once crashed with an AttributeError; two dtypes mixed silently."""
    with pytest.raises(TypeError, match=message):
        fn(q, k)


NOT_BOOLS = ["no", "", 1, 0.0, None, np.int8(1)]


@pytest.mark.parametrize("value", NOT_BOOLS)
def test_bool_arguments_must_be_bools(value: object) -> None:
    """training="no" once counted as training (a truthy string), naive=1 as naive."""
    message = rf"^training must be True or False, got {re.escape(repr(value))} of type"
    with pytest.raises(TypeError, match=message):
        cost.flops_per_token(MODELS["gpt2-small"], 8, training=value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^naive must be True or False, got"):
        cost.measure_attention_scores_peak(8, naive=value)  # type: ignore[arg-type]


def test_numpy_bools_are_bools() -> None:
    config = MODELS["gpt2-small"]
    assert cost.flops_per_token(config, 8, training=np.bool_(True)) == cost.flops_per_token(
        config, 8, True
    )
    assert cost.measure_attention_scores_peak(8, naive=np.bool_(False)) > 0


def test_a_banded_layer_keeps_window_scores_per_query() -> None:
    dense = cost.attention_scores_bytes(2048, 96, n_layers=48, bytes_per_element=2)
    banded = cost.attention_scores_bytes(2048, 96, n_layers=48, bytes_per_element=2, window=256)
    assert banded * 8 == dense  # 256 of 2,048 keys per query
    assert cost.attention_scores_bytes(100, 2, window=256) == cost.attention_scores_bytes(100, 2)
    assert cost.attention_scores_bytes(10, 1, window=np.int64(3)) == 10 * 3 * 4
    with pytest.raises(ValueError, match=r"window must be an integer >= 1, got 0"):
        cost.attention_scores_bytes(10, 1, window=0)
    with pytest.raises(TypeError, match=r"window must be an integer >= 1, got 2.5"):
        cost.attention_scores_bytes(10, 1, window=2.5)  # type: ignore[arg-type]


def test_softmax_statistics_are_one_fp32_number_per_row() -> None:
    cfg = MODELS["gpt2-small"]
    per_row = cost.softmax_statistics_bytes(1024, cfg.n_heads, cfg.n_layers, batch_size=3)
    assert per_row == 3 * 12 * 12 * 1024 * 4
    assert cost.softmax_statistics_bytes(2048, 12) == 2 * cost.softmax_statistics_bytes(1024, 12)
    # n times fewer bytes than the fp32 scores it replaces
    assert cost.attention_scores_bytes(1024, 12) == 1024 * cost.softmax_statistics_bytes(1024, 12)
    assert cost.softmax_statistics_bytes(0, 12) == 0
    with pytest.raises(ValueError, match=r"n_heads must be an integer >= 1, got 0"):
        cost.softmax_statistics_bytes(10, 0)
    with pytest.raises(ValueError, match=r"seq_len must be an integer >= 0, got -1"):
        cost.softmax_statistics_bytes(-1, 2)


# Attention's cost beyond one score matrix: longest context that fits, KV cache, and FLOPs.


@pytest.mark.parametrize(
    ("heads", "layers", "batch", "size"), [(1, 1, 1, 1), (12, 12, 1, 4), (96, 96, 8, 2)]
)
@pytest.mark.parametrize("n", [1, 7, 1024, 12_345])
def test_longest_context_at_exact_boundaries(
    heads: int, layers: int, batch: int, size: int, n: int
) -> None:
    exact = cost.attention_scores_bytes(n, heads, layers, batch, size)
    assert cost.longest_context(exact, heads, layers, batch, size) == n
    assert cost.longest_context(exact - 1, heads, layers, batch, size) == n - 1
    next_up = cost.attention_scores_bytes(n + 1, heads, layers, batch, size)
    assert cost.longest_context(next_up - 1, heads, layers, batch, size) == n


def test_longest_context_below_one_position() -> None:
    assert cost.longest_context(0, 12) == 0
    assert cost.longest_context(12 * 4 - 1, 12) == 0
    assert cost.longest_context(12 * 4, 12) == 1


def test_longest_context_where_a_float_sqrt_is_one_off() -> None:
    memory = (10**8 + 1) ** 2 - 1  # one byte short of n = 10**8 + 1 at one byte per score
    assert int(np.sqrt(memory)) == 10**8 + 1, "the float version overshoots here"
    assert cost.longest_context(memory, 1, bytes_per_element=1) == 10**8


def test_longest_context_huge_values_and_numpy_integers() -> None:
    assert cost.longest_context(2**200, 1, bytes_per_element=1) == 2**100
    result = cost.longest_context(
        np.int64(80 * 2**30), np.int32(12), np.int64(12), np.uint8(1), np.int8(4)
    )
    assert type(result) is int
    # 80 GiB / (12 * 12 * 4) = 149,132,197.7 bytes per n**2; its square root is 12,211.97
    assert result == cost.longest_context(80 * 2**30, 12, 12, 1, 4) == 12_211


@given(
    st.integers(0, 2**120),
    st.integers(1, 200),
    st.integers(1, 100),
    st.integers(1, 64),
    st.integers(1, 8),
)
def test_longest_context_is_the_largest_that_fits(
    memory: int, heads: int, layers: int, batch: int, size: int
) -> None:
    n = cost.longest_context(memory, heads, layers, batch, size)
    assert cost.attention_scores_bytes(n, heads, layers, batch, size) <= memory
    assert cost.attention_scores_bytes(n + 1, heads, layers, batch, size) > memory


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((-1, 12), ValueError, r"memory_bytes must be an integer >= 0, got -1"),
        (
            (2.0**30, 12),
            TypeError,
            r"memory_bytes must be an integer >= 0, got 1073741824.0 of type float",
        ),
        ((2**30, 0), ValueError, r"n_heads must be an integer >= 1, got 0"),
        ((2**30, 12, 12, 1, 0), ValueError, r"bytes_per_element must be an integer >= 1, got 0"),
    ],
)
def test_longest_context_refuses_bad_input(args: tuple, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        cost.longest_context(*args)


# --- kv_cache_bytes ---


def test_kv_cache_of_gpt2_small_and_gpt3_175b() -> None:
    small, big = MODELS["gpt2-small"], MODELS["gpt3-175b"]
    assert (
        cost.kv_cache_bytes(1024, small.n_layers, small.embed_dim) == 36 * 2**20
    )  # 2*12*1024*768*2
    assert cost.kv_cache_bytes(2048, big.n_layers, big.embed_dim) == 9 * 2**30  # 2*96*2048*12288*2
    assert (
        cost.kv_cache_bytes(1024, 12, 768, batch_size=8, bytes_per_element=4) == 8 * 2 * 36 * 2**20
    )


def test_kv_cache_is_linear_in_length() -> None:
    assert cost.kv_cache_bytes(0, 12, 768) == 0
    assert cost.kv_cache_bytes(3000, 12, 768) == 3 * cost.kv_cache_bytes(1000, 12, 768)
    assert cost.kv_cache_bytes(np.int64(10), np.int32(2), np.int16(4)) == 2 * 2 * 10 * 4 * 2


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seq_len": -1}, ValueError, r"seq_len must be an integer >= 0, got -1"),
        ({"embed_dim": 0}, ValueError, r"embed_dim must be an integer >= 1, got 0"),
        ({"n_layers": 1.5}, TypeError, r"n_layers must be an integer >= 1, got 1.5"),
    ],
)
def test_kv_cache_refuses_bad_input(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        cost.kv_cache_bytes(**({"seq_len": 10, "n_layers": 2, "embed_dim": 8} | kwargs))


# --- FLOPs per token: weights plus attention ---


def test_flops_of_gpt2_small_by_hand() -> None:
    cfg = MODELS["gpt2-small"]
    flops = cost.flops_per_token(cfg, 1024)
    # 2 * (12 * 12 * 768**2 + 50257 * 768) = 2 * (84,934,656 + 38,597,376)
    assert flops.weights == 247_064_064
    assert flops.attention == 4 * 12 * 1024 * 768 == 37_748_736
    assert flops.total == 284_812_800
    assert flops.attention_share == pytest.approx(37_748_736 / 284_812_800, rel=1e-15)


def test_flops_of_gpt3_175b_by_hand() -> None:
    flops = cost.flops_per_token(MODELS["gpt3-175b"], 2048)
    # 2 * (12 * 96 * 12288**2 + 50257 * 12288) = 2 * (173,946,175,488 + 617,558,016)
    assert flops.weights == 349_127_467_008
    assert flops.attention == 4 * 96 * 2048 * 12288 == 9_663_676_416
    assert round(flops.attention_share, 4) == 0.0269  # 9.66e9 / (349.1e9 + 9.66e9)


@pytest.mark.parametrize(
    ("name", "parity"),
    [
        ("gpt2-small", 6_703),  # 6 * 768 + 50257 / 24 = 4608 + 2094.04 = 6702.04, rounded up
        ("gpt3-175b", 73_990),  # 6 * 12288 + 50257 / 192 = 73728 + 261.76 = 73989.76
    ],
)
def test_attention_passes_half_of_the_flops_at_the_parity_length(name: str, parity: int) -> None:
    cfg = MODELS[name]
    assert cost.attention_flops_parity(cfg) == parity
    assert cost.flops_per_token(cfg, parity).attention_share >= 0.5
    assert cost.flops_per_token(cfg, parity - 1).attention_share < 0.5


def test_attention_share_grows_with_context_and_training_triples_both_parts() -> None:
    cfg = MODELS["gpt2-small"]
    shares = [cost.flops_per_token(cfg, n).attention_share for n in (0, 1024, 8192, 65536)]
    assert shares[0] == 0.0
    assert shares == sorted(shares) and shares[-1] > 0.9
    forward, training = (
        cost.flops_per_token(cfg, 1024),
        cost.flops_per_token(cfg, 1024, training=True),
    )
    assert (training.weights, training.attention) == (3 * forward.weights, 3 * forward.attention)
    assert training.attention_share == forward.attention_share


@pytest.mark.parametrize("name", ["gpt2-small", "gpt2-xl", "gpt3-175b"])
def test_training_flops_agree_with_nanogpt_estimate_mfu(name: str) -> None:
    """nanoGPT: 6 N + 12 L H Q T per token, N all parameters but the position table.

    Its N also holds biases and LayerNorms (O(d) per layer), which we leave out: within 0.1%.
    """
    cfg = MODELS[name]
    seq_len = cfg.max_seq_len
    n_params = transformer_parameter_count(cfg) - cfg.max_seq_len * cfg.embed_dim
    nanogpt = 6 * n_params + 12 * cfg.n_layers * cfg.n_heads * cfg.head_dim * seq_len
    ours = cost.flops_per_token(cfg, seq_len, training=True).total
    assert ours == pytest.approx(nanogpt, rel=1e-3)
    assert ours < nanogpt  # the left-out biases and LayerNorms


def test_flops_relate_to_kaplans_table_1() -> None:
    """Kaplan: C_forward = 2N + 2 n_layer n_ctx d_attn, N = 12 n_layer d^2, head left out."""
    cfg = MODELS["gpt3-xl"]
    d, layers = cfg.embed_dim, cfg.n_layers
    flops = cost.flops_per_token(cfg, 2048)
    assert flops.weights - 2 * cfg.vocab_size * d == 2 * 12 * layers * d**2
    assert flops.attention == 2 * (2 * layers * 2048 * d)  # the full matrix: twice the causal half


def test_flops_refuse_bad_lengths() -> None:
    with pytest.raises(ValueError, match=r"seq_len must be an integer >= 0, got -5"):
        cost.flops_per_token(MODELS["gpt2-small"], -5)
    with pytest.raises(TypeError, match=r"seq_len must be an integer >= 0, got 1024.0"):
        cost.flops_per_token(MODELS["gpt2-small"], 1024.0)  # type: ignore[arg-type]
    assert cost.flops_per_token(MODELS["gpt2-small"], np.int16(1024)) == cost.flops_per_token(
        MODELS["gpt2-small"], 1024
    )


def test_kaplans_count_leaves_out_the_head_and_half_the_matrix() -> None:
    """Kaplan et al.'s C_forward = 2N + 2 n_layer n_ctx d_attn with N = 12 n_layer d^2."""
    cfg = MODELS["gpt2-small"]
    kaplan = cost.flops_per_token(cfg, 1024, convention="kaplan")
    assert kaplan.weights == 2 * 12 * 12 * 768**2 == 169_869_312
    assert kaplan.attention == 2 * 12 * 1024 * 768 == 18_874_368
    assert f"{kaplan.attention_share:.1%}" == "10.0%"
    assert f"{cost.flops_per_token(cfg, 1024).attention_share:.1%}" == "13.3%"
    palm = cost.flops_per_token(cfg, 1024, convention="palm")
    assert palm == cost.flops_per_token(cfg, 1024)  # the default
    assert palm.attention == 2 * kaplan.attention
    assert palm.weights - kaplan.weights == 2 * cfg.vocab_size * cfg.embed_dim  # the head
    assert cost.flops_per_token(cfg, 1024, training=True, convention="kaplan").weights == (
        3 * kaplan.weights
    )


@pytest.mark.parametrize(
    ("name", "parity"),
    [("gpt2-small", 12 * 768), ("gpt3-175b", 12 * 12_288)],  # 2 L n d >= 24 L d^2: n = 12 d
)
def test_kaplans_parity_is_twelve_widths(name: str, parity: int) -> None:
    cfg = MODELS[name]
    assert cost.attention_flops_parity(cfg, convention="kaplan") == parity
    assert cost.flops_per_token(cfg, parity, convention="kaplan").attention_share == 0.5
    assert cost.flops_per_token(cfg, parity - 1, convention="kaplan").attention_share < 0.5


def test_flops_of_a_banded_layer_stop_growing_at_the_window() -> None:
    cfg = MODELS["gpt3-175b"]
    banded = [cost.flops_per_token(cfg, n, window=256).attention for n in (128, 256, 2048, 65_536)]
    assert banded[0] * 2 == banded[1] == banded[2] == banded[3]
    assert banded[1] == cost.flops_per_token(cfg, 256).attention  # within the window: as dense
    assert (
        cost.flops_per_token(cfg, 2048, window=256).weights
        == cost.flops_per_token(cfg, 2048).weights
    )


def test_flops_refuse_an_unknown_convention() -> None:
    with pytest.raises(
        ValueError, match=r"convention must be 'palm' or 'kaplan', got 'chinchilla'"
    ):
        cost.flops_per_token(MODELS["gpt2-small"], 1024, convention="chinchilla")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"convention must be 'palm' or 'kaplan', got 'PaLM'"):
        cost.attention_flops_parity(MODELS["gpt2-small"], convention="PaLM")  # type: ignore[arg-type]


def test_grouped_query_attention_narrows_the_keys_and_their_weight_flops() -> None:
    cfg = MODELS["gpt2-small"]
    assert cost.kv_width(cfg) == 768 and cost.kv_width(cfg, kv_heads=12) == 768
    assert cost.kv_width(cfg, kv_heads=1) == 64  # multi-query attention: one head of 64
    full, one = cost.flops_per_token(cfg, 1024), cost.flops_per_token(cfg, 1024, kv_heads=1)
    # the key and value projections shrink from 2 d^2 to 2 d k in each of 12 layers
    assert full.weights - one.weights == 2 * 12 * 2 * 768 * (768 - 64)
    assert full.attention == one.attention  # every query head still meets every key
    assert cost.flops_per_token(cfg, 1024, kv_heads=12) == full


@pytest.mark.parametrize(
    ("kv_heads", "error", "message"),
    [
        (5, ValueError, r"kv_heads must divide n_heads 12 \(one of \[1, 2, 3, 4, 6, 12\]\), got 5"),
        (0, ValueError, r"kv_heads must be in \[1, 12\], got 0"),
        (13, ValueError, r"kv_heads must be in \[1, 12\], got 13"),
        (2.0, TypeError, r"kv_heads must be an integer in \[1, 12\], got 2.0"),
    ],
)
def test_kv_width_refuses_a_group_count_that_does_not_divide_the_heads(
    kv_heads: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        cost.kv_width(MODELS["gpt2-small"], kv_heads)  # type: ignore[arg-type]
