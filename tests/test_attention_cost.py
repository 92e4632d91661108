"""Attention score memory: the formula, and the numpy measurement that should agree with it."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from gptembed import (
    MODELS,
    FlopsPerToken,
    attention_probs,
    attention_scores_bytes,
    flops_per_token,
    measure_attention_scores_peak,
    naive_attention_probs,
    softmax_statistics_bytes,
)


def test_flops_made_by_hand_are_checked() -> None:
    """FlopsPerToken with no weight FLOPs (its share divided by zero) or negative ones: refused."""
    with pytest.raises(ValueError, match="weights must be an integer >= 1, got 0"):
        FlopsPerToken(weights=0, attention=0)
    with pytest.raises(ValueError, match="attention must be an integer >= 0, got -1"):
        FlopsPerToken(weights=1, attention=-1)
    assert FlopsPerToken(weights=3, attention=1).attention_share == 0.25


def test_formula_at_gpt2_small() -> None:
    cfg = MODELS["gpt2-small"]
    mib, gib = 2**20, 2**30
    assert attention_scores_bytes(1024, cfg.n_heads) == 48 * mib
    assert attention_scores_bytes(1024, cfg.n_heads, n_layers=cfg.n_layers) == 576 * mib
    assert attention_scores_bytes(8192, cfg.n_heads) == 3 * gib
    assert attention_scores_bytes(1024, 12, bytes_per_element=2) == 24 * mib


def test_formula_is_quadratic_and_linear_in_the_rest() -> None:
    base = attention_scores_bytes(1000, 3)
    assert attention_scores_bytes(2000, 3) == 4 * base
    assert (
        attention_scores_bytes(1000, 3, n_layers=5, batch_size=7, bytes_per_element=8)
        == base * 5 * 7 * 2
    )
    assert attention_scores_bytes(0, 3) == 0


def test_formula_does_not_overflow() -> None:
    assert attention_scores_bytes(2**31, 96, n_layers=96) == 96 * 96 * 2**62 * 4


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
        attention_scores_bytes(**args)


def test_probs_are_a_softmax_and_match_the_naive_version() -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 50, 16))
    probs = attention_probs(q.copy(), k)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(probs, naive_attention_probs(q, k), rtol=1e-12)
    scores = q @ k.T / 4.0
    np.testing.assert_allclose(
        probs, np.exp(scores) / np.exp(scores).sum(-1, keepdims=True), rtol=1e-10
    )


@pytest.mark.parametrize("n", [256, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_measured_peak_agrees_with_formula(dtype: type, n: int) -> None:
    formula = attention_scores_bytes(n, n_heads=1, bytes_per_element=np.dtype(dtype).itemsize)
    measured = measure_attention_scores_peak(n, dtype=dtype)
    assert formula <= measured <= 1.1 * formula
    # scores, exp(scores - max) and the normalised result are alive at once: three (n, n) arrays
    assert measure_attention_scores_peak(n, dtype=dtype, naive=True) >= 3 * formula


@pytest.mark.parametrize("fn", [attention_probs, naive_attention_probs])
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
        measure_attention_scores_peak(64, dtype=dtype)  # type: ignore[arg-type]


@pytest.mark.parametrize("fn", [attention_probs, naive_attention_probs])
def test_probs_of_a_batch_are_each_heads_probs(fn: Callable[..., np.ndarray]) -> None:
    """3-D inputs once gave a wrong shape: k.T reversed every axis, not the last two."""
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 7, 8))  # (B, H, n|m, d)
    probs = fn(q, k)
    assert probs.shape == (2, 3, 5, 7)
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(probs[b, h], fn(q[b, h], k[b, h]), rtol=1e-12)


@pytest.mark.parametrize("fn", [attention_probs, naive_attention_probs])
def test_probs_of_no_queries_and_of_lists(fn: Callable[..., np.ndarray]) -> None:
    assert fn(np.ones((0, 4)), np.ones((3, 4))).shape == (0, 3)
    assert fn(np.ones((0, 4)), np.ones((0, 4))).shape == (0, 0)
    lists = fn([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_array_equal(lists, fn(np.array([[1.0, 0.0]]), np.eye(2)))


@pytest.mark.parametrize("fn", [attention_probs, naive_attention_probs])
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


@pytest.mark.parametrize("fn", [attention_probs, naive_attention_probs])
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
        flops_per_token(MODELS["gpt2-small"], 8, training=value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^naive must be True or False, got"):
        measure_attention_scores_peak(8, naive=value)  # type: ignore[arg-type]


def test_numpy_bools_are_bools() -> None:
    config = MODELS["gpt2-small"]
    assert flops_per_token(config, 8, training=np.bool_(True)) == flops_per_token(config, 8, True)
    assert measure_attention_scores_peak(8, naive=np.bool_(False)) > 0


def test_a_banded_layer_keeps_window_scores_per_query() -> None:
    dense = attention_scores_bytes(2048, 96, n_layers=48, bytes_per_element=2)
    banded = attention_scores_bytes(2048, 96, n_layers=48, bytes_per_element=2, window=256)
    assert banded * 8 == dense  # 256 of 2,048 keys per query
    assert attention_scores_bytes(100, 2, window=256) == attention_scores_bytes(100, 2)
    assert attention_scores_bytes(10, 1, window=np.int64(3)) == 10 * 3 * 4
    with pytest.raises(ValueError, match=r"window must be an integer >= 1, got 0"):
        attention_scores_bytes(10, 1, window=0)
    with pytest.raises(TypeError, match=r"window must be an integer >= 1, got 2.5"):
        attention_scores_bytes(10, 1, window=2.5)  # type: ignore[arg-type]


def test_softmax_statistics_are_one_fp32_number_per_row() -> None:
    cfg = MODELS["gpt2-small"]
    per_row = softmax_statistics_bytes(1024, cfg.n_heads, cfg.n_layers, batch_size=3)
    assert per_row == 3 * 12 * 12 * 1024 * 4
    assert softmax_statistics_bytes(2048, 12) == 2 * softmax_statistics_bytes(1024, 12)
    # n times fewer bytes than the fp32 scores it replaces
    assert attention_scores_bytes(1024, 12) == 1024 * softmax_statistics_bytes(1024, 12)
    assert softmax_statistics_bytes(0, 12) == 0
    with pytest.raises(ValueError, match=r"n_heads must be an integer >= 1, got 0"):
        softmax_statistics_bytes(10, 0)
    with pytest.raises(ValueError, match=r"seq_len must be an integer >= 0, got -1"):
        softmax_statistics_bytes(-1, 2)
